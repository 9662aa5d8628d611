"""What the GPU nodes of a deployed stack should show, per node group: the yardstick of verify and the drift check."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from ultraserver.builders.imex_check import imex_check_args, target_job_names
from ultraserver.config.settings import Settings
from ultraserver.config.views import device_mode, group_node_devices, node_group_names, ultraservers_per_node_group
from ultraserver.facts.capacity.capacity_blocks import NODE_JOIN_GRACE_MINUTES, CapacityBlock
from ultraserver.facts.hardware import efa
from ultraserver.facts.hardware.devices import DEFAULT_DEVICE_MODE, DeviceMode, NodeDevices, node_gpus
from ultraserver.facts.hardware.instances import GB200_INSTANCE_TYPE


@dataclass(frozen=True)
class NodeGroupExpectation:
    """One GPU node group: a single UltraServer, or a grouped fleet of several."""

    name: str
    """Node group name, the value of the node label ultraserver.io/ultraserver."""
    ultraservers: int
    """UltraServers (NVLink cliques) the group spans."""
    instances: int
    """Instances in one UltraServer (9 or 18)."""
    nodes: int
    """Nodes the group runs in total (desired size)."""
    gpus_per_node: int
    """Allocatable nvidia.com/gpu every node must show."""
    efa_devices: int
    """Allocatable vpc.amazonaws.com/efa every node must show (the layout's EFA device count)."""
    efa_bandwidth_gbps: int
    """EFA bandwidth of one node in Gbit/s (from the layout)."""
    nvlink_jobs: tuple[str, ...] = ()
    """nvbandwidth MPIJobs of the group, one per UltraServer (empty when the IMEX check is off)."""
    windows: tuple[tuple[str, str], ...] = ()
    """When the group should be at full size, per Capacity Block: (start, scale-down) in UTC ISO 8601, the start
    plus the join grace (facts.capacity.capacity_blocks.NODE_JOIN_GRACE_MINUTES); empty for a group without a window."""
    node_devices: NodeDevices = field(default_factory=lambda: node_gpus(GB200_INSTANCE_TYPE))
    """The GPUs and EFA devices (per GPU's card group) of each node."""
    mode: DeviceMode = DEFAULT_DEVICE_MODE
    """The stack's device mode: in DRA mode each node publishes its devices as ResourceSlices (no allocatable
    nvidia.com/gpu or vpc.amazonaws.com/efa then)."""

    @property
    def fleet(self) -> bool:
        """Several UltraServers behind one node group: they are told apart by their clique."""
        return self.ultraservers > 1

    @property
    def full(self) -> bool:
        """Whether the group runs every instance of its UltraServers."""
        return self.nodes == self.ultraservers * self.instances

    def running(self, at: datetime) -> bool:
        """Whether the group should be at full size at ``at``: no windows (a fixed size), or inside one of them.
        verify, status and the rehearsal judge by it; the drift check's in-cluster copy (incluster/drift.running)
        reads the same windows from ``to_json``, and a test holds the two to one answer."""
        return not self.windows or any(_moment(start) <= at < _moment(until) for start, until in self.windows)

    def to_json(self) -> dict[str, object]:
        """The node facts as plain data (the drift check's input)."""
        return {
            "name": self.name,
            "ultraservers": self.ultraservers,
            "instances": self.instances,
            "nodes": self.nodes,
            "gpus": self.gpus_per_node,
            "efa": self.efa_devices,
            # DRA mode: no device-plugin resources to compare (verify's ResourceSlice check covers the devices).
            **({"allocatable": False} if self.mode.dra else {}),
            "windows": [list(w) for w in self.windows],
        }


def full_size_windows(blocks: Sequence[CapacityBlock]) -> tuple[tuple[str, str], ...]:
    """(from, until) of each block with a window, as UTC ISO 8601: from its start plus the join grace until its
    scale-down. Empty when a block has no window (the group's size is fixed)."""
    if any(b.window is None for b in blocks):
        return ()
    grace = timedelta(minutes=NODE_JOIN_GRACE_MINUTES)
    return tuple(
        (_iso(b.window.start + grace), _iso(b.usable_end))  # type: ignore[union-attr,arg-type]
        for b in blocks
    )


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_group_expectations(settings: Settings) -> list[NodeGroupExpectation]:
    """One expectation per GPU node group the stack creates."""
    mode = device_mode(settings)
    check = imex_check_args(settings, mode)
    jobs_by_target = {t.name: tuple(target_job_names(t)) for t in check.targets} if check else {}
    groups = []
    for group in settings.gpu_node_groups:
        summary = efa.summarize_layout(group.instance_type, list(group.efa_interfaces))
        gpus = int(efa.instance_facts(group.instance_type)["gpus"])
        for name in node_group_names(group):
            groups.append(
                NodeGroupExpectation(
                    name=name,
                    ultraservers=ultraservers_per_node_group(group),
                    instances=group.instances_per_ultraserver,
                    nodes=group.nodes_per_group,
                    gpus_per_node=gpus,
                    efa_devices=summary.efa_devices,
                    efa_bandwidth_gbps=summary.efa_bandwidth_gbps,
                    nvlink_jobs=jobs_by_target.get(name, ()),
                    windows=full_size_windows(group.blocks),
                    node_devices=group_node_devices(group),
                    mode=mode,
                )
            )
    return groups
