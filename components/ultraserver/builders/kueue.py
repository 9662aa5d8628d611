"""Kueue for GB200: the Topology (UltraServer > NVLink clique > node), the GB200 ResourceFlavor, a ClusterQueue
whose GPU and EFA quota is what the stack's GPU node groups hold at full size, LocalQueues, the chart values, and
the labels and pod-set annotations that submit a job through them.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from ultraserver.config.settings import KueueSettings, Settings
from ultraserver.config.views import kueue_enabled
from ultraserver.facts.hardware import devices, efa
from ultraserver.facts.hardware.devices import DEFAULT_DEVICE_MODE, DeviceMode
from ultraserver.facts.hardware.instances import GB200_INSTANCE_TYPE
from ultraserver.facts.hardware.ultraservers import NODE_INSTANCE_TYPES
from ultraserver.facts.kubernetes import kueue
from ultraserver.facts.kubernetes.scheduling import (
    CLIQUE_LABEL,
    EFA_RESOURCE,
    GPU_RESOURCE,
    GPU_TOLERATION,
    INSTANCE_TYPE_LABEL,
    ULTRASERVER_LABEL,
)
from ultraserver.facts.pins import charts

TOPOLOGY_NAME = "gb200-ultraserver"
"""Name of the Topology the GB200 flavor uses."""
FLAVOR_NAME = "gb200"
"""Name of the ResourceFlavor of the GB200 nodes (flavor_names derives each instance type's)."""
CLUSTER_QUEUE_NAME = "gb200"
"""Name of the ClusterQueue holding the stack's GPU and EFA quota."""
LOCAL_QUEUE_NAME = "gb200"
"""Name of the LocalQueue in each namespace: the value of a job's kueue.x-k8s.io/queue-name label."""
# Pulled by the system nodes (Graviton). The chart's values.yaml in git names a staging image (tag release-0.19) that
# the release build rewrites; the toolkit names the release image itself: tag v<chart version>, as Kueue tags its app
# with the chart version (Chart.yaml at v0.19.2: version 0.19.2, appVersion v0.19.2). Kueue's Makefile builds the image
# for PLATFORMS linux/amd64,linux/arm64,linux/s390x,linux/ppc64le (read at a v0.10 commit). UNVERIFIED: the same at
# v0.19.2, that the published chart defaults to this image, and the image index itself (the registry was not queried).
IMAGE_REPOSITORY = "registry.k8s.io/kueue/kueue"
CHECK_PRIORITY_CLASS = "ultraserver-fabric-check"
"""WorkloadPriorityClass of the fabric checks made at each join (``kueue.x-k8s.io/priority-class`` on their MPIJobs)."""
CHECK_PRIORITY = 1_000_000
"""Its value: above any Workload without a class (priority 0) and any class a team is likely to define, so the checks
of a new block are admitted before users' older Workloads waiting in the same ClusterQueue (a BestEffortFIFO queue
orders by priority first: facts/kubernetes/kueue.py PRIORITY_CLASS_LABEL). They preempt nothing (the ClusterQueue
keeps Kueue's withinClusterQueue: Never), so at a busy block start they take the first whole UltraServer that frees,
and acceptance is not left at "not yet" while jobs run on an unchecked fabric."""
WAIT_FOR_PODS_READY = {
    "timeout": "15m",
    "recoveryTimeout": "15m",
    "blockAdmission": False,
    "requeuingStrategy": {
        "timestamp": "Eviction",
        "backoffBaseSeconds": 60,
        "backoffLimitCount": 3,
    },
}
"""Kueue's all-or-nothing wait (Configuration waitForPodsReady; fields of apis/config/v1beta2/configuration_types.go at
v0.19.2), set for whole-UltraServer jobs rather than left to Kueue's defaults (facts/kubernetes/kueue.py, the
waitForPodsReady note), which changed in 0.19 (it was opt-in before):

- ``timeout`` 15m (default 30m): an admitted job whose pods are not all Ready by then is evicted and requeued, so a
  pod pinned to a node with a missing device (Pending for good) holds 18 nodes' quota for 15 minutes, not 30 (36
  GPU-hours on an x72). 15 minutes leaves a large image's pull on 18 nodes and the ComputeDomain's IMEX daemons time
  to start (a judgement: pull times were not measured, UNVERIFIED).
- ``recoveryTimeout`` 15m: the same wait for a replacement pod after a running job lost one (a node that died; the
  spares controller hands over a spare within minutes).
- ``blockAdmission`` false: true would admit nothing in the ClusterQueue until the last admitted job is Ready, so
  the checks of one UltraServer and jobs on the others would wait on each other; TAS already places each job on
  nodes that exist, the deadlock blockAdmission guards against.
- ``requeuingStrategy``: requeued behind the others (``Eviction``), after 60 s, 120 s, 240 s, and deactivated after
  3 tries (``backoffLimitCount``; default: forever), so a job that can never start stops taking an UltraServer for
  15 minutes an hour; a fabric check deactivated so is paged as never run (incluster/drain_watch.py CHECKS_DUE)."""
CONTROLLER_REPLICAS = 2
"""Kueue controllers. Every replica serves the webhooks, only the leader reconciles (kubernetes-sigs/kueue#1509,
"Webhooks are served in non-leading replicas", since v0.5.x), so one replica lost to a node drain does not leave
jobs and MPIJobs in the managed namespaces without their fail-closed webhooks."""


@dataclass(frozen=True)
class GpuCapacity:
    """What the stack's GPU node groups of one instance type hold at full size."""

    nodes: int
    gpus: int
    efa_devices: int

    def __add__(self, other: GpuCapacity) -> GpuCapacity:
        return GpuCapacity(self.nodes + other.nodes, self.gpus + other.gpus, self.efa_devices + other.efa_devices)


@dataclass
class KueueArgs:
    """Inputs of the Kueue install and its queues (KubernetesLayer derives them from the settings)."""

    capacity: Mapping[str, GpuCapacity]
    """Nominal quota of the ClusterQueue per instance type (one flavor each): its GPU nodes at full size, spares left
    out (``sparesPerUltraServer``: no job may use them)."""
    settings: KueueSettings
    """The stack's kubernetes.kueue: version, values override and Helm options of the chart, LocalQueue namespaces."""
    mode: DeviceMode
    """The stack's device mode: which DeviceClasses the queue maps and counts (device_quota), and whether it holds
    device-plugin resources."""
    system_node_selector: dict[str, str] = field(default_factory=dict)
    """Labels of the system nodes, where the controller runs."""
    unmanaged_namespaces: list[str] = field(default_factory=list)
    """Namespaces Kueue's job and pod webhooks never see (KubernetesLayer passes the stack's own namespaces that
    submit nothing to Kueue: GPU Operator, DRA driver, drift check...), so a Kueue outage cannot block them."""

    @property
    def local_queue_namespaces(self) -> tuple[str, ...]:
        """Namespaces that get a LocalQueue named LOCAL_QUEUE_NAME."""
        return self.settings.local_queue_namespaces

    @property
    def total(self) -> GpuCapacity:
        """The quota of every flavor together."""
        return sum(self.capacity.values(), GpuCapacity(0, 0, 0))

    @property
    def device_quota(self) -> dict[str, int]:
        """The DeviceClasses the queue maps, with the devices of each the stack holds (device_quota)."""
        return device_quota(self.total, self.mode)


def gpu_capacity(settings: Settings, live: Settings | None = None) -> dict[str, GpuCapacity]:
    """Per instance type of the stack's GPU node groups (UltraServer types' node types when it has none): the GPU
    nodes, GPUs and EFA devices of the groups of ``live`` (default: all of them) at full size (every instance of their
    UltraServers) less each UltraServer's spares (``sparesPerUltraServer``: no job may use them), from the instance
    catalog and each group's EFA layout."""
    types = [g.instance_type for g in settings.gpu_node_groups] or list(NODE_INSTANCE_TYPES)
    capacity = dict.fromkeys(sorted(set(types), key=types.index), GpuCapacity(0, 0, 0))
    for group in (settings if live is None else live).gpu_node_groups:
        count = group.active_full_size
        layout = efa.summarize_layout(group.instance_type, list(group.efa_interfaces))
        gpus = count * int(efa.instance_facts(group.instance_type)["gpus"])
        capacity[group.instance_type] += GpuCapacity(count, gpus, count * layout.efa_devices)
    return capacity


def device_quota(capacity: GpuCapacity, mode: DeviceMode) -> dict[str, int]:
    """Each DeviceClass the layer's queued jobs claim (``mode.claimed_classes``) and how many devices of it the stack
    holds: one ComputeDomain channel per GPU node (every job pod claims one channel, and a GB200 job runs one pod per
    node), and in DRA mode every GPU and EFA device (builders/device_claims.py claims them); nothing below 1.34, where
    Kueue's DRA gates are off and it counts no claim."""
    held = {
        devices.CHANNEL_DEVICE_CLASS: capacity.nodes,
        devices.GPU_DEVICE_CLASS: capacity.gpus,
        devices.EFA_DEVICE_CLASS: capacity.efa_devices,
    }
    return {device_class: held[device_class] for device_class in mapped_classes(mode)}


def mapped_classes(mode: DeviceMode) -> tuple[str, ...]:
    """The DeviceClasses Kueue maps to quota resources and counts: every class the mode's jobs claim on 1.34+, none
    below (Kueue's DRA gates are off there)."""
    return mode.claimed_classes if kueue.counts_dra_claims(mode.kubernetes_version) else ()


def kueue_args(settings: Settings, live: Settings, mode: DeviceMode) -> KueueArgs | None:
    """The stack's Kueue, or None when it is off; its quota counts the groups of ``live``."""
    if not kueue_enabled(settings):
        return None
    return KueueArgs(capacity=gpu_capacity(settings, live), settings=settings.kubernetes.kueue, mode=mode)


def flavor_names(instance_types: Iterable[str]) -> dict[str, str]:
    """The ResourceFlavor of each GPU instance type, named after its family's accelerator (`<family>-<accelerator>.
    <size>` gives `<accelerator>`: FLAVOR_NAME for the GB200 nodes); types whose names would clash are named in full,
    with `-` for `.`."""
    types = list(dict.fromkeys(instance_types))
    short = {t: t.split(".")[0].rsplit("-", 1)[-1] for t in types}
    clashing = {n for n in short.values() if list(short.values()).count(n) > 1}
    return {t: t.replace(".", "-") if short[t] in clashing else short[t] for t in types}


def unplaced_name(flavor: str) -> str:
    """The name of a flavor's twin without a Topology and with no quota. The twin keeps the ClusterQueue from being
    "TAS-only": in a TAS-only queue Kueue implies a topology request for every pod set, and one that requests none of
    the queue's resources (an MPIJob's CPU-only launcher) gets no flavor and blocks the workload for good
    (kubernetes-sigs/kueue#14707, which describes this case, was closed unmerged; docs/kueue.md item 4). The cost: a
    GPU pod set without a topology annotation cannot use the topology flavor and waits; the job helpers always set
    one."""
    return f"{flavor}-no-topology"


def _meta(name: str, namespace: str | None = None) -> dict[str, str]:
    return {"name": name} if namespace is None else {"name": name, "namespace": namespace}


def topology_manifest() -> dict[str, Any]:
    """The Topology: UltraServer, NVLink clique, node."""
    return {
        "apiVersion": kueue.API_VERSION,
        "kind": "Topology",
        "metadata": _meta(TOPOLOGY_NAME),
        "spec": {"levels": [{"nodeLabel": label} for label in kueue.TOPOLOGY_LEVELS]},
    }


def resource_flavor_manifest(instance_type: str = GB200_INSTANCE_TYPE, name: str = FLAVOR_NAME) -> dict[str, Any]:
    """The flavor of one GPU instance type: its nodes by instance type, tolerating the GPU taint, placed by the
    Topology."""
    return {
        "apiVersion": kueue.API_VERSION,
        "kind": "ResourceFlavor",
        "metadata": _meta(name),
        "spec": {
            "nodeLabels": {INSTANCE_TYPE_LABEL: instance_type},
            "tolerations": [dict(GPU_TOLERATION)],
            "topologyName": TOPOLOGY_NAME,
        },
    }


def unplaced_flavor_manifest(instance_type: str = GB200_INSTANCE_TYPE, name: str = FLAVOR_NAME) -> dict[str, Any]:
    """The twin of a flavor without a Topology (zero quota): see unplaced_name."""
    return {
        "apiVersion": kueue.API_VERSION,
        "kind": "ResourceFlavor",
        "metadata": _meta(unplaced_name(name)),
        "spec": {"nodeLabels": {INSTANCE_TYPE_LABEL: instance_type}, "tolerations": [dict(GPU_TOLERATION)]},
    }


def cluster_queue_manifest(capacity: Mapping[str, GpuCapacity], mode: DeviceMode) -> dict[str, Any]:
    """The ClusterQueue: per instance type (`capacity`, one flavor each) its GPUs and EFA devices as device-plugin
    resources (not in DRA mode), and the devices of every DeviceClass the mode's jobs claim under their mapped names
    (device_quota), open to every namespace that has a LocalQueue. The flavors with a Topology come first, then their
    zero-quota twins."""
    names = flavor_names(capacity)
    quotas = {t: _quota(c, mode) for t, c in capacity.items()}
    covered = list(next(iter(quotas.values()))) if quotas else []
    placed = [
        {"name": names[t], "resources": [{"name": r, "nominalQuota": n} for r, n in q.items()]}
        for t, q in quotas.items()
    ]
    unplaced = [
        {"name": unplaced_name(names[t]), "resources": [{"name": r, "nominalQuota": 0} for r in q]}
        for t, q in quotas.items()
    ]
    return {
        "apiVersion": kueue.API_VERSION,
        "kind": "ClusterQueue",
        "metadata": _meta(CLUSTER_QUEUE_NAME),
        "spec": {
            # An empty selector admits workloads from every namespace; LocalQueues decide who can submit.
            "namespaceSelector": {},
            "resourceGroups": [{"coveredResources": covered, "flavors": [*placed, *unplaced]}],
        },
    }


def _quota(capacity: GpuCapacity, mode: DeviceMode) -> dict[str, int]:
    """One flavor's nominal quota by resource name: plugin resources unless in DRA mode, then the mapped classes."""
    quota = {} if mode.dra else {GPU_RESOURCE: capacity.gpus, EFA_RESOURCE: capacity.efa_devices}
    return quota | {kueue.quota_resource(c): n for c, n in sorted(device_quota(capacity, mode).items())}


def local_queue_manifest(namespace: str, name: str = LOCAL_QUEUE_NAME) -> dict[str, Any]:
    """The LocalQueue of one namespace, feeding the ClusterQueue."""
    return {
        "apiVersion": kueue.API_VERSION,
        "kind": "LocalQueue",
        "metadata": _meta(name, namespace),
        "spec": {"clusterQueue": CLUSTER_QUEUE_NAME},
    }


def unmanaged_selector(unmanaged_namespaces: Iterable[str] = (), namespace: str = kueue.NAMESPACE) -> dict[str, Any]:
    """managedJobsNamespaceSelector: every namespace but kube-system, Kueue's own and `unmanaged_namespaces`. The chart
    copies it onto its job and pod webhooks, so those namespaces never call Kueue (nor fail when it is down)."""
    names = sorted({kueue.PROHIBITED_NAMESPACE, namespace, *unmanaged_namespaces})
    return {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": names}]}


def kueue_configuration(
    unmanaged_namespaces: Iterable[str] = (), namespace: str = kueue.NAMESPACE, mode: DeviceMode = DEFAULT_DEVICE_MODE
) -> dict[str, Any]:
    """The chart's default Kueue Configuration with only the toolkit's integrations (batch/job, MPIJob: no pod,
    Deployment or StatefulSet webhook that fails closed), the stack's own namespaces out of Kueue's webhooks, CPU,
    memory and ephemeral storage left out of quota (the ClusterQueue covers GPUs and EFA devices only), each DeviceClass
    the mode's jobs claim mapped to its quota resource (mapped_classes, the same the ClusterQueue's quota counts), and
    the DRA gates off below Kubernetes 1.34 (facts/kubernetes/kueue.py)."""
    config = copy.deepcopy(kueue.default_configuration())
    config["integrations"]["frameworks"] = list(kueue.REQUIRED_INTEGRATIONS)
    config["managedJobsNamespaceSelector"] = unmanaged_selector(unmanaged_namespaces, namespace)
    resources = config.setdefault("resources", {})
    resources["excludeResourcePrefixes"] = list(kueue.EXCLUDED_RESOURCE_PREFIXES)
    if mapped_classes(mode):
        resources["deviceClassMappings"] = [
            {"name": kueue.quota_resource(c), "deviceClassNames": [c]} for c in sorted(mapped_classes(mode))
        ]
    gates = kueue.feature_gates(mode.kubernetes_version)
    if gates:
        config["featureGates"] = gates
    config["waitForPodsReady"] = copy.deepcopy(WAIT_FOR_PODS_READY)
    return config


def image_tag(chart_version: str | None = None) -> str:
    """The Kueue image tag of a chart version (the pinned one by default): v<version>."""
    return "v" + (chart_version or charts.pinned(charts.KUEUE).version).lstrip("vV")


def kueue_values(
    system_node_selector: Mapping[str, str],
    chart_version: str | None = None,
    unmanaged_namespaces: Iterable[str] = (),
    namespace: str = kueue.NAMESPACE,
    release_name: str = "kueue",
    mode: DeviceMode = DEFAULT_DEVICE_MODE,
) -> dict[str, Any]:
    """Chart values: CONTROLLER_REPLICAS controllers on the system nodes, spread over nodes and kept by a
    PodDisruptionBudget, the chart version's release image, the toolkit's configuration."""
    image = {"repository": IMAGE_REPOSITORY, "tag": image_tag(chart_version), "pullPolicy": "IfNotPresent"}
    # The chart's pod labels (templates/_helpers.tpl kueue.selectorLabels); ScheduleAnyway so a one-node system group
    # still runs both replicas.
    pods = {"app.kubernetes.io/instance": release_name, "control-plane": "controller-manager"}
    spread = {
        "maxSkew": 1,
        "topologyKey": kueue.HOSTNAME_LABEL,
        "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": pods},
    }
    config = kueue_configuration(unmanaged_namespaces, namespace, mode)
    return {
        "controllerManager": {
            "nodeSelector": dict(system_node_selector),
            "manager": {"image": image},
            "replicas": CONTROLLER_REPLICAS,
            "podDisruptionBudget": {"enabled": True, "minAvailable": 1},
            "topologySpreadConstraints": [spread],
        },
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(config, sort_keys=True)},
    }


