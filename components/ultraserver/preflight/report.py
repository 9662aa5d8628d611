"""Preflight results are Problems: a passed check is info, a warning a warning, a failed check an error.

This module names those levels as preflight says them, builds one result, and prints the table and exit code.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ultraserver.problems import ERROR, INFO, WARNING, Problem, blocking, format_problems

PASS, WARN, FAIL = INFO, WARNING, ERROR
LABELS = {PASS: "PASS", WARN: "WARN", FAIL: "FAIL"}


def check(name: str, status: str, detail: str, fix: str = "") -> Problem:
    """One preflight result line: what was checked, the outcome (PASS, WARN or FAIL), and how to fix it."""
    return Problem(name, detail, "", fix, status)


def worst(statuses: Iterable[str]) -> str:
    """The most severe status among statuses (PASS when empty)."""
    ranked = set(statuses)
    return FAIL if FAIL in ranked else WARN if WARN in ranked else PASS


def aggregate(name: str, items: list[tuple[str, str, str]], fix: str) -> Problem:
    """One check from per-reservation (id, status, text) results; fix is kept only when not all pass."""
    status = worst(s for _, s, _ in items)
    detail = "; ".join(f"{cr_id}: {text}" for cr_id, _, text in items)
    return check(name, status, detail, fix if status != PASS else "")


def format_checks(checks: Sequence[Problem]) -> str:
    """Every check as the shared problem report (fixes shown for warnings and failures), then a summary line."""
    counts = {level: sum(1 for c in checks if c.level == level) for level in (PASS, WARN, FAIL)}
    summary = f"{counts[PASS]} passed, {counts[WARN]} warnings, {counts[FAIL]} failed"
    return "\n".join(line for line in (format_problems(checks, LABELS), summary) if line)


def exit_code(checks: Sequence[Problem]) -> int:
    """1 when any check failed, else 0."""
    return 1 if blocking(checks) else 0
