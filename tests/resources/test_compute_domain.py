"""ComputeDomain manifest, the pod pieces that join it, and its Pulumi component."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s
import pytest
from helpers.plan_lookup import one
from ultraserver.builders.compute_domain import CLIQUE_LABEL, compute_domain_pod_pieces
from ultraserver.offline import record
from ultraserver.problems import ConfigError
from ultraserver.resources.compute_domain import ComputeDomain, ComputeDomainArgs, compute_domain_manifest


def test_manifest_defaults_to_an_elastic_single_channel_domain() -> None:
    manifest = compute_domain_manifest(ComputeDomainArgs(name="train", namespace="ml"))
    assert manifest["apiVersion"] == "resource.nvidia.com/v1beta1"
    assert manifest["kind"] == "ComputeDomain"
    assert manifest["metadata"] == {"name": "train", "namespace": "ml"}
    assert manifest["spec"] == {
        "numNodes": 0,
        "channel": {"resourceClaimTemplate": {"name": "train-channel"}, "allocationMode": "Single"},
    }


def test_manifest_keeps_explicit_settings() -> None:
    args = ComputeDomainArgs(name="cd", num_nodes=4, allocation_mode="All", claim_template_name="rct")
    spec = compute_domain_manifest(args)["spec"]
    assert spec["numNodes"] == 4
    assert spec["channel"] == {"resourceClaimTemplate": {"name": "rct"}, "allocationMode": "All"}


def test_every_bad_field_is_reported() -> None:
    args = ComputeDomainArgs(name="Bad_Name", namespace="x" * 64, num_nodes=-1, allocation_mode="Many")
    with pytest.raises(ConfigError) as err:
        compute_domain_manifest(args)
    fields = [p.split(":")[0] for p in [str(p) for p in err.value.items]]
    assert fields == [
        "compute_domain.name",
        "compute_domain.claim_template_name",
        "compute_domain.namespace",
        "compute_domain.num_nodes",
        "compute_domain.allocation_mode",
    ]
    assert "compute_domain.allocation_mode: got 'Many'; allowed: one of Single, All" in str(err.value)


def test_pod_pieces_link_claim_container_and_clique() -> None:
    labels = {"app": "trainer", "role": "worker"}
    pieces = compute_domain_pod_pieces(ComputeDomainArgs(name="cd"), labels, claim_name="imex")
    assert pieces.resource_claim == {"name": "imex", "resourceClaimTemplateName": "cd-channel"}
    assert pieces.container_claim == {"name": pieces.resource_claim["name"]}
    (term,) = pieces.affinity["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == CLIQUE_LABEL == "nvidia.com/gpu.clique"
    selected = {e["key"]: e["values"] for e in term["labelSelector"]["matchExpressions"]}
    assert selected == {"app": ["trainer"], "role": ["worker"]}
    assert all(e["operator"] == "In" for e in term["labelSelector"]["matchExpressions"])


def test_pod_pieces_need_labels() -> None:
    with pytest.raises(ConfigError, match="pod_labels"):
        compute_domain_pod_pieces(ComputeDomainArgs(name="cd"), {})


def test_component_creates_the_custom_resource_after_its_dependencies() -> None:
    provider: list[k8s.Provider] = []
    domain: list[ComputeDomain] = []

    def program() -> None:
        provider.append(k8s.Provider("k8s", kubeconfig="{}"))
        dra = pulumi.CustomResource("kubernetes:helm.sh/v3:Release", "dra", {})
        domain.append(
            ComputeDomain(
                "cd",
                ComputeDomainArgs(name="job-cd", namespace="ml"),
                pulumi.ResourceOptions(providers=[provider[0]], depends_on=[dra]),
            )
        )

    recorded = record(program)
    resource = one(recorded, "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain")
    assert resource.inputs["spec"]["channel"]["resourceClaimTemplate"]["name"] == "job-cd-channel"
    assert resource.inputs["metadata"] == {"name": "job-cd", "namespace": "ml"}
    assert resource.dependencies == [one(recorded, "kubernetes:helm.sh/v3:Release", "dra").urn]
    assert domain[0].resource.get_provider(resource.type) is provider[0]
    assert one(recorded, "ultraserver:index:ComputeDomain").dependencies == resource.dependencies
