"""Every Kubernetes version the settings accept plans cleanly (issue 10 item 9)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from ultraserver.facts import ami
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
