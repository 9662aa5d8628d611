"""Kueue objects and job annotations: valid against the pinned 0.19.2 CRDs, quota from the stack's GB200 groups."""

from __future__ import annotations

import copy
from typing import Any

import jsonschema
import pytest
import yaml
from helpers.manifests import validate_custom
from helpers.stacks import STACKS, stack_config
from ultraserver.builders import kueue
from ultraserver.builders.kueue import GpuCapacity
from ultraserver.config.settings import parse_settings
from ultraserver.config.views import device_mode
from ultraserver.facts.hardware.devices import DRA, DeviceMode
from ultraserver.facts.kubernetes import kueue as facts
from ultraserver.facts.pins import charts

GB200 = "p6e-gb200.36xlarge"
# Independent of the catalog: instances per UltraServer type and GPUs per p6e-gb200.36xlarge, as the README says.
INSTANCES = {"u-p6e-gb200x36": 9, "u-p6e-gb200x72": 18}
GPUS_PER_NODE = 4


def stack_gpus(stack: str) -> int:
    """GPUs of a shipped stack at full size, counted from its stack file."""
    total = 0
    for group in stack_config(stack)["ultraserver-eks:gpuNodeGroups"]:
        ultraservers = group.get("ultraserverCount", 1) if "capacityReservationResourceGroupArn" in group else None
        count = ultraservers if ultraservers is not None else len(group["capacityReservationIds"])
        total += INSTANCES[group.get("ultraserverType", "u-p6e-gb200x72")] * count * GPUS_PER_NODE
    return total


def manifests() -> list[dict[str, Any]]:
    capacity = {GB200: GpuCapacity(nodes=18, gpus=72, efa_devices=72)}
    return [
        kueue.topology_manifest(),
        kueue.resource_flavor_manifest(),
        kueue.unplaced_flavor_manifest(),
        kueue.cluster_queue_manifest(capacity, DeviceMode()),
        kueue.cluster_queue_manifest(capacity, DeviceMode(DRA, "1.35")),
        kueue.local_queue_manifest("team-a"),
    ]


@pytest.mark.parametrize("manifest", manifests(), ids=lambda m: f"{m['kind']}-{m['metadata']['name']}")
def test_kueue_objects_match_the_pinned_crds(manifest: dict[str, Any]) -> None:
    validate_custom(manifest)


def test_kueue_schema_check_is_live() -> None:
    queue = kueue.cluster_queue_manifest({GB200: GpuCapacity(1, 4, 4)}, DeviceMode())
    broken = copy.deepcopy(queue)
    broken["spec"]["queueingStrategy"] = "Fifo"
    with pytest.raises(jsonschema.ValidationError):
        validate_custom(broken)
    topology = copy.deepcopy(kueue.topology_manifest())
    topology["spec"]["levels"][0]["label"] = topology["spec"]["levels"][0].pop("nodeLabel")
    with pytest.raises(jsonschema.ValidationError):
        validate_custom(topology)


