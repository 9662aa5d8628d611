"""Preflight results: one Check per line, the worst of several statuses, the printed table and the exit code."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Status = Literal["pass", "warn", "fail"]


@dataclass
class Check:
    """One preflight result line: what was checked, the outcome, and how to fix it."""

    name: str
    status: Status
    detail: str
    fix: str = ""


def worst(statuses: Iterable[Status]) -> Status:
    """The most severe status among statuses (pass when empty)."""
    ranked = set(statuses)
    if "fail" in ranked:
        return "fail"
    return "warn" if "warn" in ranked else "pass"


def format_checks(checks: Sequence[Check]) -> str:
    """A plain-text table of checks, each non-pass line followed by its fix, then a summary line."""
    name_width = max([len("CHECK"), *(len(c.name) for c in checks)])
    lines = [f"{'STATUS':<6}  {'CHECK':<{name_width}}  DETAIL"]
    for c in checks:
        lines.append(f"{c.status.upper():<6}  {c.name:<{name_width}}  {c.detail}")
        if c.fix and c.status != "pass":
            lines.append(f"{'':<6}  {'':<{name_width}}  fix: {c.fix}")
    counts = {s: sum(1 for c in checks if c.status == s) for s in ("pass", "warn", "fail")}
    lines.append(f"{counts['pass']} passed, {counts['warn']} warnings, {counts['fail']} failed")
    return "\n".join(lines)


def exit_code(checks: Sequence[Check]) -> int:
    """1 when any check failed, else 0."""
    return 1 if any(c.status == "fail" for c in checks) else 0
