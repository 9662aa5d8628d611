"""Every Kubernetes version the settings accept plans cleanly."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from helpers.stacks import stack_config
from ultraserver.facts.pins import ami, charts, manifests
from ultraserver.offline import Plan


@pytest.mark.parametrize("version", sorted(ami.RELEASE_VERSIONS))
def test_each_pinned_version_plans(plan_with: Callable[..., Plan], version: str) -> None:
    cluster = {"name": "gb200-x72", "kubernetesVersion": version, "endpointPublicAccessCidrs": ["203.0.113.0/24"]}
    plan = plan_with("gb200-x72", {"cluster": cluster})
    versions = {r.inputs.get("version") for r in plan.resources if r.type == "eks:index:Cluster"}
    assert versions == {version}
    # Managed GPU groups take the pinned EKS AMI release of that version (no SSM lookup, no ImageId).
    (group,) = [r for r in plan.of_type("aws:eks/nodeGroup:NodeGroup") if not r.name.endswith("-system")]
    assert (group.inputs["amiType"], group.inputs["releaseVersion"]) == (ami.AMI_TYPE, ami.RELEASE_VERSIONS[version])


@pytest.mark.parametrize("version", [None, "0.4.0"])
def test_a_dra_driver_version_change_keeps_the_compute_domain_crds_declared_and_retained(
    plan_with: Callable[..., Plan], version: str | None
) -> None:
    kubernetes = dict(stack_config("gb200-x72-dra")["ultraserver-eks:kubernetes"])
    if version:
        kubernetes["draDriver"] = {**kubernetes.get("draDriver", {}), "version": version}
    plan = plan_with("gb200-x72-dra", {"kubernetes": json.dumps(kubernetes), "acceptUntestedVersions": "true"})
    (release,) = [r for r in plan.of_type("kubernetes:helm.sh/v3:Release") if r.name.endswith("-dra-driver")]
    assert release.inputs["version"] == (version or charts.pinned(charts.DRA_DRIVER).version)
    # The plan JSON records the options `pulumi up` acts on when a resource leaves the program.
    crds = [
        r
        for r in plan.to_json()["resources"]
        if r["type"] in ("ultraserver:index:PinnedManifest", "kubernetes:yaml/v2:ConfigGroup")
        and "-dra-driver-crd" in r["name"]
    ]
    assert len(crds) == 2 * len(manifests.DRA_DRIVER_CRDS)
    assert all(r["retainOnDelete"] is True and r["protect"] is False and r["ignoreChanges"] == [] for r in crds)
