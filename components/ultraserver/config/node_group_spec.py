"""NodeGroupSpec: what one GPU node group comes to at the plan's moment, derived once from its settings.

The component reads it: the interface layout, the full size, the blocks and the one current at ``now`` (whose
reservation the launch template targets), the size now, the scheduled actions still ahead, the AMI release with the
SSM parameter a self-managed group's image is read from, and the labels and tags the group's position adds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.facts.aws.aws_ids import EFA_LAYOUT, RESERVATION_ZONE
from ultraserver.facts.capacity.capacity_blocks import (
    CapacityBlock,
    ScheduledAction,
    block_schedule,
    current_block,
    scheduled_actions,
    size_now,
)
from ultraserver.facts.hardware.efa import EfaInterface, LayoutSummary, summarize_layout
from ultraserver.facts.kubernetes.scheduling import ULTRASERVER_LABEL
from ultraserver.facts.pins import ami


@dataclass(frozen=True)
class NodeGroupSpec:
    """One node group's derived values."""

    interfaces: tuple[EfaInterface, ...]
    """The network interface layout (card 0's ENA primary included)."""
    layout: LayoutSummary
    """EFA devices, ENA interfaces and bandwidth of that layout on one node."""
    full_size: int
    """Instances in the group: its UltraServers times the type's nodes (facts.hardware.ultraservers)."""
    blocks: tuple[CapacityBlock, ...]
    """The group's blocks in time order; one (its window may be None) without successive blocks."""
    current_block: int
    """Index of the block the group runs on at the plan's moment (``facts.capacity.capacity_blocks.current_block``)."""
    successive: bool
    """The blocks were given as successive blocks (dated scheduled actions), not as one reservation and window."""
    desired_size: int
    """Nodes the group asks for now: 0 outside the current block's usable window or while held for an upgrade."""
    actions: tuple[ScheduledAction, ...]
    """The scheduled actions still ahead: up at each block's start, to 0 before its end (none while held)."""
    release_version: str
    """The EKS AMI release the nodes boot: as set, else the toolkit's pin for the cluster's minor."""
    ami_ssm_parameter: str | None
    """The dated SSM parameter the template's ImageId is read from: self-managed groups on the EKS AMI only (a
    managed group's amiType and releaseVersion pick the AMI; a custom AMI is given by its id)."""
    labels: Mapping[str, str]
    """Node labels: the settings' labels plus the UltraServer label workloads select one NVLink domain by."""
    tags: Mapping[str, str]
    """AWS tags the group adds: its EFA layout and its reservation's zone (the policy pack reads them)."""

    @property
    def block(self) -> CapacityBlock:
        """The block current at the plan's moment."""
        return self.blocks[self.current_block]

    @property
    def reservation_id(self) -> str | None:
        """The current block's reservation (None with a resource group)."""
        return self.block.reservation_ids[0] if self.block.reservation_ids else None


def _blocks(group: GpuNodeGroupSettings, position: int, standby: CapacityBlock | None) -> tuple[CapacityBlock, ...]:
    """Successive blocks (capacityBlocks, handover: switch) keep all of the group's blocks; a single block, and a
    standby group, run one block only (and keep the undated scheduled action names)."""
    if standby is not None:
        return (standby,)
    if group.capacity_blocks:
        return group.position_blocks(position)
    target = () if group.grouped else (group.capacity_reservation_ids[position],)
    return (CapacityBlock(target, group.blocks[0].window),)


def node_group_spec(
    group: GpuNodeGroupSettings,
    position: int,
    now: datetime,
    kubernetes_version: str,
    standby: CapacityBlock | None = None,
) -> NodeGroupSpec:
    """Node group ``position`` of a checked entry at ``now`` on a cluster of ``kubernetes_version`` (with
    ``standby``, the group of that one block under handover: standby)."""
    successive = bool(group.capacity_blocks) and standby is None
    blocks = _blocks(group, position, standby)
    managed = group.mode == "managed"
    wanted = group.nodes_per_group
    index = current_block(blocks, now)
    window = blocks[index].window
    if group.scale_to_zero_for_upgrade:
        size, actions = 0, []
    else:
        size = size_now(window, wanted, now)
        if not managed and window is None and group.desired_size is None:
            # EKS capacity-blocks guide (self-managed): create the group at desired 0 before the block is active and
            # scale it when the block starts; without a window the toolkit cannot know when, so it starts at 0.
            # Give reservationWindow (scheduled actions) or an explicit desiredSize once the block is active.
            size = 0
        if successive:
            actions = block_schedule(blocks, wanted, now)
        else:
            actions = scheduled_actions(window, wanted, now=now) if window else []
    release = group.release_version or ami.default_release_version(kubernetes_version)
    return NodeGroupSpec(
        interfaces=group.efa_interfaces,
        layout=summarize_layout(group.instance_type, group.efa_interfaces),
        full_size=group.full_size,
        blocks=blocks,
        current_block=index,
        successive=successive,
        desired_size=size,
        actions=tuple(actions),
        release_version=release,
        ami_ssm_parameter=None
        if group.ami_id or managed
        else ami.pinned_ssm_parameter_name(kubernetes_version, release),
        # The IMEX check and workloads select one UltraServer (one NVLink domain) by this label.
        labels={**group.labels, ULTRASERVER_LABEL: group.node_group_names[position]},
        tags={EFA_LAYOUT: group.efa_preset, RESERVATION_ZONE: group.availability_zone},
    )
