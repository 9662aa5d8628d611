"""Capacity Blocks per node group at a moment: which block each group runs on, and when it moves to the next.

A ``gpuNodeGroups[]`` entry with ``capacityBlocks`` lists, per block, one reservation per UltraServer; node group n
(the n-th name of ``node_group_names``) runs the n-th reservation of every block. A grouped entry (resource group)
has no reservation IDs: its blocks carry windows only, and its template targets the resource group.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from ultraserver.config.settings import GpuNodeGroupSettings, Settings
from ultraserver.facts.capacity_blocks import CapacityBlock, current_block, switch_window, window_state


def group_blocks(group: GpuNodeGroupSettings, position: int) -> tuple[CapacityBlock, ...]:
    """The blocks of the entry's ``position``-th node group: its own reservation of each block (none when grouped)."""
    return tuple(
        CapacityBlock(() if group.grouped else (block.reservation_ids[position],), block.window)
        for block in group.blocks
    )


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
    """future, active or ended (``facts.capacity_blocks.window_state``), or unscheduled (no window)."""
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
        for position, name in enumerate(group.node_group_names):
            blocks = group_blocks(group, position)
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
