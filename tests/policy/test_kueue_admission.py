"""Kueue 0.19.2's admission decision, replayed offline over every shipped stack's jobs and the example job.

A queued job whose claim template uses a DeviceClass Kueue cannot map is inadmissible (pkg/dra/claims.go); the
toolkit's own IMEX check and the example training job claim a ComputeDomain channel, so these tests fail when the
mapping, its quota or the 1.33 gates go missing.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.stacks import ROOT, STACKS, stack_config
from ultraserver.facts.hardware import devices
from ultraserver.facts.kubernetes import kueue
from ultraserver.facts.kubernetes.kueue_admission import PodSet, Queue, Workload, admission_problems, devices_per_class
from ultraserver.offline import Plan, run_plan
from ultraserver.policy import PlanResource, evaluate
from ultraserver.policy.kueue import check_kueue_admission, claim_templates, kueue_configuration, queued_workloads

RULE = "kueue-dra-admission"
RELEASE = "kubernetes:helm.sh/v3:Release"
TRAINING = ROOT / "examples" / "compute-domain-job"


def kubernetes_plan(stack: str, shipped_plan: Callable[[str], Plan]) -> Plan:
    """The plan that holds the stack's Kueue: the stack itself, or kubernetes-layer/ for a separate-stack layer."""
    plan = shipped_plan(stack)
    if kueue_configuration(plan.resources) is None:
        plan = run_plan(ROOT / "kubernetes-layer", stack)
    return plan


@pytest.fixture(scope="module")
def training() -> Plan:
    return run_plan(TRAINING, "dev")


@pytest.fixture(scope="module")
def training_dra() -> Plan:
    """The example job as it runs on a DRA-mode cluster: a device claim beside the channel claim."""
    return run_plan(TRAINING, "dev", {"ultraserver-example-training:devices": devices.DRA})


def device_mode(stack: str) -> str:
    """The shipped stack's kubernetes.devices (the default when unset)."""
    return str((stack_config(stack).get("ultraserver-eks:kubernetes") or {}).get("devices", devices.DEFAULT_MODE))


def example_for(stack: str, training: Plan, training_dra: Plan) -> Plan:
    """The example job in the stack's device mode."""
    return training_dra if device_mode(stack) == devices.DRA else training


