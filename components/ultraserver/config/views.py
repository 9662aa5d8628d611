"""Views derived from the stack settings: node-group names per UltraServer and the addresses each GPU zone needs.

Computed once here; the platform, preflight, plan report and policy read them from this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# From the model modules, not config.settings: the settings rules (config/version_rules.py) use these views too.
from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.model import Settings
from ultraserver.config.subnets import ips_needed
from ultraserver.facts.hardware import devices, efa
from ultraserver.facts.hardware.instances import GB200_INSTANCE_TYPE
from ultraserver.facts.hardware.ultraservers import MAX_NODES
from ultraserver.facts.kubernetes.scheduling import ULTRASERVER_LABEL


def gpu_ip_needs(settings: Settings) -> dict[str, int]:
    """Addresses each GPU zone needs: nodes times (pods + interfaces that carry an IP)."""
    needs: dict[str, int] = {}
    for group in settings.gpu_node_groups:
        summary = efa.summarize_layout(group.instance_type, list(group.efa_interfaces))
        nodes = group.nodes_per_group * group.node_groups
        needs[group.availability_zone] = needs.get(group.availability_zone, 0) + ips_needed(
            nodes, settings.network.gpu_pods_per_node, summary.ena_interfaces
        )
    return needs


def node_group_names(group: GpuNodeGroupSettings) -> list[str]:
    """Names of the node groups an entry creates: one per UltraServer unless grouped."""
    return group.node_group_names


@dataclass(frozen=True)
class ImexTarget:
    """One UltraServer to check."""

    name: str
    """Short name of the UltraServer (a DNS label); the job is 'nvbandwidth-<name>'."""
    node_selector: Mapping[str, str]
    """Labels carried only by this UltraServer's nodes (e.g. its node group label)."""
    instance_count: int = MAX_NODES
    """Instances in the UltraServer (facts.hardware.ultraservers.NODES of its type)."""
    ultraservers: int = 1
    """UltraServers behind the selector: 1 for a node group per UltraServer, N for a grouped fleet (one job each)."""
    nodes_per_ultraserver: int | None = None
    """Nodes of each UltraServer a job may use (it runs fewer than `instance_count`, or holds spares); None means
    `instance_count`."""
    node_devices: devices.NodeDevices = field(default_factory=lambda: devices.node_gpus(GB200_INSTANCE_TYPE))
    """The GPUs and paired EFA devices of one of its nodes (a worker takes them whole: claimed in DRA mode, requested
    from the device plugins otherwise)."""

    @property
    def available_nodes(self) -> int:
        """Nodes one job of this target can span at most."""
        return min(self.instance_count, self.nodes_per_ultraserver or self.instance_count)


def ultraservers_per_node_group(group: GpuNodeGroupSettings) -> int:
    """UltraServers one node group of the entry covers (several only for a grouped fleet)."""
    return max(1, group.ultraservers // group.node_groups)


def spare_groups(settings: Settings) -> list[GpuNodeGroupSettings]:
    """The GPU node group entries that hold spares."""
    return [g for g in settings.gpu_node_groups if g.spares_per_ultraserver]


def imex_targets(settings: Settings) -> list[ImexTarget]:
    """One IMEX check target per UltraServer node group, selected by its UltraServer label."""
    targets = []
    for group in settings.gpu_node_groups:
        per_group = ultraservers_per_node_group(group)
        for name in node_group_names(group):
            targets.append(
                ImexTarget(
                    name=name,
                    node_selector={ULTRASERVER_LABEL: name},
                    instance_count=group.instances_per_ultraserver,
                    ultraservers=per_group,
                    nodes_per_ultraserver=group.active_nodes_per_ultraserver,
                    node_devices=group_node_devices(group),
                )
            )
    return targets


def group_node_devices(group: GpuNodeGroupSettings) -> devices.NodeDevices:
    """The GPUs and paired EFA devices of one node of the group (what a whole-node worker takes)."""
    return devices.node_devices(group.instance_type, list(group.efa_interfaces))


def device_mode(settings: Settings) -> devices.DeviceMode:
    """The stack's device mode, once: ``kubernetes.devices`` on the cluster's Kubernetes minor."""
    return devices.DeviceMode(settings.kubernetes.devices, settings.cluster.kubernetes_version)


def kueue_enabled(settings: Settings) -> bool:
    """Whether the stack installs Kueue: as set, else on when the stack has GPU groups."""
    enabled = settings.kubernetes.kueue.enabled
    return bool(settings.gpu_node_groups) if enabled is None else enabled


def needs_termination_handler(settings: Settings) -> bool:
    """Self-managed groups need the Node Termination Handler; managed node groups drain on their own."""
    return any(group.mode == "self-managed" for group in settings.gpu_node_groups)


def installed_releases(settings: Settings) -> tuple[str, ...]:
    """The release fields (config.kubernetes_model.RELEASE_KEYS) whose charts the stack installs, as the Kubernetes
    layer (resources/kubernetes_layer.py) declares them: EFA devices come from DRANET in DRA mode,
    else the EFA plugin."""
    k = settings.kubernetes
    optional = {
        "dranet": k.devices == devices.DRA,
        "efa_device_plugin": k.devices != devices.DRA,
        "prometheus_stack": k.prometheus_stack_enabled,
        "kueue": kueue_enabled(settings),
        "node_termination_handler": needs_termination_handler(settings),
    }
    return ("gpu_operator", "dra_driver", *(field for field, on in optional.items() if on))
