"""The clock every time-dependent decision of a plan reads: the wall clock, or a moment pinned for one offline plan.

Capacity-block groups are sized and their past scheduled actions left out against "now", and settings checks
(an AMI release in the future, a block that has ended) against today. ``ultraserver plan --now`` pins the clock to
ask what a plan will look like at another moment (at a block's start, after a switch); ``pulumi up`` never pins it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime, time, timezone

_pinned: list[datetime] = []


def now() -> datetime:
    """The pinned moment, or the current UTC time."""
    return _pinned[-1] if _pinned else datetime.now(timezone.utc)


@contextmanager
def pinned(moment: datetime | None) -> Iterator[None]:
    """Within the block, :func:`now` returns ``moment`` (a time with a zone); with None, the wall clock."""
    if moment is not None and moment.tzinfo is None:
        raise ValueError(f"clock.pinned: {moment.isoformat()} has no time zone; give one (e.g. +00:00)")
    if moment is not None:
        _pinned.append(moment)
    try:
        yield
    finally:
        if moment is not None:
            _pinned.pop()


def moment_on(day: date) -> datetime:
    """:func:`now` when it falls on ``day`` (UTC); else the start of ``day``, for a check asked about another date.

    Settings rules take the day they judge; a Capacity Block ends at 11:30 UTC, so a check of whether it has ended
    needs the moment, and on the plan's own day that is the clock's.
    """
    current = now()
    if current.astimezone(timezone.utc).date() == day:
        return current
    return datetime.combine(day, time(0), tzinfo=timezone.utc)
