"""Checks of one node group's successive Capacity Blocks: in time order with room to switch, one reservation each,
and no more scheduled actions than Auto Scaling holds. Each Problem is keyed by ``name`` (the stack key
``capacityBlocks`` by default, a component's ``capacity_blocks`` argument when it passes its own)."""

from __future__ import annotations

from collections.abc import Sequence

from ultraserver.facts.aws import limits
from ultraserver.facts.capacity.capacity_blocks import SWITCH_SETTLE_MINUTES, CapacityBlock
from ultraserver.problems import Described, KeyName, Problem, under

_BLOCKS = under("capacityBlocks")


def sequence_problems(blocks: Sequence[CapacityBlock], name: KeyName = _BLOCKS, window: str = "") -> list[Problem]:
    """Why successive blocks cannot run one after another on one group; empty when they can.

    Each block starts no earlier than the previous one's scale-down time: the group must be at 0 between
    them for the launch template to move to the next reservation without a rolling update. ``window`` is the path of
    a block's window below the block (a stack file writes start and end on the block, CapacityBlock under .window).
    """
    problems = []
    for index, (before, after) in enumerate(zip(blocks, blocks[1:], strict=False), start=1):
        if before.window is None or after.window is None or before.switch_at is None:
            continue
        # After the settling time: the group must be at 0, its nodes gone, for the launch template to move to the next
        # reservation (and Auto Scaling rejects two scheduled actions of a group at the same time, see ACTION_PREFIX).
        if after.window.start <= before.switch_at:
            problems.append(
                Problem(
                    name(f"[{index}]{window}.start"),
                    after.window.start.isoformat(),
                    f"a start after block {index - 1} has scaled to 0 and settled ({before.switch_at.isoformat()}: "
                    f"its end minus its scale-down lead plus {SWITCH_SETTLE_MINUTES} minutes)",
                    f"list blocks in time order, or lengthen {name(f'[{index - 1}]{window}.scaleDownLeadMinutes')}",
                )
            )
    return problems


def schedule_count_problems(blocks: Sequence[CapacityBlock], key: str = "capacityBlocks") -> list[Problem]:
    """A group's blocks needing more scheduled actions (two each) than Auto Scaling holds per group; empty if not."""
    most = limits.SCHEDULED_ACTIONS_PER_GROUP.maximum
    if 2 * len(blocks) <= most:
        return []
    return [
        Problem(
            key,
            Described(f"{len(blocks)} blocks ({2 * len(blocks)} scheduled actions)"),
            f"at most {most // 2} blocks: an Auto Scaling group holds {most} scheduled actions",
            "list fewer blocks and add later ones after earlier ones end",
        )
    ]
