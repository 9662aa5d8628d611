"""The stack's window against the reservation's real one: the dates AWS reports for the current block's reservations
(DescribeCapacityReservations StartDate/EndDate, and DescribeCapacityBlocks' when it answers) are the stack's window.

A window a day or a year off plans cleanly, since nothing offline knows the real block: the scale-up then comes late
(a paid block sits idle) or early (launches fail until the block is active), and the scale-down misses the reclaim.
A capacity-block group with no window at all is never scaled for its block (a self-managed group without a desired
size sits at 0 for good), which fails as soon as its reservations exist, with their dates in the fix.
"""

from __future__ import annotations

from datetime import datetime, timezone

from ultraserver.preflight.report import FAIL, PASS, aggregate, check
from ultraserver.preflight.target import PreflightGroup
from ultraserver.problems import Problem


def _iso(moment: datetime | None) -> str:
    return "unknown" if moment is None else moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def window_key(group: PreflightGroup, index: int) -> str:
    """The stack key of the group's block ``index`` window, as the user wrote it."""
    at = group.settings_key or group.name
    return f"{at}.capacityBlocks[{index}]" if group.successive else f"{at}.reservationWindow"


def aws_dates(cr: dict, blocks: dict[str, dict]) -> tuple[datetime | None, datetime | None]:
    """(start, end) of a reservation as AWS reports it: its Capacity Block's dates when described, else its own."""
    block = blocks.get(cr.get("CapacityBlockId") or "", {})
    return block.get("StartDate") or cr.get("StartDate"), block.get("EndDate") or cr.get("EndDate")


def _windowless(name: str, group: PreflightGroup, index: int, found: dict[str, dict], blocks: dict) -> Problem:
    """A group with neither reservationWindow nor capacityBlocks whose reservations exist: FAIL, active or not. AWS
    already holds their dates, so the fix prints them; left as it is, the group gets no scale-up, no drain, no warning
    queue and no scheduled scale-down for the block that was paid for."""
    active = sorted(cr_id for cr_id, cr in found.items() if cr.get("State") == "active")
    key = window_key(group, index)
    detail = (
        "no reservationWindow and no capacityBlocks: nothing scales the group for its block (no scale-up at the "
        "start; no scale-down or drain before EC2 reclaims it 60 minutes before its end)"
        + (f"; active now: {', '.join(active)}" if active else "")
    )
    dates = sorted({(_iso(s), _iso(e)) for s, e in (aws_dates(cr, blocks) for cr in found.values())})
    written = " and ".join(f"start '{start}' and end '{end}'" for start, end in dates)
    fix = f"add {key} with {written} (the reservations' dates at AWS), then pulumi up"
    return check(name, FAIL, detail, fix)


def window_match_check(
    prefix: str, group: PreflightGroup, index: int, found: dict[str, dict], blocks: dict[str, dict]
) -> Problem:
    """The stack's window of block ``index`` is the window AWS reports for each of its reservations."""
    name = f"{prefix} window matches the reservation"
    window = group.blocks[index].window if index < len(group.blocks) else None
    if window is None:
        return _windowless(name, group, index, found, blocks)
    key = window_key(group, index)
    items: list[tuple[str, str, str]] = []
    fixes: dict[str, str] = {}
    for cr_id, cr in found.items():
        start, end = aws_dates(cr, blocks)
        wrong = []
        for field, real, written in (("start", start, window.start), ("end", end, window.end)):
            if real is not None and real != written:
                wrong.append(f"{field} {_iso(real)} (the stack says {_iso(written)})")
                fixes.setdefault(field, f"set {key}.{field} to '{_iso(real)}'")
        items.append((cr_id, FAIL if wrong else PASS, "; ".join(wrong) or f"{_iso(start)} to {_iso(end)}"))
    fix = "; ".join(fixes.values()) + " (aws ec2 describe-capacity-blocks prints them), then pulumi up"
    return aggregate(name, items, fix)
