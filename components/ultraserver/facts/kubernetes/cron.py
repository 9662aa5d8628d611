"""The five-field cron schedule a Kubernetes CronJob accepts.

The API server parses ``spec.schedule`` with robfig/cron v3's standard parser (``cron.ParseStandard``, called by
the CronJob validation's ``validateScheduleFormat``). robfig/cron v3 parser.go ``getRange`` refuses "beginning of
range (%d) below minimum (%d)", "end of range (%d) above maximum (%d)", "beginning of range (%d) beyond end of range
(%d)" and "step of range should be a positive number"; ``N/step`` means N to the field's maximum; ``*`` and ``?``
are the whole range; numbers are Go ``strconv.Atoi`` (ASCII digits). Field bounds are spec.go's: minute 0-59, hour
0-23, day of month 1-31, month 1-12 (jan-dec), day of week 0-6 (sun-sat). Read 2026-11-27 (robfig/cron v3 parser.go
getRange). Descriptors such as ``@hourly`` are left out: the stack setting takes five fields.
"""

from __future__ import annotations

import re

_MONTHS = {name: number for number, name in enumerate(("jan feb mar apr may jun jul aug sep oct nov dec").split(), 1)}
_DAYS = {name: number for number, name in enumerate("sun mon tue wed thu fri sat".split())}
FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 6, _DAYS),
)
"""Each field's name, lowest and highest value and the names it takes."""
ALLOWED = (
    "five cron fields: minute 0-59, hour 0-23, day of month 1-31, month 1-12 or jan-dec, day of week 0-6 or "
    "sun-sat; each a list of *, N, N-M, with an optional /step of 1 or more"
)
_NUMBER = re.compile(r"[0-9]+")


def _value(text: str, names: dict[str, int]) -> int | None:
    if text.lower() in names:
        return names[text.lower()]
    return int(text) if _NUMBER.fullmatch(text) else None


def _part_fault(part: str, low: int, high: int, names: dict[str, int]) -> str | None:
    """Why one comma-separated part of a field is refused, or None."""
    span, slash, step_text = part.partition("/")
    start, end = low, high
    if "/" in step_text:
        return "more than one /"
    if span not in ("*", "?"):
        bounds = span.split("-")
        values = [_value(b, names) for b in bounds]
        if len(bounds) > 2 or None in values:
            return "not a number, name or range"
        start, end = int(values[0] or 0), int(values[-1] or 0)
        if slash and len(bounds) == 1:
            end = high
    if slash and not _value(step_text, {}):
        return "a step that is not 1 or more"
    if start < low or end > high:
        return f"outside {low}-{high}"
    if start > end:
        return "a range that starts after it ends"
    return None


def schedule_fault(schedule: str) -> str | None:
    """Why a CronJob would refuse ``schedule``, naming the field and its bad part, or None when it is valid."""
    fields = schedule.split()
    if len(fields) != len(FIELDS):
        return f"{len(fields)} field(s), not {len(FIELDS)}"
    for text, (name, low, high, names) in zip(fields, FIELDS, strict=True):
        for part in text.split(","):
            why = _part_fault(part, low, high, names)
            if why:
                return f"the {name} field's {part!r} is {why}"
    return None
