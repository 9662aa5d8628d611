"""The cluster a stack's plan stands up, once its blocks are up: nodes, devices and plugin pods, as API objects.

GPU nodes register with the labels and taints of their launch template (``rehearse.registration``) plus what the
kubelet and the GPU Operator's feature discovery add (hostname, instance type, zone, ``nvidia.com/gpu.present``,
``nvidia.com/gpu.clique``: one ``<ClusterUUID>.<CliqueID>`` per UltraServer). Their devices follow the facts the
toolkit keeps for the group: in plugins mode allocatable ``nvidia.com/gpu`` and ``vpc.amazonaws.com/efa`` of the
group's layout; in DRA mode the two drivers' ResourceSlices instead. A node group is at full size inside one of
its Capacity Block windows (or always, without one) and at 0 nodes outside them, as the plan's scheduled actions
leave it.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ultraserver.builders.expected_nodes import NodeGroupExpectation
from ultraserver.config.settings import Settings
from ultraserver.config.views import node_group_names
from ultraserver.facts.capacity.capacity_blocks import NODE_JOIN_GRACE_MINUTES
from ultraserver.facts.hardware.allocatable import allocatable_cpu_millicores
from ultraserver.facts.kubernetes.scheduling import (
    CLIQUE_LABEL,
    EFA_RESOURCE,
    GPU_PRESENT_LABEL,
    GPU_RESOURCE,
    INSTANCE_TYPE_LABEL,
)
from ultraserver.facts.pins import gpu_operator
from ultraserver.facts.pins.charts import DRANET, EFA_DEVICE_PLUGIN, GPU_OPERATOR
from ultraserver.incluster.drift import running
from ultraserver.rehearse.cloud import Cloud
from ultraserver.rehearse.registration import Registration
from ultraserver.rehearse.slices import node_slices
from ultraserver.verify.expect import StackExpectation

HOSTNAME_LABEL = "kubernetes.io/hostname"
ZONE_LABEL = "topology.kubernetes.io/zone"
JOINED_AFTER = timedelta(minutes=10)
KUBELET_MAX_PODS = 110
"""The kubelet's default ``maxPods`` (KubeletConfiguration). UNVERIFIED for a P6e node: nodeadm may set another
limit from the instance's network interfaces; a rehearsal needs only room for its few pods per node."""
"""When a node turns Ready after its block starts in a rehearsal (within the toolkit's join grace)."""


def iso(moment: datetime) -> str:
    """RFC 3339 in UTC, as the API writes timestamps."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class GpuNode:
    """One GPU node of the rehearsal and what can go wrong with it."""

    name: str
    group: NodeGroupExpectation
    clique: str
    zone: str
    instance_type: str
    registration: Registration
    joined: datetime
    ready: bool = True
    efa_devices: int = -1
    """EFA devices the node shows; -1 for the group's layout."""

    def labels(self) -> dict[str, str]:
        """The node's labels: its launch template's, the kubelet's and the cloud provider's, and GFD's."""
        return {
            **self.registration.labels,
            HOSTNAME_LABEL: self.name,
            INSTANCE_TYPE_LABEL: self.instance_type,
            ZONE_LABEL: self.zone,
            GPU_PRESENT_LABEL: "true",
            CLIQUE_LABEL: self.clique,
        }

    def to_api(self) -> dict[str, Any]:
        """The Node object, as the kubelet and the device plugins leave it."""
        labels = self.labels()
        efa = self.group.efa_devices if self.efa_devices < 0 else self.efa_devices
        plugins = {GPU_RESOURCE: str(self.group.gpus_per_node), EFA_RESOURCE: str(efa)}
        # The kubelet's own resources, which a scheduler and Kueue's topology placement count: CPU as nodeadm leaves
        # it (facts/hardware/allocatable.py) and the pod limit.
        cpu = allocatable_cpu_millicores(self.instance_type)
        kubelet = {**({"cpu": f"{cpu}m"} if cpu is not None else {}), "pods": str(KUBELET_MAX_PODS)}
        allocatable = kubelet | ({} if self.group.mode.dra else plugins)
        ready = {
            "type": "Ready",
            "status": "True" if self.ready else "Unknown",
            "reason": "KubeletReady" if self.ready else "NodeStatusUnknown",
            "lastTransitionTime": iso(self.joined),
        }
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": self.name, "labels": labels, "creationTimestamp": iso(self.joined)},
            # The cloud provider sets aws:///<zone>/<instance id> (status reads the instance ids from it).
            "spec": {
                "taints": [dict(t) for t in self.registration.taints],
                "providerID": f"aws:///{self.zone}/{self.instance_id}",
            },
            "status": {"allocatable": allocatable, "capacity": dict(allocatable), "conditions": [ready]},
        }

    @property
    def instance_id(self) -> str:
        """A stable EC2 instance id for the node (i- and 17 hex digits)."""
        return "i-" + uuid.uuid5(uuid.NAMESPACE_URL, f"ultraserver:{self.name}").hex[:17]

    def slices(self) -> list[dict[str, Any]]:
        """The DRA drivers' ResourceSlices of the node (none in plugins mode)."""
        if not self.group.mode.dra:
            return []
        found = node_slices(self.name, self.group.node_devices)
        if self.efa_devices == 0:
            found[1]["spec"]["devices"] = [d for d in found[1]["spec"]["devices"] if "EFA" not in str(d)]
        return found


