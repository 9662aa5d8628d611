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

from ultraserver.config.settings import ReleaseSettings, Settings
from ultraserver.config.views import kueue_enabled
from ultraserver.facts.hardware import devices, efa
from ultraserver.facts.hardware.ultraservers import NODE_INSTANCE_TYPE
from ultraserver.facts.kubernetes import eks_versions, kueue
from ultraserver.facts.kubernetes.scheduling import (
    CLIQUE_LABEL,
    DNS_LABEL,
    EFA_RESOURCE,
    GPU_RESOURCE,
    GPU_TOLERATION,
    INSTANCE_TYPE_LABEL,
    ULTRASERVER_LABEL,
)
from ultraserver.facts.pins import charts
from ultraserver.problems import ConfigError, Problem

TOPOLOGY_NAME = "gb200-ultraserver"
"""Name of the Topology the GB200 flavor uses."""
FLAVOR_NAME = "gb200"
"""Name of the ResourceFlavor of the GB200 nodes."""
UNPLACED_FLAVOR_NAME = "gb200-no-topology"
"""A second flavor without a Topology and with no quota. It keeps the ClusterQueue from being "TAS-only": in a TAS-only
queue Kueue implies a topology request for every pod set, and one that requests none of the queue's resources (an
MPIJob's CPU-only launcher) gets no flavor and blocks the workload for good (kubernetes-sigs/kueue#14707, which
describes this case, was closed unmerged; docs/kueue.md item 4). The cost: a GPU pod set without a topology annotation
cannot use the topology flavor and waits; the job helpers always set one."""
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
CONTROLLER_REPLICAS = 2
"""Kueue controllers. Every replica serves the webhooks, only the leader reconciles (kubernetes-sigs/kueue#1509,
"Webhooks are served in non-leading replicas", since v0.5.x), so one replica lost to a node drain does not leave
jobs and MPIJobs in the managed namespaces without their fail-closed webhooks."""


@dataclass(frozen=True)
class GpuCapacity:
    """What the stack's GB200 node groups hold at full size."""

    nodes: int
    gpus: int
    efa_devices: int


@dataclass
class KueueArgs:
    """Inputs of the Kueue install and its queues."""

    capacity: GpuCapacity
    """Nominal quota of the ClusterQueue (the stack's GB200 nodes at full size, spares left out)."""
    local_queue_namespaces: list[str] = field(default_factory=lambda: ["default"])
    """Namespaces that get a LocalQueue named LOCAL_QUEUE_NAME."""
    release: ReleaseSettings = field(default_factory=ReleaseSettings)
    """Version, values override and Helm options of the chart."""
    system_node_selector: dict[str, str] = field(default_factory=dict)
    """Labels of the system nodes, where the controller runs (KubernetesLayer passes its system selector)."""
    kubernetes_version: str = eks_versions.DEFAULT_TEXT
    """The cluster's Kubernetes minor: Kueue counts DRA claims on 1.34+ and runs with its DRA gates off below."""
    device_quota: dict[str, int] = field(default_factory=dict)
    """DRA DeviceClass -> devices of that class in the stack: each is mapped to a quota resource and gets that much
    nominal quota (see device_quota)."""
    device_mode: str = devices.PLUGINS
    """Device mode (facts/hardware/devices.py): in DRA mode the queue has no quota of the device plugins' resources."""
    unmanaged_namespaces: list[str] = field(default_factory=list)
    """Namespaces Kueue's job and pod webhooks never see (KubernetesLayer passes the stack's own namespaces that
    submit nothing to Kueue: GPU Operator, DRA driver, drift check...), so a Kueue outage cannot block them."""


def gpu_capacity(settings: Settings) -> GpuCapacity:
    """GB200 nodes, GPUs and EFA devices of every GPU node group at full size (every instance of its UltraServers)
    less each UltraServer's spares (``sparesPerUltraServer``: no job may use them), from the instance catalog and each
    group's EFA layout."""
    nodes = gpus = efa_devices = 0
    for group in settings.gpu_node_groups:
        count = group.active_full_size
        layout = efa.summarize_layout(group.instance_type, list(group.efa_interfaces))
        nodes += count
        gpus += count * int(efa.instance_facts(group.instance_type)["gpus"])
        efa_devices += count * layout.efa_devices
    return GpuCapacity(nodes, gpus, efa_devices)


def device_quota(capacity: GpuCapacity, kubernetes_version: str, mode: str = devices.PLUGINS) -> dict[str, int]:
    """The DeviceClasses the toolkit's queued jobs claim and how many devices of each the stack holds: on 1.34+ one
    ComputeDomain channel per GPU node (every job pod claims one channel, and a GB200 job runs one pod per node), and
    in DRA mode every GPU and EFA device (builders/device_claims.py claims them); nothing below 1.34, where Kueue's
    DRA gates are off."""
    if not kueue.counts_dra_claims(kubernetes_version):
        return {}
    quota = {devices.CHANNEL_DEVICE_CLASS: capacity.nodes}
    if mode == devices.DRA:
        quota |= {devices.GPU_DEVICE_CLASS: capacity.gpus, devices.EFA_DEVICE_CLASS: capacity.efa_devices}
    return quota


def kueue_args(settings: Settings, live: Settings | None = None) -> KueueArgs | None:
    """The stack's Kueue, or None when it is off; its quota counts the groups of ``live`` (default: all of them)."""
    if not kueue_enabled(settings):
        return None
    capacity = gpu_capacity(settings if live is None else live)
    version, mode = settings.cluster.kubernetes_version, settings.kubernetes.devices
    return KueueArgs(
        capacity=capacity,
        kubernetes_version=version,
        device_quota=device_quota(capacity, version, mode),
        device_mode=mode,
        local_queue_namespaces=list(settings.kubernetes.kueue.local_queue_namespaces),
        release=settings.kubernetes.kueue,
    )