def test_topology_levels_go_from_ultraserver_to_clique_to_node() -> None:
    levels = [level["nodeLabel"] for level in kueue.topology_manifest()["spec"]["levels"]]
    assert levels == ["ultraserver.io/ultraserver", "nvidia.com/gpu.clique", "kubernetes.io/hostname"]
    flavor = kueue.resource_flavor_manifest()["spec"]
    assert flavor["topologyName"] == kueue.TOPOLOGY_NAME
    assert flavor["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]


@pytest.mark.parametrize("stack", STACKS)
def test_quota_is_every_gpu_of_the_stack_at_full_size(stack: str) -> None:
    settings = parse_settings(stack_config(stack), stack=stack)
    ((instance_type, capacity),) = kueue.gpu_capacity(settings).items()
    assert instance_type == GB200
    assert capacity.gpus == stack_gpus(stack) > 0
    assert capacity.nodes * GPUS_PER_NODE == capacity.gpus
    queue = kueue.cluster_queue_manifest({GB200: capacity}, device_mode(settings))
    quota = {r["name"]: r["nominalQuota"] for r in queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"]}
    # Kueue's name for a DeviceClass: its first label under the rest as prefix (facts.kubernetes.kueue.quota_resource).
    channels = {"nvidia.com/compute-domain-default-channel": capacity.nodes}
    efa = "networking.k8s.aws/efa" if settings.kubernetes.devices == DRA else "vpc.amazonaws.com/efa"
    assert quota == {"nvidia.com/gpu": capacity.gpus, efa: capacity.efa_devices, **channels}


def test_the_queue_is_not_topology_only_so_cpu_only_pod_sets_are_admitted() -> None:
    # Kueue implies a topology request for every pod set of a queue whose flavors all name a Topology; an MPIJob
    # launcher that requests none of the queue's resources then gets no flavor and blocks the job (docs/kueue.md, 4).
    flavors = {f["metadata"]["name"]: f for f in (kueue.resource_flavor_manifest(), kueue.unplaced_flavor_manifest())}
    (group,) = kueue.cluster_queue_manifest({GB200: GpuCapacity(18, 72, 72)}, DeviceMode())["spec"]["resourceGroups"]
    listed = [flavors[f["name"]] for f in group["flavors"]]
    assert any("topologyName" not in f["spec"] for f in listed)
    # The flavor without a topology holds nothing: every GPU is admitted with a placement.
    untopologied = [f for f in group["flavors"] if "topologyName" not in flavors[f["name"]]["spec"]]
    assert all(r["nominalQuota"] == 0 for f in untopologied for r in f["resources"])


def test_efa_quota_follows_each_groups_layout() -> None:
    config = stack_config("gb200-x72")
    config["ultraserver-eks:gpuNodeGroups"][0]["efaLayout"] = "all-odd-cards"
    more = kueue.gpu_capacity(parse_settings(config, stack="gb200-x72"))[GB200]
    fewer = kueue.gpu_capacity(parse_settings(stack_config("gb200-x72"), stack="gb200-x72"))[GB200]
    assert more.gpus == fewer.gpus and more.efa_devices == 2 * fewer.efa_devices == 18 * 8


def test_a_job_inside_one_ultraserver_requires_the_clique_a_larger_one_prefers_the_ultraserver() -> None:
    assert kueue.podset_topology_annotations(18, 18) == {facts.PODSET_REQUIRED_TOPOLOGY: "nvidia.com/gpu.clique"}
    assert kueue.podset_topology_annotations(2, 9) == {facts.PODSET_REQUIRED_TOPOLOGY: "nvidia.com/gpu.clique"}
    assert kueue.podset_topology_annotations(19, 18) == {facts.PODSET_PREFERRED_TOPOLOGY: "ultraserver.io/ultraserver"}
    assert facts.PODSET_REQUIRED_TOPOLOGY == "kueue.x-k8s.io/podset-required-topology"
    assert kueue.queue_labels("gb200") == {"kueue.x-k8s.io/queue-name": "gb200"}
    assert kueue.queue_labels("") == {}


def test_kueue_is_pinned_as_an_oci_chart_with_checked_keys() -> None:
    pin = charts.pinned(charts.KUEUE)
    assert pin.version == "0.19.2"
    assert charts.chart_reference(pin) == ("oci://registry.k8s.io/kueue/charts/kueue", None)
    assert charts.unknown_value_paths(charts.KUEUE, kueue.kueue_values({"r": "s"})) == []
    assert charts.unknown_value_paths(charts.KUEUE, {"controllerManager": {"nodeSelectr": {}}}) == [
        "controllerManager.nodeSelectr"
    ]


def test_the_pinned_default_configuration_enables_the_integrations_the_jobs_need() -> None:
    assert set(facts.REQUIRED_INTEGRATIONS) <= set(facts.default_configuration()["integrations"]["frameworks"])
    assert "kubeflow.org/mpijob" in facts.REQUIRED_INTEGRATIONS


def test_the_image_follows_the_chart_version() -> None:
    image = kueue.kueue_values({"r": "s"})["controllerManager"]["manager"]["image"]
    assert (image["repository"], image["tag"]) == ("registry.k8s.io/kueue/kueue", "v0.19.2")
    assert kueue.kueue_values({"r": "s"}, "0.20.1")["controllerManager"]["manager"]["image"]["tag"] == "v0.20.1"


def test_the_toolkit_configuration_is_the_charts_with_only_its_integrations_and_gpu_only_quota() -> None:
    values = kueue.kueue_values({"ultraserver.io/role": "system"})
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    default = facts.default_configuration()
    # Ports, probes and leader election stay the chart's (its Services and probes are templated against them).
    for key in ("webhook", "health", "metrics", "leaderElection", "apiVersion", "kind"):
        assert config[key] == default[key], key
    # The chart's default enables pod, deployment and statefulset: their webhooks would then fail closed for every
    # pod in the cluster (GPU Operator and DRA driver daemons included) whenever Kueue is down.
    assert {"pod", "deployment", "statefulset"} <= set(default["integrations"]["frameworks"])
    assert config["integrations"]["frameworks"] == ["batch/job", "kubeflow.org/mpijob"]
    assert config["resources"]["excludeResourcePrefixes"] == ["cpu", "memory", "ephemeral-storage"]
    assert "resources" not in default  # the override does not edit the cached default


def selector_names(config: dict[str, Any]) -> list[str]:
    (expression,) = config["managedJobsNamespaceSelector"]["matchExpressions"]
    assert (expression["key"], expression["operator"]) == ("kubernetes.io/metadata.name", "NotIn")
    return list(expression["values"])


def test_kueue_webhooks_leave_out_system_and_given_namespaces() -> None:
    values = kueue.kueue_values({"r": "s"}, None, ["gpu-operator", "nvidia-dra-driver-gpu"], "queues")
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    # Kueue refuses a selector matching kube-system or its own namespace; the chart copies it onto the webhooks.
    assert selector_names(config) == ["gpu-operator", "kube-system", "nvidia-dra-driver-gpu", "queues"]
    assert selector_names(kueue.kueue_configuration()) == ["kube-system", "kueue-system"]


def test_two_controllers_spread_over_system_nodes_keep_the_webhooks_up() -> None:
    manager = kueue.kueue_values({"ultraserver.io/role": "system"})["controllerManager"]
    assert manager["replicas"] == 2 and manager["podDisruptionBudget"] == {"enabled": True, "minAvailable": 1}
    (spread,) = manager["topologySpreadConstraints"]
    assert spread["topologyKey"] == "kubernetes.io/hostname" and spread["whenUnsatisfiable"] == "ScheduleAnyway"
    assert spread["labelSelector"]["matchLabels"]["control-plane"] == "controller-manager"