def with_configuration(resources: list[PlanResource], edit: Callable[[dict[str, Any]], None]) -> list[PlanResource]:
    """The resources with the Kueue release's Configuration edited."""
    out = []
    for r in resources:
        if r.type == RELEASE and kueue_configuration([r]) is not None:
            inputs = copy.deepcopy(r.inputs)
            config = yaml.safe_load(inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
            edit(config)
            inputs["values"]["managerConfig"]["controllerManagerConfigYaml"] = yaml.safe_dump(config)
            r = replace(r, inputs=inputs)
        out.append(r)
    return out


def unmapping(device_class: str) -> Callable[[dict[str, Any]], None]:
    """An edit of the Configuration that drops the mapping of one DeviceClass."""

    def edit(config: dict[str, Any]) -> None:
        mappings = config["resources"].get("deviceClassMappings") or []
        config["resources"]["deviceClassMappings"] = [m for m in mappings if device_class not in m["deviceClassNames"]]

    return edit


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_job_and_the_example_are_admissible(
    stack: str, shipped_plan: Callable[[str], Plan], training: Plan, training_dra: Plan
) -> None:
    resources = [*kubernetes_plan(stack, shipped_plan).resources, *example_for(stack, training, training_dra).resources]
    queued = queued_workloads(resources)
    # Not vacuous: the example job and at least one of the stack's own checks are queued with a channel claim.
    assert any(w.key.startswith("Job ") for _, _, w in queued)
    assert any(w.key.startswith("MPIJob ") for _, _, w in queued)
    assert all(any(ps.claim_templates for ps in w.pod_sets) for _, _, w in queued)
    assert check_kueue_admission(resources, {}) == []
    assert not [v for v in evaluate(resources) if v.policy == RULE]


@pytest.mark.parametrize("stack", STACKS)
def test_removing_the_channel_mapping_makes_every_queued_job_inadmissible(
    stack: str, shipped_plan: Callable[[str], Plan], training: Plan, training_dra: Plan
) -> None:
    example = example_for(stack, training, training_dra)
    resources = with_configuration(
        [*kubernetes_plan(stack, shipped_plan).resources, *example.resources], unmapping(devices.CHANNEL_DEVICE_CLASS)
    )
    found = check_kueue_admission(resources, {})
    assert len(found) == len(queued_workloads(resources)) > 0
    urns = {r.urn for r, _, _ in queued_workloads(resources)}
    assert all(p.key in urns and f"DeviceClass {devices.CHANNEL_DEVICE_CLASS} is not mapped" in str(p) for p in found)


DRA_STACKS = [s for s in STACKS if device_mode(s) == devices.DRA]


def test_a_dra_mode_stack_ships() -> None:
    assert DRA_STACKS


@pytest.mark.parametrize("stack", DRA_STACKS)
@pytest.mark.parametrize("device_class", [devices.GPU_DEVICE_CLASS, devices.EFA_DEVICE_CLASS])
def test_in_dra_mode_removing_a_device_mapping_makes_every_queued_job_inadmissible(
    stack: str, device_class: str, shipped_plan: Callable[[str], Plan], training_dra: Plan
) -> None:
    resources = [*kubernetes_plan(stack, shipped_plan).resources, *training_dra.resources]
    found = check_kueue_admission(with_configuration(resources, unmapping(device_class)), {})
    templates = claim_templates(resources)
    # Every job claiming the class; the IMEX check claims GPUs but no EFA device (it copies over NVLink only).
    claiming = {
        r.urn
        for r, _, w in queued_workloads(resources)
        if any(
            device_class in devices_per_class(templates[(w.namespace, t)])[0]
            for ps in w.pod_sets
            for t in ps.claim_templates
        )
    }
    assert {p.key for p in found} == claiming and len(claiming) >= (
        3 if device_class == devices.GPU_DEVICE_CLASS else 2
    )
    assert all(f"DeviceClass {device_class} is not mapped" in str(p) for p in found)


@pytest.mark.parametrize("stack", DRA_STACKS)
def test_in_dra_mode_the_queue_holds_the_stacks_gpus_and_efa_devices(
    stack: str, shipped_plan: Callable[[str], Plan]
) -> None:
    plan = kubernetes_plan(stack, shipped_plan)
    (queue,) = [r for r in plan.resources if r.type.endswith(":ClusterQueue")]
    quota = {x["name"]: x["nominalQuota"] for x in queue.inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]}
    config = kueue_configuration(plan.resources)
    assert config is not None
    mapped = {c: m["name"] for m in config["resources"]["deviceClassMappings"] for c in m["deviceClassNames"]}
    nodes = quota[mapped[devices.CHANNEL_DEVICE_CLASS]]
    layout = stack_config(stack)["ultraserver-eks:gpuNodeGroups"][0]["efaLayout"]
    efa_per_node = {"one-per-nci-group": 4, "all-odd-cards": 8, "maximum": 16}[layout]
    assert quota[mapped[devices.GPU_DEVICE_CLASS]] == 4 * nodes > 0
    assert quota[mapped[devices.EFA_DEVICE_CLASS]] == efa_per_node * nodes
    # No quota for resources no DRA-mode node advertises.
    assert "vpc.amazonaws.com/efa" not in quota


def test_a_mapped_class_without_queue_quota_is_refused(shipped_plan: Callable[[str], Plan]) -> None:
    resources = []
    for r in shipped_plan("gb200-x72").resources:
        if r.type.endswith(":ClusterQueue"):
            inputs = copy.deepcopy(r.inputs)
            for group in inputs["spec"]["resourceGroups"]:
                group["coveredResources"] = [c for c in group["coveredResources"] if "channel" not in c]
                for flavor in group["flavors"]:
                    flavor["resources"] = [x for x in flavor["resources"] if "channel" not in x["name"]]
            r = replace(r, inputs=inputs)
        resources.append(r)
    (found,) = check_kueue_admission(resources, {})
    assert "nvidia.com/compute-domain-default-channel" in str(found) and "covers" in str(found)


