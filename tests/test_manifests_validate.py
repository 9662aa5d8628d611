"""Every manifest the toolkit builds validates: custom resources against the pinned CRD schemas, core objects
against Kubernetes 1.33 (strict)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
from conftest import STACKS
from ultraserver.builders.compute_domain import compute_domain_pod_pieces
from ultraserver.builders.nvbandwidth_job import NvbandwidthJobArgs, mpijob_manifest, nvbandwidth_manifests
from ultraserver.components.compute_domain import ComputeDomainArgs, compute_domain_manifest
from ultraserver.components.imex_check import ImexCheckArgs, job_args, namespace_manifest
from ultraserver.config.views import ImexTarget

CRDS = Path(__file__).parent / "fixtures" / "crds"
K8S_VERSION = "1.33"


def crd(name: str) -> dict[str, Any]:
    """One CRD fixture written by scripts/regen_upstream_fixtures.py."""
    return json.loads((CRDS / f"{name}.json").read_text())


def strict(schema: Any) -> Any:
    """The schema with unknown fields rejected, as `kubectl --validate=strict` does (the API server would
    silently prune them, so a misspelt field would be lost without an error)."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) if k not in ("properties", "enum", "default") else v for k, v in schema.items()}
    if "properties" in schema:
        out["properties"] = {name: strict(sub) for name, sub in schema["properties"].items()}
        if "additionalProperties" not in schema and not schema.get("x-kubernetes-preserve-unknown-fields"):
            out["additionalProperties"] = False
    return out


def validate_custom(manifest: dict[str, Any]) -> None:
    """Validate a custom resource against the CRD fixture of its kind and version."""
    fixtures = [crd(p.stem) for p in CRDS.glob("*.json")]
    group, version = manifest["apiVersion"].split("/")
    (match,) = [f for f in fixtures if (f["group"], f["version"], f["kind"]) == (group, version, manifest["kind"])]
    jsonschema.validate(manifest, strict(match["openAPIV3Schema"]))


def as_pod(template: dict[str, Any], name: str, namespace: str) -> dict[str, Any]:
    """A pod template wrapped as the Pod the controller would create from it."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, **template.get("metadata", {})},
        "spec": template["spec"],
    }


JOBS = [
    NvbandwidthJobArgs(name="nvbandwidth-us0", namespace="imex-check"),
    NvbandwidthJobArgs(
        name="nvbandwidth-us1",
        namespace="imex-check",
        nodes=18,
        max_nodes=18,
        worker_node_selector={"eks.amazonaws.com/nodegroup": "us1"},
        launcher_node_selector={"eks.amazonaws.com/nodegroup": "system"},
    ),
]


@pytest.mark.parametrize("args", JOBS, ids=lambda a: a.name)
def test_nvbandwidth_manifests_match_the_crds(args: NvbandwidthJobArgs) -> None:
    for manifest in nvbandwidth_manifests(args):
        validate_custom(manifest)


@pytest.mark.parametrize("mode", ["Single", "All"])
def test_compute_domain_matches_the_crd(mode: str) -> None:
    validate_custom(compute_domain_manifest(ComputeDomainArgs(name="cd", num_nodes=2, allocation_mode=mode)))


def test_schema_check_is_live() -> None:
    domain = compute_domain_manifest(ComputeDomainArgs(name="cd"))
    broken = copy.deepcopy(domain)
    broken["spec"]["channel"]["allocationMode"] = "Many"
    with pytest.raises(jsonschema.ValidationError):
        validate_custom(broken)
    job = mpijob_manifest(JOBS[0])
    broken_job = copy.deepcopy(job)
    broken_job["spec"]["mpiImplementation"] = "OpenMPl"
    with pytest.raises(jsonschema.ValidationError):
        validate_custom(broken_job)
    misspelt = copy.deepcopy(job)
    misspelt["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["tolerration"] = []
    with pytest.raises(jsonschema.ValidationError, match="tolerration"):
        validate_custom(misspelt)


@pytest.mark.parametrize("args", JOBS, ids=lambda a: a.name)
@pytest.mark.parametrize("role", ["Launcher", "Worker"])
def test_mpijob_pods_are_valid_kubernetes_pods(args: NvbandwidthJobArgs, role: str) -> None:
    template = mpijob_manifest(args)["spec"]["mpiReplicaSpecs"][role]["template"]
    kubernetes_validate.validate(
        as_pod(template, f"{args.name}-{role.lower()}-0", args.namespace), K8S_VERSION, strict=True
    )


def test_pod_with_compute_domain_pieces_is_valid() -> None:
    labels = {"app": "trainer"}
    pieces = compute_domain_pod_pieces(ComputeDomainArgs(name="cd", namespace="ml"), labels)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "trainer-0", "namespace": "ml", "labels": labels},
        "spec": {
            "affinity": pieces.affinity,
            "resourceClaims": [pieces.resource_claim],
            "containers": [{"name": "main", "image": "busybox", "resources": {"claims": [pieces.container_claim]}}],
        },
    }
    kubernetes_validate.validate(pod, K8S_VERSION, strict=True)


def test_core_validation_is_live() -> None:
    template = mpijob_manifest(JOBS[0])["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    pod = as_pod(template, "w", "imex-check")
    pod["spec"]["resourceClaims"][0]["templateName"] = "typo"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(pod, K8S_VERSION, strict=True)


def test_imex_check_namespace_and_jobs_validate() -> None:
    args = ImexCheckArgs(targets=[ImexTarget("us0", {"us": "0"}, 9)], nodes=9, launcher_node_selector={"r": "s"})
    kubernetes_validate.validate(namespace_manifest(args), K8S_VERSION, strict=True)
    for job in job_args(args):
        for manifest in nvbandwidth_manifests(job):
            validate_custom(manifest)


@pytest.mark.parametrize("stack", STACKS)
def test_every_kubernetes_object_a_shipped_stack_declares_validates(shipped_plan: Any, stack: str) -> None:
    """Objects as recorded in the stack's plan: custom resources against the pinned CRDs, the rest against 1.33."""
    declared = [
        r
        for r in shipped_plan(stack).resources
        if r.custom and r.type.startswith("kubernetes:") and "apiVersion" in r.inputs
    ]
    kinds = {r.inputs["kind"] for r in declared}
    assert {"ComputeDomain", "MPIJob", "Namespace"} <= kinds
    for resource in declared:
        manifest = {k: v for k, v in resource.inputs.items() if k in ("apiVersion", "kind", "metadata", "spec")}
        if resource.inputs["kind"] in ("ComputeDomain", "MPIJob"):
            validate_custom(manifest)
        else:
            kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