# ---- submitting a job ---------------------------------------------------------------------------


def queue_labels(queue_name: str) -> dict[str, str]:
    """Labels of a job submitted to the LocalQueue `queue_name` of its namespace (none when empty)."""
    return {kueue.QUEUE_NAME_LABEL: queue_name} if queue_name else {}


def check_queue_labels(queue_name: str) -> dict[str, str]:
    """Labels of a fabric check's job: its LocalQueue and the checks' WorkloadPriorityClass (none when not queued)."""
    return {**queue_labels(queue_name), kueue.PRIORITY_CLASS_LABEL: CHECK_PRIORITY_CLASS} if queue_name else {}


def check_priority_class_manifest() -> dict[str, Any]:
    """The WorkloadPriorityClass of the fabric checks (CHECK_PRIORITY)."""
    return {
        "apiVersion": kueue.API_VERSION,
        "kind": "WorkloadPriorityClass",
        "metadata": _meta(CHECK_PRIORITY_CLASS),
        "value": CHECK_PRIORITY,
        "description": "ultraserver's fabric checks at each block's join: admitted before older jobs, preempt none",
    }


def podset_topology_annotations(nodes: int, nodes_per_ultraserver: int) -> dict[str, str]:
    """Pod-template annotations placing a pod set of `nodes` whole-node pods: inside one NVLink clique when it
    fits one UltraServer (required), else as few UltraServers as possible (preferred), spanning them over EFA."""
    if nodes <= nodes_per_ultraserver:
        return {kueue.PODSET_REQUIRED_TOPOLOGY: CLIQUE_LABEL}
    return {kueue.PODSET_PREFERRED_TOPOLOGY: ULTRASERVER_LABEL}