@dataclass
class Cluster:
    """Everything the rehearsal serves, before it is put into the emulator."""

    expected: StackExpectation
    at: datetime
    gpu_nodes: list[GpuNode] = field(default_factory=list)
    system_nodes: list[dict[str, Any]] = field(default_factory=list)
    objects: list[dict[str, Any]] = field(default_factory=list)
    """The toolkit's own objects from the plan, and the DeviceClasses the charts create."""
    kubelet_plugin: tuple[str, dict[str, str]] | None = None
    """(namespace, labels) of the DRA driver's kubelet plugin pods as its chart makes them (rehearse/charted.py);
    None when the chart runs none."""
    releases: list[Mapping[str, Any]] = field(default_factory=list)
    """The inputs of the plan's Helm releases (name, namespace, chart)."""
    running_job: list[GpuNode] = field(default_factory=list)
    """Nodes a user's job runs on (one worker each); none unless a fault puts one there."""
    notices: list[dict[str, Any]] = field(default_factory=list)
    """EC2 expiration warnings the drain has seen (reservation, end, seen)."""
    cloud: Cloud | None = None
    """What AWS holds for the stack (reservations, Auto Scaling groups, the alert topic); None without a drain."""
    forbidden: list[tuple[str, str]] = field(default_factory=list)
    """Requests the API server refuses with 403 (method, '<group>/<version>/<plural>'), as RBAC refuses a verb the
    plan's role lacks."""

    def node(self, name: str) -> GpuNode:
        """A GPU node by name."""
        return next(n for n in self.gpu_nodes if n.name == name)


def cronjob_env(objects: Sequence[Mapping[str, Any]], variable: str) -> dict[str, str] | None:
    """The environment of the plan's CronJob container that sets ``variable``, as its pod sees it (a value from a
    ConfigMap key of the plan resolved, as the kubelet does when the container starts); None when no CronJob sets it.
    """
    config_maps = {
        (o["metadata"].get("namespace", ""), o["metadata"]["name"]): o.get("data") or {}
        for o in objects
        if o["kind"] == "ConfigMap"
    }
    for obj in objects:
        if obj["kind"] != "CronJob":
            continue
        namespace = obj["metadata"].get("namespace", "")
        for container in obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]:
            env = {e["name"]: _env_value(e, namespace, config_maps) for e in container.get("env") or []}
            if variable in env:
                return env
    return None


def _env_value(entry: Mapping[str, Any], namespace: str, config_maps: Mapping[tuple[str, str], Any]) -> str:
    ref = (entry.get("valueFrom") or {}).get("configMapKeyRef")
    if ref is None:
        return str(entry.get("value", ""))
    return str(config_maps.get((namespace, ref["name"]), {}).get(ref["key"], ""))


def _joined(group: NodeGroupExpectation, at: datetime) -> datetime | None:
    """When the group's nodes joined for the block current at ``at``; None when the group is at 0 nodes then."""
    if not running(group.to_json(), at):
        return None
    for start, until in group.windows:
        # A window opens at the block's start plus the join grace.
        started = datetime.fromisoformat(start.replace("Z", "+00:00"))
        if started <= at < datetime.fromisoformat(until.replace("Z", "+00:00")):
            return started - timedelta(minutes=NODE_JOIN_GRACE_MINUTES) + JOINED_AFTER
    return at - timedelta(hours=1)


