"""Every manifest the toolkit builds validates: custom resources against the pinned CRD schemas, core objects
against Kubernetes 1.33 (strict)."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
from helpers.manifests import K8S_VERSION, as_pod, has_crd_fixture, pair_manifests, validate_custom
from helpers.stacks import ROOT, STACKS, stack_config
from ultraserver.builders.compute_domain import compute_domain_pod_pieces
from ultraserver.builders.efa_check import EfaCheckArgs, efa_mpijob_manifest
from ultraserver.builders.mpijob import namespace_manifest
from ultraserver.builders.nvbandwidth_job import NvbandwidthJobArgs, mpijob_manifest
from ultraserver.config.views import ImexTarget
from ultraserver.facts.hardware import devices
from ultraserver.facts.hardware.devices import NodeDevices
from ultraserver.facts.kubernetes import eks_versions
from ultraserver.offline import run_plan
from ultraserver.policy.workloads import pod_sets
from ultraserver.resources.compute_domain import ComputeDomainArgs, compute_domain_manifest
from ultraserver.resources.imex_check import ImexCheckArgs, job_args

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
    for manifest in pair_manifests(args):
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
    kubernetes_validate.validate(namespace_manifest(args.namespace), K8S_VERSION, strict=True)
    for job in job_args(args):
        for manifest in pair_manifests(job):
            validate_custom(manifest)


@pytest.mark.parametrize("stack", STACKS)
def test_every_kubernetes_object_a_shipped_stack_declares_validates(shipped_plan: Any, stack: str) -> None:
    """Objects as recorded in the stack's plan: custom resources against the pinned CRDs, the rest and the pods of
    every job against the schemas of the stack's own Kubernetes version."""
    config = stack_config(stack)
    version = (config.get("ultraserver-eks:cluster") or {}).get("kubernetesVersion") or eks_versions.DEFAULT_TEXT
    separate = (config.get("ultraserver-eks:kubernetes") or {}).get("layer") == "separate-stack"
    plan = run_plan(ROOT / "kubernetes-layer", stack) if separate else shipped_plan(stack)
    declared = [r for r in plan.resources if r.custom and r.type.startswith("kubernetes:") and "apiVersion" in r.inputs]
    kinds = {r.inputs["kind"] for r in declared}
    assert {"ComputeDomain", "MPIJob", "Namespace", "CronJob", "ClusterRoleBinding"} <= kinds
    assert {"Topology", "ResourceFlavor", "ClusterQueue", "LocalQueue"} <= kinds
    for resource in declared:
        fields = (
            "apiVersion",
            "kind",
            "metadata",
            "spec",
            "data",
            "rules",
            "roleRef",
            "subjects",
            "value",
            "description",
        )
        manifest = {k: v for k, v in resource.inputs.items() if k in fields}
        if has_crd_fixture(manifest):
            validate_custom(manifest)
        else:
            kubernetes_validate.validate(manifest, version, strict=True)
        for index, (_, template) in enumerate(pod_sets(manifest.get("kind"), manifest.get("spec") or {})):
            pod = as_pod(template, f"{resource.name}-{index}", manifest["metadata"].get("namespace", "default"))
            kubernetes_validate.validate(pod, version, strict=True)


@pytest.mark.parametrize("version", ["1.34", "1.35", "1.36"])
def test_the_drivers_channel_claim_template_is_valid_resource_k8s_io_v1(version: str) -> None:
    """The channel template as the DRA driver creates it (facts.hardware.devices.channel_claim_spec) is a valid v1
    object from
    1.34 on; 1.33 has no resource.k8s.io/v1 at all."""
    template = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "cd-channel", "namespace": "ml"},
        "spec": {"spec": devices.channel_claim_spec()},
    }
    kubernetes_validate.validate(template, version, strict=True)
    with pytest.raises(kubernetes_validate.SchemaNotFoundError):
        kubernetes_validate.validate(template, eks_versions.FLOOR_TEXT, strict=True)


EFA_JOBS = [
    EfaCheckArgs(
        node_groups=["fleet"],
        node_devices=NodeDevices(
            "p6e-gb200.36xlarge",
            4,
            (1, 1, 1, 1),
        ),
        min_bus_bandwidth_gbps=800.0,
        launcher_node_selector={"r": "s"},
    ),
    EfaCheckArgs(
        node_groups=["a", "b"],
        node_devices=NodeDevices(
            "p6e-gb200.36xlarge",
            4,
            (2, 2, 2, 2),
        ),
        min_bus_bandwidth_gbps=900.0,
        ultraservers=3,
        nodes_per_ultraserver=2,
    ),
]


@pytest.mark.parametrize("args", EFA_JOBS, ids=lambda a: f"{a.ultraservers}x{a.nodes_per_ultraserver}")
def test_efa_check_mpijob_matches_the_crd_and_its_pods_are_valid(args: EfaCheckArgs) -> None:
    job = efa_mpijob_manifest(args)
    validate_custom(job)
    kubernetes_validate.validate(namespace_manifest(args.namespace), K8S_VERSION, strict=True)
    for role in ("Launcher", "Worker"):
        template = job["spec"]["mpiReplicaSpecs"][role]["template"]
        kubernetes_validate.validate(
            as_pod(template, f"{args.name}-{role.lower()}", args.namespace), K8S_VERSION, strict=True
        )
