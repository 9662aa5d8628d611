"""The one result type every check reports with, and the error that carries invalid input to the user.

Settings validation, component argument checks, preflight, policy violations and verify all describe a
finding as a ``Problem``: which key (the stack key as written, or the Python argument name), the bad value,
what is allowed, the fix, and a level. One type gives one report format and one place for severity.
This module is the base layer: it imports nothing of ours and no Pulumi.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

ERROR = "error"
WARNING = "warning"
INFO = "info"
LEVELS = (ERROR, WARNING, INFO)
LABELS = {ERROR: "ERROR", WARNING: "WARNING", INFO: "INFO"}
# Keys up to this long form an aligned column; a longer key (a resource URN) puts its value on the next line.
KEY_COLUMN_MAX = 48

_FORMATTED = re.compile(
    r"^(?P<key>[^:\s][^:]*?): got (?P<value>.*?); allowed: (?P<allowed>.*?); fix: (?P<fix>.*)$", re.S
)


def plain(value: Any) -> Any:
    """A value as the user wrote it, for messages: settings models by their stack keys, dataclasses by their fields,
    moments in ISO 8601 (UTC as Z), tuples as lists; never a Python object's repr."""
    if hasattr(value, "model_dump"):
        return plain(value.model_dump(by_alias=True, exclude_none=True))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return plain(dataclasses.asdict(value))
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    return value


@dataclass(frozen=True)
class Problem:
    """One finding: key, bad value, what is allowed, how to fix it, and how serious it is."""

    key: str
    """Where: a stack key (``gpuNodeGroups[0].availabilityZone``), an argument, a resource or a check name."""
    value: Any
    """The value found (None when missing)."""
    allowed: str
    """What would be accepted."""
    fix: str
    """What to do about it."""
    level: str = ERROR
    """error (blocks), warning (reported, does not block) or info."""

    def __str__(self) -> str:
        if not self.allowed and not self.fix:
            return f"{self.key}: {self.value}" if self.key else str(self.value)
        return f"{self.key}: got {plain(self.value)!r}; allowed: {self.allowed}; fix: {self.fix}"

    @classmethod
    def of(cls, item: Problem | str, level: str = ERROR) -> Problem:
        """A Problem from a Problem or from one formatted line (``key: got v; allowed: a; fix: f``)."""
        if isinstance(item, Problem):
            return item
        match = _FORMATTED.match(item)
        if match is None:
            key, sep, rest = item.partition(": ")
            return cls(key, rest, "", "", level) if sep and " " not in key else cls("", item, "", "", level)
        return cls(match["key"], match["value"], match["allowed"], match["fix"], level)


def problem(key: str, value: Any, allowed: str, fix: str) -> str:
    """One problem as the line users read: key, bad value, what is allowed, how to fix it."""
    return str(Problem(key, value, allowed, fix))


def blocking(problems: Iterable[Problem]) -> list[Problem]:
    """The problems that stop a plan, deploy or check (level error)."""
    return [p for p in problems if p.level == ERROR]


def format_problems(problems: Iterable[Problem], labels: Mapping[str, str] = LABELS) -> str:
    """The one report format: ``LABEL  key  value`` per problem, then its allowed and fix lines unless it is info.

    labels names each level for the reader (preflight says PASS/WARN/FAIL, the policy report MANDATORY/ADVISORY).
    """
    items = list(problems)
    names = [labels.get(p.level, p.level.upper()) for p in items]
    label_width = max((len(n) for n in names), default=0)
    key_width = max((len(p.key) for p in items if len(p.key) <= KEY_COLUMN_MAX), default=0)
    indent = " " * (label_width + 2 + key_width + 2)
    lines: list[str] = []
    for p, name in zip(items, names, strict=True):
        value = (p.value if isinstance(p.value, str) else repr(p.value)).splitlines() or [""]
        head = f"{name:<{label_width}}  {p.key:<{key_width}}"
        if len(p.key) > key_width:
            lines += [head, *(indent + v for v in value)]
        else:
            lines += [f"{head}  {value[0]}".rstrip(), *(indent + v for v in value[1:])]
        if p.level != INFO:
            lines += [f"{indent}{field}: {text}" for field, text in (("allowed", p.allowed), ("fix", p.fix)) if text]
    return "\n".join(lines)


class ConfigError(Exception):
    """Invalid input, found before anything is declared; each line names the key, value, what is allowed, the fix."""

    def __init__(self, problems: Iterable[Problem | str] | Problem | str) -> None:
        items = [problems] if isinstance(problems, (str, Problem)) else list(problems)
        self.items = [Problem.of(p) for p in items]
        self.problems = [str(p) for p in items]
        super().__init__("\n".join(self.problems))
