"""Kueue 0.19.2's topology-aware placement (TAS), replayed over the DRA-mode checks and the example job.

TAS sizes a pod from its pod spec's requests and never sees DRA claims (facts/hardware/allocatable.py cites the Kueue
lines):
a whole-node pod that requests only claims could be placed on a node beside another one, where one of them waits for
devices for good. The toolkit's whole-node pods request a CPU share that fits a node once; these tests fail when that
request goes missing or stops fitting exactly once.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import pytest
from helpers.stacks import ROOT, STACKS, stack_config
from ultraserver.facts.hardware import allocatable, devices
from ultraserver.facts.hardware.instances import GB200_INSTANCE_TYPE
from ultraserver.facts.kubernetes.kueue_admission import PodSet, Queue, Workload, placement_problems
from ultraserver.offline import Plan, run_plan
from ultraserver.policy import PlanResource, evaluate
from ultraserver.policy.kueue import check_kueue_placement, pod_requests, queued_workloads

RULE = "kueue-tas-placement"
TRAINING = ROOT / "examples" / "compute-domain-job"
DRA_STACKS = [
    s for s in STACKS if (stack_config(s).get("ultraserver-eks:kubernetes") or {}).get("devices") == devices.DRA
]


@pytest.fixture(scope="module")
def training_dra() -> Plan:
    return run_plan(TRAINING, "dev", {"ultraserver-example-training:devices": devices.DRA})


def dra_resources(stack: str, shipped_plan: Callable[[str], Plan], training_dra: Plan) -> list[PlanResource]:
    return [*shipped_plan(stack).resources, *training_dra.resources]


def whole_node_containers(resources: list[PlanResource]) -> Iterator[dict[str, Any]]:
    """Every container of a topology-aware pod template with a claim (in place: the caller's copies)."""
    for r in resources:
        for pod in _templates(r.inputs.get("spec") or {}):
            annotations = (pod.get("metadata") or {}).get("annotations") or {}
            if any(a.endswith("-topology") for a in annotations) and pod["spec"].get("resourceClaims"):
                yield from pod["spec"]["containers"]


def _templates(spec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if isinstance(spec.get("template"), dict):
        yield spec["template"]
    for replica in (spec.get("mpiReplicaSpecs") or {}).values():
        yield replica["template"]


def with_cpu(resources: list[PlanResource], cpu: str | None) -> list[PlanResource]:
    """The resources with every whole-node container's CPU request replaced (None removes it)."""
    out = []
    for r in resources:
        inputs = copy.deepcopy(r.inputs)
        for container in whole_node_containers([replace(r, inputs=inputs)]):
            requests = container["resources"].setdefault("requests", {})
            requests.pop("cpu", None)
            if cpu is not None:
                requests["cpu"] = cpu
            if not requests:
                del container["resources"]["requests"]
        out.append(replace(r, inputs=inputs))
    return out


def test_a_dra_mode_stack_ships() -> None:
    assert DRA_STACKS


@pytest.mark.parametrize("stack", DRA_STACKS)
def test_every_topology_aware_whole_node_pod_set_fits_once_per_node(
    stack: str, shipped_plan: Callable[[str], Plan], training_dra: Plan
) -> None:
    resources = dra_resources(stack, shipped_plan, training_dra)
    judged = [
        ps
        for _, _, w in queued_workloads(resources)
        for ps in w.pod_sets
        if ps.topology and ps.claim_templates and "cpu" in ps.requests
    ]
    # Not vacuous: the IMEX and NCCL checks and the example job each have a topology-aware pod set with claims.
    assert len(judged) >= 3
    assert check_kueue_placement(resources, {}) == []
    assert not [v for v in evaluate(resources) if v.policy == RULE]


@pytest.mark.parametrize("stack", DRA_STACKS)
def test_without_the_cpu_share_every_queued_whole_node_job_is_refused(
    stack: str, shipped_plan: Callable[[str], Plan], training_dra: Plan
) -> None:
    resources = with_cpu(dra_resources(stack, shipped_plan, training_dra), None)
    found = check_kueue_placement(resources, {})
    topology_aware = {r.urn for r, _, w in queued_workloads(resources) if any(ps.topology for ps in w.pod_sets)}
    assert {p.key for p in found} == topology_aware and len(found) >= 3
    assert all("requests only DRA claims" in str(p) for p in found)
    assert [v for v in evaluate(resources) if v.policy == RULE]


@pytest.mark.parametrize("stack", DRA_STACKS)
@pytest.mark.parametrize("requests", [{"memory": "500Gi"}, {"ephemeral-storage": "1Ti"}])
def test_a_whole_node_pod_set_requesting_only_memory_or_storage_is_refused(
    stack: str, requests: dict[str, str], shipped_plan: Callable[[str], Plan], training_dra: Plan
) -> None:
    """Memory or ephemeral storage alone: TAS still packs several such pods per node."""
    resources = with_cpu(dra_resources(stack, shipped_plan, training_dra), None)
    for r in resources:
        for container in whole_node_containers([r]):
            container.setdefault("resources", {}).setdefault("requests", {}).update(requests)
    found = check_kueue_placement(resources, {})
    (name,) = requests
    assert len(found) >= 3 and all(f"requests only {name} and DRA claims" in str(p) for p in found)


@pytest.mark.parametrize("stack", DRA_STACKS)
@pytest.mark.parametrize(("share", "per_node"), [(0.5, 2), (0.25, 4), (1.01, 0)])
def test_a_cpu_request_that_fits_a_node_twice_or_never_is_refused(
    stack: str, share: float, per_node: int, shipped_plan: Callable[[str], Plan], training_dra: Plan
) -> None:
    node = allocatable.allocatable_cpu_millicores(GB200_INSTANCE_TYPE)
    assert node is not None
    cpu = f"{int(node * share)}m"
    found = check_kueue_placement(with_cpu(dra_resources(stack, shipped_plan, training_dra), cpu), {})
    assert found and all(f"{per_node} whole-node pods per {GB200_INSTANCE_TYPE} node" in str(p) for p in found)


@pytest.mark.parametrize("stack", STACKS)
def test_device_plugin_and_dra_stacks_pass(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    assert check_kueue_placement(shipped_plan(stack).resources, {}) == []


def test_the_share_is_above_half_the_allocatable_and_within_it() -> None:
    node = allocatable.allocatable_cpu_millicores(GB200_INSTANCE_TYPE)
    share = allocatable.whole_node_cpu_millicores(GB200_INSTANCE_TYPE)
    assert node is not None and share is not None
    assert node / 2 < share <= node
    assert node // share == 1


@pytest.mark.parametrize(("vcpus", "reserved"), [(1, 60), (2, 70), (4, 80), (8, 90), (16, 110), (144, 430)])
def test_kube_reserved_cpu_is_nodeadms_banded_formula(vcpus: int, reserved: int) -> None:
    # 6% of the first core, 1% of the second, 0.5% of cores 3-4, 0.25% above (nodeadm getCPUMillicoresToReserve).
    assert allocatable.kube_reserved_cpu_millicores(vcpus) == reserved


@pytest.mark.parametrize(
    ("quantity", "millicores"), [(2, 2000), ("500m", 500), ("1.5", 1500), ("0.0001", 1), ("1k", 1000000)]
)
def test_cpu_quantities(quantity: object, millicores: int) -> None:
    assert allocatable.cpu_millicores(quantity) == millicores


@pytest.mark.parametrize("quantity", ["", "abc", "NaN", "-1", True, None, "1Gi"])
def test_what_is_not_a_cpu_quantity(quantity: object) -> None:
    assert allocatable.cpu_millicores(quantity) is None


def test_requests_default_to_limits_and_sum_over_containers() -> None:
    pod = {
        "containers": [
            {"resources": {"limits": {"cpu": "2", "memory": "1Gi"}}},
            {"resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "4"}}},
        ]
    }
    assert pod_requests(pod) == {"cpu": "2500m", "memory": "1Gi"}


def test_a_pod_set_without_a_topology_or_without_claims_is_not_judged() -> None:
    workload = Workload(
        "Job ns/j", "ns", (PodSet("plain", 3, ("t",)), PodSet("cpu-only", 3, (), topology=True, requests={}))
    )
    assert placement_problems(workload, {}, Queue({}, {}, GB200_INSTANCE_TYPE)) == []


def test_a_partial_node_claim_may_share_a_node() -> None:
    partial = {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": devices.GPU_DEVICE_CLASS}}]}}
    workload = Workload("Job ns/j", "ns", (PodSet("w", 4, ("t",), topology=True, requests={"cpu": "1"}),))
    assert placement_problems(workload, {("ns", "t"): partial}, Queue({}, {}, GB200_INSTANCE_TYPE)) == []