def test_channel_quota_is_one_per_gpu_node(shipped_plan: Callable[[str], Plan]) -> None:
    (queue,) = [r for r in shipped_plan("gb200-x72").resources if r.type.endswith(":ClusterQueue")]
    quota = {x["name"]: x["nominalQuota"] for x in queue.inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]}
    assert quota[kueue.quota_resource(devices.CHANNEL_DEVICE_CLASS)] == 18 == quota["nvidia.com/gpu"] // 4


def test_on_kubernetes_1_33_the_dra_gates_are_off_and_jobs_are_admitted(tmp_path: Path) -> None:
    plan = run_plan(ROOT, "gb200-x72", {"ultraserver-eks:cluster": _cluster_at("1.33")})
    config = kueue_configuration(plan.resources)
    assert config is not None
    assert config["featureGates"] == {gate: False for gate in kueue.DRA_FEATURE_GATES}
    assert "deviceClassMappings" not in config["resources"]
    assert check_kueue_admission(plan.resources, {}) == []
    # With the reject gate back on (its 0.19.2 default) the same jobs are refused.
    rejected = with_configuration(plan.resources, lambda c: c["featureGates"].pop(kueue.DRA_FEATURE_GATES[1]))
    assert check_kueue_admission(rejected, {}) and "KueueDRARejectWorkloadsWhenDRADisabled" in str(
        check_kueue_admission(rejected, {})
    )


def _cluster_at(version: str) -> str:
    import json

    from helpers.stacks import stack_config

    cluster = dict(stack_config("gb200-x72")["ultraserver-eks:cluster"])
    cluster["kubernetesVersion"] = version
    return json.dumps(cluster)


CHANNEL = {"devices": {"requests": [{"name": "c", "exactly": {"deviceClassName": "x.example.com"}}]}}


@pytest.mark.parametrize(
    ("request_", "refusal"),
    [
        ({"name": "a", "firstAvailable": [{"name": "b"}]}, "firstAvailable"),
        ({"name": "a"}, "exactly must be set"),
        ({"name": "a", "exactly": {"deviceClassName": "x", "allocationMode": "All"}}, "'All'"),
        ({"name": "a", "exactly": {"deviceClassName": "x", "adminAccess": True}}, "adminAccess"),
    ],
)
def test_claims_kueue_cannot_count_are_refused(request_: dict[str, Any], refusal: str) -> None:
    counts, why = devices_per_class({"devices": {"requests": [request_]}})
    assert counts == {} and why is not None and refusal in why


def test_exact_count_defaults_to_one_device_per_request() -> None:
    spec = {
        "devices": {
            "requests": [
                *CHANNEL["devices"]["requests"],
                {"name": "d", "exactly": {"deviceClassName": "x.example.com", "count": 3}},
            ]
        }
    }
    assert devices_per_class(spec) == ({"x.example.com": 4}, None)
    assert devices_per_class(devices.channel_claim_spec()) == ({devices.CHANNEL_DEVICE_CLASS: 1}, None)


def test_quota_counts_every_pod_of_a_pod_set() -> None:
    config = {"resources": {"deviceClassMappings": [{"name": "example.com/x", "deviceClassNames": ["x.example.com"]}]}}
    workload = Workload("Job ns/j", "ns", (PodSet("main", 5, ("t",)),))
    templates = {("ns", "t"): CHANNEL}
    assert admission_problems(workload, templates, Queue(config, {"example.com/x": 5})) == []
    (over,) = admission_problems(workload, templates, Queue(config, {"example.com/x": 4}))
    assert over.value == "example.com/x: 5"
