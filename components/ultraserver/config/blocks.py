"""Capacity Blocks per node group at a moment: which block each group runs on, and when it moves to the next.

A ``gpuNodeGroups[]`` entry with ``capacityBlocks`` lists, per block, one reservation per UltraServer; node group n
(the n-th name of ``node_group_names``) runs the n-th reservation of every block. A grouped entry (resource group)
has no reservation IDs: its blocks carry windows only, and its template targets the resource group.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.model import Settings
from ultraserver.facts.capacity.capacity_blocks import (
    CapacityBlock,
    current_block,
    has_ended,
    switch_window,
    window_state,
)
from ultraserver.problems import WARNING, Problem


@dataclass(frozen=True)
class BlockView:
    """One node group's Capacity Block at a moment."""

    group: str
    """Node group name (``<name>`` or ``<name>-<n>``)."""
    index: int
    """Index of the current block in ``capacityBlocks`` (0 without it)."""
    blocks: int
    """Blocks the group lists."""
    reservation_ids: tuple[str, ...]
    """The current block's reservation of this group (empty for a resource group)."""
    state: str
    """future, active or ended (``facts.capacity.capacity_blocks.window_state``), or unscheduled (no window)."""
    next_switch: tuple[datetime, datetime] | None
    """When a ``pulumi up`` moves the template to the next block at 0 nodes: (scale-down, next start); None if last."""
    switch_due: datetime | None = None
    """The previous block has scaled down and this one has not started: deploy before this time."""

    def line(self) -> str:
        """One line for the plan report: the node group and its :meth:`summary`."""
        return f"{self.group}: {self.summary()}"

    def summary(self) -> str:
        """The current block, its reservation and state, and when `pulumi up` must switch to the next."""
        target = ", ".join(self.reservation_ids) or "resource group"
        text = f"block {self.index + 1} of {self.blocks} ({target}) {self.state}"
        if self.switch_due:
            text += f"; switch due: run `pulumi up` before {self.switch_due:%Y-%m-%d %H:%M}Z"
        if self.next_switch:
            since, until = (f"{t:%Y-%m-%d %H:%M}Z" for t in self.next_switch)
            text += f"; next switch: run `pulumi up` between {since} and {until}"
        return text


def _state(block: CapacityBlock, now: datetime) -> str:
    return "unscheduled" if block.window is None else window_state(block.window, now)


def _due(blocks: tuple[CapacityBlock, ...], index: int, now: datetime) -> datetime | None:
    window = switch_window(blocks, index - 1) if index > 0 else None
    return window[1] if window and window[0] <= now < window[1] else None


def block_views(settings: Settings, now: datetime) -> list[BlockView]:
    """Per GPU node group at ``now``: the current block, its reservation, its window state and the next switch."""
    views = []
    for group in settings.gpu_node_groups:
        if group.handover == "standby" and group.capacity_blocks:
            continue  # no switch to run: standby_timelines describes its block groups
        for position, name in enumerate(group.node_group_names):
            blocks = group.position_blocks(position)
            index = current_block(blocks, now)
            views.append(
                BlockView(
                    group=name,
                    index=index,
                    blocks=len(blocks),
                    reservation_ids=blocks[index].reservation_ids,
                    state=_state(blocks[index], now),
                    next_switch=switch_window(blocks, index),
                    switch_due=_due(blocks, index, now),
                )
            )
    return views


@dataclass(frozen=True)
class StandbyGroup:
    """One block's own node group under ``handover: standby``: made ahead at 0, scaled by its scheduled actions."""

    name: str
    """Node group name: ``<group>-<block start, UTC>`` (by start, so it stays put when earlier blocks are removed)."""
    block: CapacityBlock
    """The block: this group's reservation of it (none for a resource group) and its window."""

    def timeline(self) -> str:
        """Create, scale up, scale down and end of the block's group, for the plan report."""
        window = self.block.window
        assert window is not None and self.block.usable_end is not None  # blocks_problems: every block has one
        return (
            f"{', '.join(self.block.reservation_ids) or 'resource group'}; create: any pulumi up before "
            f"{window.start:%Y-%m-%d %H:%M}Z (at 0 nodes); scale up: {window.start:%Y-%m-%d %H:%M}Z; "
            f"scale down: {self.block.usable_end:%Y-%m-%d %H:%M}Z; end: {window.end:%Y-%m-%d %H:%M}Z"
        )


def standby_groups(group: GpuNodeGroupSettings, position: int, name: str, now: datetime | None) -> list[StandbyGroup]:
    """The node groups of ``handover: standby`` at ``now``: one per block that has not ended (every block if None).

    Each exists from the first ``pulumi up`` that sees its block, at desired 0, with its launch template on its own
    reservation; its scheduled actions scale it up at the start and to 0 before the end. EKS capacity-blocks guide
    (awsdocs/amazon-eks-user-guide @2ef9e386, latest/ug/nodes/capacity-blocks-mng.adoc: with desiredSize 0 at create
    time, "Create a scheduled scaling policy for the ASG that aligns to the Capacity Block reservation start time";
    capacity-blocks.adoc for self-managed groups: "create ... prior to the capacity reservation becoming active, then
    set the desired capacity to 0"). So no template ever changes between blocks and nobody acts in the gap; an ended
    block's group (at 0) is removed by whichever ``pulumi up`` comes next.
    """
    return [
        StandbyGroup(f"{name}-{block.window.start.astimezone(timezone.utc):%Y%m%dt%H%Mz}", block)
        for block in group.position_blocks(position)
        if block.window is not None and (now is None or not has_ended(block, now))
    ]


def standby_timelines(settings: Settings, now: datetime | None) -> dict[str, StandbyGroup]:
    """Every standby block group at ``now`` by node group name, for the plan's timeline lines."""
    return {
        standby.name: standby
        for group in settings.gpu_node_groups
        if group.handover == "standby" and group.capacity_blocks
        for position, name in enumerate(group.node_group_names)
        for standby in standby_groups(group, position, name, now)
    }


def created_node_groups(group: GpuNodeGroupSettings) -> int:
    """Node groups an entry may hold at once: one per UltraServer, times its blocks under ``handover: standby``."""
    return group.node_groups * (len(group.blocks) if group.handover == "standby" else 1)


def standby_problems(group: GpuNodeGroupSettings, at: str) -> list[Problem]:
    """``handover: standby`` needs ``capacityBlocks``: without them there is no block to make a group for."""
    if group.handover != "standby" or group.capacity_blocks:
        return []
    return [
        Problem(
            f"{at}.handover",
            group.handover,
            "standby with capacityBlocks only (one node group per block)",
            "list the blocks under capacityBlocks, or remove handover",
        )
    ]


def switch_problems(g: GpuNodeGroupSettings, at: str) -> list[Problem]:
    """``handover: switch`` over several blocks: each gap needs a ``pulumi up``, or the next block gets no node."""
    gaps = [(i, w) for i in range(len(g.blocks) - 1) if (w := switch_window(g.blocks, i)) is not None]
    if g.handover != "switch" or not gaps:
        return []
    deadlines = "; ".join(f"before block {i + 2}: {a:%Y-%m-%d %H:%M}Z to {b:%Y-%m-%d %H:%M}Z" for i, (a, b) in gaps)
    return [
        Problem(
            f"{at}.handover",
            g.handover,
            "a handover that needs nobody online between blocks",
            f"set handover: standby (or remove it: standby is the default with several blocks); with switch a "
            f"`pulumi up` must run in each gap ({deadlines}) or the next block gets no node; the in-cluster "
            "drain alerts at each deadline a deploy missed",
            WARNING,
        )
    ]