def gpu_nodes(
    settings: Settings, expected: StackExpectation, registrations: dict[str, Registration], at: datetime
) -> list[GpuNode]:
    """Every GPU node running at ``at``: each group's nodes, one clique per UltraServer."""
    by_name = {g.name: g for g in expected.groups}
    nodes = []
    for g_index, group in enumerate(settings.gpu_node_groups):
        for n_index, name in enumerate(node_group_names(group)):
            facts = by_name[name]
            joined = _joined(facts, at)
            if joined is None:
                continue
            for i in range(facts.nodes):
                us = i // facts.instances
                # GFD's value: the fabric's ClusterUUID and CliqueID; one per UltraServer, stable per stack.
                clique = f"{uuid.uuid5(uuid.NAMESPACE_URL, f'ultraserver:{settings.cluster.name}/{name}/{us}')}.1"
                nodes.append(
                    GpuNode(
                        name=f"ip-10-{100 + g_index}-{n_index * 16 + i // 250}-{i % 250 + 4}.ec2.internal",
                        group=facts,
                        clique=clique,
                        zone=group.availability_zone,
                        instance_type=group.instance_type,
                        registration=registrations.get(name, Registration()),
                        joined=joined,
                    )
                )
    return nodes


def system_nodes(count: int, labels: dict[str, str], at: datetime) -> list[dict[str, Any]]:
    """The system node group's nodes (no taint, no GPUs)."""
    nodes = []
    for i in range(count):
        name = f"ip-10-0-0-{i + 10}.ec2.internal"
        nodes.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {**labels, HOSTNAME_LABEL: name}},
                "spec": {},
                "status": {
                    "conditions": [
                        {"type": "Ready", "status": "True", "lastTransitionTime": iso(at - timedelta(days=1))}
                    ]
                },
            }
        )
    return nodes


def pod(namespace: str, name: str, node: str, labels: dict[str, str], ready: bool, at: datetime) -> dict[str, Any]:
    """A pod bound to a node, as its controller and kubelet leave it (Running; Ready or not)."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels, "creationTimestamp": iso(at)},
        "spec": {"nodeName": node, "containers": [{"name": "main", "image": "rehearsal"}]},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False", "lastTransitionTime": iso(at)}],
        },
    }


NODE_PLUGIN_CHARTS = (GPU_OPERATOR, EFA_DEVICE_PLUGIN, DRANET)
"""Charts whose daemonsets run a device plugin on every GPU node (the GPU Operator's device plugin, the EFA device
plugin in plugins mode, DRANET in DRA mode)."""
INSTANCE_LABEL = "app.kubernetes.io/instance"
"""Helm's recommended label naming the release (helm.sh/docs/chart_best_practices/labels); that each chart sets it
on its daemonset's pods is UNVERIFIED, and no day-2 check reads it."""


def plugin_pods(cluster: Cluster, releases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """On every GPU node: the DRA driver's kubelet plugin (the pod verify reads), with the namespace and labels its
    chart gives it, and a pod of each node-level device-plugin release of the plan; Ready on Ready nodes."""
    found = []
    for node in cluster.gpu_nodes:
        short = node.name.split(".")[0]
        if cluster.kubelet_plugin is not None:
            namespace, labels = cluster.kubelet_plugin
            found.append(pod(namespace, f"kubelet-plugin-{short}", node.name, labels, node.ready, node.joined))
        for release in releases:
            chart = str(release.get("chart", "")).rsplit("/", 1)[-1]
            name, namespace = release["name"], release.get("namespace") or "default"
            if chart == GPU_OPERATOR:
                # The operator's operands, one DaemonSet each, with the chart's operand labels.
                managed, _, by = gpu_operator.OPERAND_SELECTOR.partition("=")
                for app in cluster.expected.gpu_operands:
                    labels = {managed: by, gpu_operator.APP_LABEL: app}
                    found.append(pod(namespace, f"{app}-{short}", node.name, labels, node.ready, node.joined))
            elif chart in NODE_PLUGIN_CHARTS:
                labels = {INSTANCE_LABEL: name}
                found.append(pod(namespace, f"{name}-{short}", node.name, labels, node.ready, node.joined))
    for plugin in found:
        # Each runs as a DaemonSet's pod (a drain leaves those alone).
        owner = plugin["metadata"]["name"].rsplit("-ip-", 1)[0]
        plugin["metadata"]["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": owner, "uid": f"rehearsal-{owner}"}
        ]
    return found
