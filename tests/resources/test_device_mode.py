"""The device mode end to end in the offline plan: DRA mode swaps the device plugins for DRA drivers."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import date

import pytest
from helpers.manifests import whole_node_gpus
from helpers.stacks import ROOT, stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.facts.hardware import devices
from ultraserver.facts.kubernetes.kueue_admission import devices_per_class
from ultraserver.offline import Plan, run_plan
from ultraserver.policy import PlanResource, evaluate
from ultraserver.policy.device_mode import check_no_plugin_resources, kubernetes_version
from ultraserver.policy.workloads import pod_sets
from ultraserver.problems import ConfigError

RELEASE = "kubernetes:helm.sh/v3:Release"
DRA_STACK = "gb200-x72-dra"
PLUGIN_CHARTS = {"aws-efa-k8s-device-plugin"}


def releases(plan: Plan) -> dict[str, PlanResource]:
    return {str(r.inputs["chart"]).rsplit("/", 1)[-1]: r for r in plan.resources if r.type == RELEASE}


def test_the_dra_stack_plans_with_no_device_plugin(shipped_plan: Callable[[str], Plan]) -> None:
    charts = releases(shipped_plan(DRA_STACK))
    assert not PLUGIN_CHARTS & set(charts)
    assert charts["aws-dranet"].inputs["values"]["deviceClass"]["name"] == devices.EFA_DEVICE_CLASS
    assert charts["gpu-operator"].inputs["values"]["devicePlugin"] == {"enabled": False}
    # The operator keeps the rest of the stack NVIDIA's DRA install guide keeps.
    values = charts["gpu-operator"].inputs["values"]
    assert all(values[k]["enabled"] for k in ("nfd", "gfd", "dcgmExporter"))
    dra_values = next(r for name, r in charts.items() if "dra-driver" in name).inputs["values"]
    assert dra_values["resources"] == {"gpus": {"enabled": True}, "computeDomains": {"enabled": True}}
    assert dra_values["gpuResourcesEnabledOverride"] is True


def test_the_plugins_stack_keeps_the_device_plugins(shipped_plan: Callable[[str], Plan]) -> None:
    charts = releases(shipped_plan("gb200-x72"))
    assert "aws-efa-k8s-device-plugin" in charts and "aws-dranet" not in charts
    assert charts["gpu-operator"].inputs["values"]["devicePlugin"] == {"enabled": True}
    dra_values = next(r for name, r in charts.items() if "dra-driver" in name).inputs["values"]
    assert dra_values["resources"]["gpus"] == {"enabled": False}


def test_every_dra_job_claims_whole_node_devices_and_its_channel(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan(DRA_STACK)
    templates = {
        r.inputs["metadata"]["name"]: r.inputs["spec"]["spec"]
        for r in plan.resources
        if r.type == "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate"
    }
    jobs = [r for r in plan.resources if r.type.endswith(":MPIJob")]
    assert jobs and templates
    for job in jobs:
        workers = [t for n, t in pod_sets("MPIJob", job.inputs["spec"]) if t["spec"].get("tolerations")]
        for template in workers:
            claims = [c["resourceClaimTemplateName"] for c in template["spec"]["resourceClaims"]]
            device = [templates[c] for c in claims if c in templates]
            assert len(device) == 1 and whole_node_gpus(device[0]) == 4
            assert len(claims) == 2  # the ComputeDomain channel claim stays
            (container,) = template["spec"]["containers"]
            assert not devices.requests_plugin_resource(container["resources"])


def test_dra_mode_below_kubernetes_1_35_is_a_settings_error_naming_the_fix() -> None:
    config = copy.deepcopy(stack_config(DRA_STACK))
    config["ultraserver-eks:cluster"]["kubernetesVersion"] = "1.34"
    with pytest.raises(ConfigError) as info:
        parse_settings(config, today=date(2026, 11, 25))
    text = "\n".join([str(p) for p in info.value.items])
    assert "ultraserver-eks:kubernetes.devices" in text and "Kubernetes 1.34" in text
    assert 'kubernetesVersion: "1.35"' in text and "devices: plugins" in text


def test_plugins_mode_on_kubernetes_1_34_is_fine() -> None:
    config = copy.deepcopy(stack_config(DRA_STACK))
    config["ultraserver-eks:cluster"]["kubernetesVersion"] = "1.34"
    config["ultraserver-eks:kubernetes"]["devices"] = devices.PLUGINS
    assert parse_settings(config, today=date(2026, 11, 25)).kubernetes.devices == devices.PLUGINS


def test_an_unknown_device_mode_is_refused_with_the_allowed_ones() -> None:
    config = copy.deepcopy(stack_config(DRA_STACK))
    config["ultraserver-eks:kubernetes"]["devices"] = "cdi"
    with pytest.raises(ConfigError) as info:
        parse_settings(config, today=date(2026, 11, 25))
    assert "kubernetes.devices" in str([str(p) for p in info.value.items]) and "dra" in str(
        [str(p) for p in info.value.items]
    )


def test_a_dranet_value_the_chart_lacks_is_refused() -> None:
    config = copy.deepcopy(stack_config(DRA_STACK))
    config["ultraserver-eks:kubernetes"]["dranet"] = {"values": {"deviceClas": {"name": "x"}}}
    with pytest.raises(ConfigError) as info:
        parse_settings(config, today=date(2026, 11, 25))
    assert "kubernetes.dranet.values.deviceClas" in str([str(p) for p in info.value.items])


def _with_gpu_pod(resources: list[PlanResource], resource: str) -> list[PlanResource]:
    pod = PlanResource(
        urn="urn:pulumi:s::p::kubernetes:core/v1:Pod::old",
        type="kubernetes:core/v1:Pod",
        name="old",
        inputs={
            "kind": "Pod",
            "metadata": {"name": "old"},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {resource: 1}}}]},
        },
    )
    return [*resources, pod]


@pytest.mark.parametrize("resource", ["nvidia.com/gpu", "vpc.amazonaws.com/efa"])
def test_policy_flags_plugin_resources_in_dra_mode_only(resource: str, shipped_plan: Callable[[str], Plan]) -> None:
    rule = "dra-mode-no-plugin-resources"
    dra = [v for v in evaluate(_with_gpu_pod(shipped_plan(DRA_STACK).resources, resource)) if v.policy == rule]
    assert len(dra) == 1 and resource in dra[0].message and "'old'" in dra[0].message
    plugins = evaluate(_with_gpu_pod(shipped_plan("gb200-x72").resources, resource))
    assert not [v for v in plugins if v.policy == rule]
    assert not [v for v in evaluate(shipped_plan(DRA_STACK).resources) if v.policy == rule]


def test_the_efa_check_claims_whole_node_devices_in_dra_mode() -> None:
    group = copy.deepcopy(stack_config(DRA_STACK)["ultraserver-eks:gpuNodeGroups"][0])
    group["capacityReservationIds"] = ["cr-0123456789abcdef0", "cr-0123456789abcdef1"]
    plan = run_plan(ROOT, DRA_STACK, {"ultraserver-eks:gpuNodeGroups": json.dumps([group])})
    (job,) = [r for r in plan.resources if r.type.endswith(":MPIJob") and "efa" in r.name]
    worker = job.inputs["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    (claim,) = worker["resourceClaims"]
    (template,) = [r for r in plan.resources if r.type.endswith(":ResourceClaimTemplate") and "efa" in r.name]
    assert claim["resourceClaimTemplateName"] == template.inputs["metadata"]["name"]
    assert whole_node_gpus(template.inputs["spec"]["spec"]) == 4
    assert not devices.requests_plugin_resource(worker["containers"][0]["resources"])


@pytest.mark.parametrize(("mode", "unused"), [(devices.DRA, "efaDevicePlugin"), (devices.PLUGINS, "dranet")])
def test_values_of_the_release_the_mode_does_not_install_are_refused(mode: str, unused: str) -> None:
    config = copy.deepcopy(stack_config(DRA_STACK))
    config["ultraserver-eks:kubernetes"]["devices"] = mode
    config["ultraserver-eks:kubernetes"][unused] = {"values": {"tolerations": []}}
    with pytest.raises(ConfigError) as info:
        parse_settings(config, today=date(2026, 11, 25))
    assert f"ultraserver-eks:kubernetes.{unused}.values" in "\n".join([str(p) for p in info.value.items])


def _dra_at(version: str) -> list[PlanResource]:
    cluster = dict(stack_config(DRA_STACK)["ultraserver-eks:cluster"])
    cluster["kubernetesVersion"] = version
    return run_plan(ROOT, DRA_STACK, {"ultraserver-eks:cluster": json.dumps(cluster)}).resources


@pytest.mark.parametrize("version", ["1.35", "1.36"])
def test_nvidia_gpu_is_refused_in_dra_mode_only_below_1_36_where_no_device_class_serves_it(version: str) -> None:
    # From 1.36 the DRA driver's DeviceClass gpu.nvidia.com serves nvidia.com/gpu (extendedResourceName,
    # DRAExtendedResource on by default); DRANET's DeviceClass maps no extended resource, so EFA stays unserved.
    rule = "dra-mode-no-plugin-resources"
    resources = _dra_at(version)
    assert kubernetes_version(resources) == version
    gpu = [v for v in evaluate(_with_gpu_pod(resources, "nvidia.com/gpu")) if v.policy == rule]
    efa = [v for v in evaluate(_with_gpu_pod(resources, "vpc.amazonaws.com/efa")) if v.policy == rule]
    assert len(efa) == 1
    if version == "1.36":
        assert gpu == [] and "DeviceClasses serve only nvidia.com/gpu" in efa[0].message
    else:
        assert len(gpu) == 1 and "below 1.36 (here Kubernetes 1.35) no DeviceClass serves them" in gpu[0].message


def test_without_a_cluster_in_the_plan_the_minor_is_unknown_and_nvidia_gpu_is_refused(
    shipped_plan: Callable[[str], Plan],
) -> None:
    layer_only = [r for r in shipped_plan(DRA_STACK).resources if "eks" not in r.type.split(":")[0]]
    assert kubernetes_version(layer_only) is None
    found = check_no_plugin_resources(_with_gpu_pod(layer_only, "nvidia.com/gpu"), {})
    assert len(found) == 1 and "an unknown Kubernetes version" in str(found[0])


def test_the_imex_check_claims_the_nodes_gpus_and_no_efa_device(shipped_plan: Callable[[str], Plan]) -> None:
    # nvbandwidth copies over NVLink only; the NCCL check, which may go over EFA, keeps the node's EFA devices.
    templates = {
        r.name: devices_per_class(r.inputs["spec"]["spec"])[0]
        for r in shipped_plan(DRA_STACK).resources
        if r.type.endswith(":ResourceClaimTemplate")
    }
    imex = [counts for name, counts in templates.items() if "imex-check" in name]
    nccl = [counts for name, counts in templates.items() if "nccl-check" in name]
    assert imex and nccl
    assert all(counts == {devices.GPU_DEVICE_CLASS: 4} for counts in imex)
    assert all(counts[devices.EFA_DEVICE_CLASS] > 0 for counts in nccl)