def check_kueue_args(args: KueueArgs) -> None:
    """ConfigError for namespaces that are not DNS labels or appear twice."""
    problems = [
        Problem(
            "kueue.local_queue_namespaces",
            namespace,
            "a namespace name (up to 63 lowercase letters, digits and '-')",
            "fix the name",
        )
        for namespace in args.local_queue_namespaces
        if not DNS_LABEL.fullmatch(namespace)
    ]
    duplicates = sorted({n for n in args.local_queue_namespaces if args.local_queue_namespaces.count(n) > 1})
    if duplicates:
        problems.append(
            Problem("kueue.local_queue_namespaces", duplicates, "each namespace once", "remove the duplicates")
        )
    if problems:
        raise ConfigError(problems)


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


def resource_flavor_manifest() -> dict[str, Any]:
    """The GB200 flavor: GB200 nodes by instance type, tolerating the GPU taint, placed by the Topology."""
    return {
        "apiVersion": kueue.API_VERSION,
        "kind": "ResourceFlavor",
        "metadata": _meta(FLAVOR_NAME),
        "spec": {
            "nodeLabels": {INSTANCE_TYPE_LABEL: NODE_INSTANCE_TYPE},
            "tolerations": [dict(GPU_TOLERATION)],
            "topologyName": TOPOLOGY_NAME,
        },
    }


def unplaced_flavor_manifest() -> dict[str, Any]:
    """The flavor without a Topology (zero quota): see UNPLACED_FLAVOR_NAME."""
    return {
        "apiVersion": kueue.API_VERSION,
        "kind": "ResourceFlavor",
        "metadata": _meta(UNPLACED_FLAVOR_NAME),
        "spec": {"nodeLabels": {INSTANCE_TYPE_LABEL: NODE_INSTANCE_TYPE}, "tolerations": [dict(GPU_TOLERATION)]},
    }


def cluster_queue_manifest(
    capacity: GpuCapacity, dra_devices: Mapping[str, int] | None = None, plugin_resources: bool = True
) -> dict[str, Any]:
    """The ClusterQueue: the stack's GPUs and EFA devices as device-plugin resources (unless `plugin_resources` is
    off: DRA mode), and the DRA devices of `dra_devices` (DeviceClass -> count) under their mapped names, open to
    every namespace that has a LocalQueue."""
    quota = {GPU_RESOURCE: capacity.gpus, EFA_RESOURCE: capacity.efa_devices} if plugin_resources else {}
    quota |= {kueue.quota_resource(c): n for c, n in sorted((dra_devices or {}).items())}
    return {
        "apiVersion": kueue.API_VERSION,
        "kind": "ClusterQueue",
        "metadata": _meta(CLUSTER_QUEUE_NAME),
        "spec": {
            # An empty selector admits workloads from every namespace; LocalQueues decide who can submit.
            "namespaceSelector": {},
            "resourceGroups": [
                {
                    "coveredResources": list(quota),
                    "flavors": [
                        {
                            "name": FLAVOR_NAME,
                            "resources": [{"name": name, "nominalQuota": n} for name, n in quota.items()],
                        },
                        {
                            "name": UNPLACED_FLAVOR_NAME,
                            "resources": [{"name": name, "nominalQuota": 0} for name in quota],
                        },
                    ],
                }
            ],
        },
    }


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
    unmanaged_namespaces: Iterable[str] = (),
    namespace: str = kueue.NAMESPACE,
    devices: Mapping[str, int] | None = None,
    kubernetes_version: str = eks_versions.DEFAULT_TEXT,
) -> dict[str, Any]:
    """The chart's default Kueue Configuration with only the toolkit's integrations (batch/job, MPIJob: no pod,
    Deployment or StatefulSet webhook that fails closed), the stack's own namespaces out of Kueue's webhooks, CPU,
    memory and ephemeral storage left out of quota (the ClusterQueue covers GPUs and EFA devices only), each DeviceClass
    of `devices` mapped to its quota resource, and the DRA gates off below Kubernetes 1.34
    (facts/kubernetes/kueue.py)."""
    config = copy.deepcopy(kueue.default_configuration())
    config["integrations"]["frameworks"] = list(kueue.REQUIRED_INTEGRATIONS)
    config["managedJobsNamespaceSelector"] = unmanaged_selector(unmanaged_namespaces, namespace)
    resources = config.setdefault("resources", {})
    resources["excludeResourcePrefixes"] = list(kueue.EXCLUDED_RESOURCE_PREFIXES)
    if devices:
        resources["deviceClassMappings"] = [
            {"name": kueue.quota_resource(c), "deviceClassNames": [c]} for c in sorted(devices)
        ]
    gates = kueue.feature_gates(kubernetes_version)
    if gates:
        config["featureGates"] = gates
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
    devices: Mapping[str, int] | None = None,
    kubernetes_version: str = eks_versions.DEFAULT_TEXT,
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
    config = kueue_configuration(unmanaged_namespaces, namespace, devices, kubernetes_version)
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


def podset_topology_annotations(nodes: int, nodes_per_ultraserver: int) -> dict[str, str]:
    """Pod-template annotations placing a pod set of `nodes` whole-node pods: inside one NVLink clique when it
    fits one UltraServer (required), else as few UltraServers as possible (preferred), spanning them over EFA."""
    if nodes <= nodes_per_ultraserver:
        return {kueue.PODSET_REQUIRED_TOPOLOGY: CLIQUE_LABEL}
    return {kueue.PODSET_PREFERRED_TOPOLOGY: ULTRASERVER_LABEL}
