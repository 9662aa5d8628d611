"""Capacity Blocks that have ended and scheduled actions already due, at the plan's moment: what the plan leaves out.

AWS refuses a scheduled action in the past and launches nothing into an expired reservation (sources at
``facts.capacity.capacity_blocks.has_ended`` and ``ACTION_PREFIX``). Neither is a mistake in the stack file: a block
ends and
an action falls due as time passes. So the plan leaves them out and says why, instead of refusing the stack:

- an ended block gets no launch template, node group or scheduled action; under ``handover: switch`` the group runs on
  a later block, and a group whose every block has ended is left out whole (a deployed one, at 0 nodes since its
  scale-down, is removed by the next ``pulumi up``), as ``handover: standby`` drops an ended block's own group
  (``config.blocks.standby_groups``);
- a running block's past actions are left out and the group's desired size is set directly (``size_now``);
- an action due within ``ACTION_DEPLOY_MARGIN_MINUTES`` is planned, with a warning that a later deploy is refused.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from ultraserver import clock
from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.model import Settings
from ultraserver.facts.capacity.capacity_blocks import ACTION_DEPLOY_MARGIN_MINUTES, CapacityBlock, has_ended
from ultraserver.problems import INFO, WARNING, Problem

EXPIRED_LAUNCH = (
    "a block that has not ended: EC2 launches nothing into an expired reservation (EC2 API reference, "
    "CapacityReservation EndDate: 'you can no longer launch instances into it')"
)
PAST_ACTION = (
    "a scheduled action in the future: Auto Scaling refuses one in the past (PutScheduledUpdateGroupAction: 'If you "
    "try to schedule your action in the past, Amazon EC2 Auto Scaling returns an error message.')"
)


def group_expired(group: GpuNodeGroupSettings, now: datetime) -> bool:
    """Whether every block of the entry has ended at ``now``: the plan then makes no node group for it."""
    return all(has_ended(block, now) for block in group.blocks)


def live_settings(s: Settings, now: datetime) -> Settings:
    """The settings without the GPU groups whose every block has ended at ``now``: the plan makes no node group for
    them, so no fabric check targets their nodes and no Kueue quota counts them. Decisions about what the stack
    installs stay with the stack's own groups: Kueue is not uninstalled when a block ends, since its chart renders its
    CRDs as templates with no resource-policy keep (charts/kueue/templates/crd/ at v0.19.2), so an uninstall would
    delete them and every user's queue."""
    groups = tuple(g for g in s.gpu_node_groups if not group_expired(g, now))
    return s if len(groups) == len(s.gpu_node_groups) else s.model_copy(update={"gpu_node_groups": groups})


def _key(group: GpuNodeGroupSettings, at: str, index: int) -> str:
    return f"{at}.capacityBlocks[{index}]" if group.capacity_blocks else f"{at}.reservationWindow"


def _ended(group: GpuNodeGroupSettings, at: str, now: datetime) -> list[Problem]:
    whole = group_expired(group, now)
    found = []
    for index, block in enumerate(group.blocks):
        if not has_ended(block, now):
            continue
        key = _key(group, at, index)
        assert block.window is not None  # has_ended: only a block with a window ends
        skipped = (
            "the plan leaves the whole group out (no launch template, node group or scheduled action; the next "
            "`pulumi up` removes a deployed one, at 0 nodes since its scale-down)"
            if whole
            else "the plan makes nothing for this block (no launch template, node group or scheduled action)"
        )
        reservation = ", ".join(block.reservation_ids) or "the resource group's"
        found.append(
            Problem(
                f"{key}.end",
                block.window.end.isoformat(),
                f"{EXPIRED_LAUNCH}; reservation {reservation} expired at this end",
                f"{skipped}; remove {key} from the stack, or add the successor block under capacityBlocks",
                WARNING,
            )
        )
    return found


def _actions(block: CapacityBlock, key: str, now: datetime) -> list[Problem]:
    """The running or coming block's actions that are past (left out) or due too soon to be sure of (warned)."""
    assert block.window is not None and block.usable_end is not None
    margin = now + timedelta(minutes=ACTION_DEPLOY_MARGIN_MINUTES)
    found = []
    scaled_down = block.usable_end <= now  # then only the scale-down says what the group is at (0)
    for field, moment, size in (("start", block.window.start, "full size"), ("end", block.usable_end, "0")):
        if field == "start" and scaled_down:
            continue
        what = "scale-up" if field == "start" else f"scale-down (end minus {block.window.scale_down_lead_minutes} min)"
        if moment <= now:
            found.append(
                Problem(
                    f"{key}.{field}",
                    f"{what} at {moment.isoformat()}",
                    PAST_ACTION,
                    f"nothing to do: the plan leaves the {what} action out and sets the group's desired size to {size} "
                    "directly",
                    INFO,
                )
            )
        elif moment <= margin:
            found.append(
                Problem(
                    f"{key}.{field}",
                    f"{what} at {moment.isoformat()}",
                    f"{PAST_ACTION}; this {what} action is due within {ACTION_DEPLOY_MARGIN_MINUTES} minutes, and a "
                    "`pulumi up` that creates it after that time fails",
                    f"deploy now, or after {moment.isoformat()} (the plan then sets the desired size directly)",
                    WARNING,
                )
            )
    return found


def expiry_problems(g: GpuNodeGroupSettings, at: str, version: str, today: date) -> list[Problem]:
    """Ended blocks (left out, warned) and the past or imminent scheduled actions of the blocks still to come."""
    now = clock.moment_on(today)
    found = _ended(g, at, now)
    for index, block in enumerate(g.blocks):
        if block.window is not None and not has_ended(block, now) and block.usable_end is not None:
            found += _actions(block, _key(g, at, index), now)
    return found


def program_blocks_ended(group: GpuNodeGroupSettings, at: str, now: datetime) -> list[Problem]:
    """An error when every block of a group a program hands a node group has ended: unlike a stack file, whose blocks
    end while it stays the same (and so are left out with a warning), a program's arguments are written for this run."""
    if not group_expired(group, now):
        return []
    last = group.blocks[-1]
    assert last.window is not None  # has_ended: only a block with a window ends
    return [
        Problem(
            f"{_key(group, at, len(group.blocks) - 1)}.end",
            last.window.end.isoformat(),
            f"{EXPIRED_LAUNCH}; every block of this group has ended",
            "pass the next block's reservation and window, or leave this node group out of the program",
        )
    ]
