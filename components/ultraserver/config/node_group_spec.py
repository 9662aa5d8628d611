"""NodeGroupSpec: what one GPU node group comes to at the plan's moment, derived once where its inputs arrive.

A stack file's group gets it from its settings (``GpuNodeGroupSettings.spec``), a program's from its arguments
(``GpuNodeGroupArgs``); the component only reads it: the interface layout, the full size, the blocks and the one
current at ``now`` (whose reservation the launch template targets), the size now, the scheduled actions still ahead,
and the AMI release with the SSM parameter a self-managed group's image is read from.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ultraserver.facts import ami
from ultraserver.facts.capacity_blocks import (
    CapacityBlock,
    ScheduledAction,
    block_schedule,
    current_block,
    scheduled_actions,
    size_now,
)
from ultraserver.facts.efa import EfaInterface, LayoutSummary, summarize_layout


@dataclass(frozen=True)
class NodeGroupSpec:
    """One node group's derived values."""

    interfaces: tuple[EfaInterface, ...]
    """The network interface layout (card 0's ENA primary included)."""
    layout: LayoutSummary
    """EFA devices, ENA interfaces and bandwidth of that layout on one node."""
    full_size: int
    """Instances in the group: its UltraServers times the type's nodes (facts.ultraservers)."""
    blocks: tuple[CapacityBlock, ...]
    """The group's blocks in time order; one (its window may be None) without successive blocks."""
    current_block: int
    """Index of the block the group runs on at the plan's moment (``facts.capacity_blocks.current_block``)."""
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

    @property
    def block(self) -> CapacityBlock:
        """The block current at the plan's moment."""
        return self.blocks[self.current_block]

    @property
    def reservation_id(self) -> str | None:
        """The current block's reservation (None with a resource group, or when a program passed an Output)."""
        return self.block.reservation_ids[0] if self.block.reservation_ids else None


@dataclass(frozen=True)
class NodeGroupInputs:
    """What a spec is derived from: checked settings, or checked component arguments."""

    instance_type: str
    interfaces: tuple[EfaInterface, ...]
    full_size: int
    desired_size: int | None
    """As given: None runs the full size."""
    blocks: tuple[CapacityBlock, ...]
    successive: bool
    """Successive blocks (dated scheduled actions per block), not one reservation and window (undated actions)."""
    release_version: str
    kubernetes_version: str
    """The cluster's minor (the pinned release's SSM parameter is under it)."""
    custom_image: bool
    """A custom AMI id is given (with its release)."""
    managed: bool
    hold_at_zero: bool
    """scaleToZeroForUpgrade: desired 0 and no scheduled actions."""


def node_group_spec(given: NodeGroupInputs, now: datetime) -> NodeGroupSpec:
    """The spec at ``now``."""
    wanted = given.full_size if given.desired_size is None else given.desired_size
    index = current_block(given.blocks, now)
    window = given.blocks[index].window
    if given.hold_at_zero:
        size, actions = 0, []
    else:
        size = size_now(window, wanted, now)
        if not given.managed and window is None and given.desired_size is None:
            # EKS capacity-blocks guide (self-managed): create the group at desired 0 before the block is active and
            # scale it when the block starts; without a window the toolkit cannot know when, so it starts at 0.
            # Give reservationWindow (scheduled actions) or an explicit desiredSize once the block is active.
            size = 0
        if given.successive:
            actions = block_schedule(given.blocks, wanted, now)
        else:
            actions = scheduled_actions(window, wanted, now=now) if window else []
    return NodeGroupSpec(
        interfaces=given.interfaces,
        layout=summarize_layout(given.instance_type, given.interfaces),
        full_size=given.full_size,
        blocks=given.blocks,
        current_block=index,
        successive=given.successive,
        desired_size=size,
        actions=tuple(actions),
        release_version=given.release_version,
        ami_ssm_parameter=None
        if given.custom_image or given.managed
        else ami.pinned_ssm_parameter_name(given.kubernetes_version, given.release_version),
    )
