"""The one result type every check reports with, and the error that carries invalid input to the user.

Settings validation, component argument checks, preflight, policy violations and verify all describe a
finding as a ``Problem``: which key (the stack key as written, or the Python argument name), the bad value,
what is allowed, the fix, and a level. One type gives one report format and one place for severity.
This module is the base layer: it imports nothing of ours and no Pulumi.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
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


_URL_USER = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@'\"]+@")
_SECRET_QUERY = re.compile(
    r"(?i)([?&;](?:[a-z0-9_.-]*(?:token|passw(?:or)?d|pass|secret|key|signature|sig|credential|auth)[a-z0-9_.-]*)=)"
    r"[^&;#\s'\"]+"
)


def masked(text: str) -> str:
    """Text with the secrets a URL can carry hidden: its user and password (https://***@host) and the values of
    query parameters named like one (?token=***): every echoed value goes through this, as errors reach CI logs."""
    return _SECRET_QUERY.sub(r"\1***", _URL_USER.sub(r"\1***@", text))


class Described(str):
    """A finding described in words rather than a value the user wrote ("larger than 1 MiB"): shown without quotes."""

    __slots__ = ()

    def __repr__(self) -> str:
        return str(self)


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
    suggestion: Any = None
    """The value the fix proposes, when the fix is one value (it must itself be accepted), else None."""

    def __str__(self) -> str:
        return f"{self.key}: {self.finding()}" if self.key else self.finding()

    def finding(self) -> str:
        """The value, what is allowed and the fix, without the key (for a report that names the place itself)."""
        if not self.allowed and not self.fix:
            return str(self.value)
        return masked(f"got {plain(self.value)!r}; allowed: {self.allowed}; fix: {self.fix}")


KeyName = Callable[[str], str]
"""Names a field for the reader: a check gets the camelCase path it checks ("" for the checked object itself) and
reports the key its caller wrote (see ``under``)."""


def under(prefix: str) -> KeyName:
    """Keys below ``prefix``."""

    def name(path: str) -> str:
        if not prefix or not path:
            return prefix or path
        return f"{prefix}{path}" if path.startswith("[") else f"{prefix}.{path}"

    return name


def below(name: KeyName, path: str) -> KeyName:
    """Keys below ``path``, spelt by ``name`` (a block's window below the block)."""

    def key(field: str) -> str:
        return name(f"{path}.{field}" if field else path)

    return key


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
        value = masked(p.value if isinstance(p.value, str) else repr(p.value)).splitlines() or [""]
        head = f"{name:<{label_width}}  {p.key:<{key_width}}"
        if len(p.key) > key_width:
            lines += [head, *(indent + v for v in value)]
        else:
            lines += [f"{head}  {value[0]}".rstrip(), *(indent + v for v in value[1:])]
        if p.level != INFO:
            lines += [f"{indent}{field}: {text}" for field, text in (("allowed", p.allowed), ("fix", p.fix)) if text]
    return "\n".join(lines)


Check = tuple[Any, Callable[[Any], bool], str]
"""One argument of a public function: its value, whether the value holds, and what is allowed."""


def call_problems(function: str, arguments: Mapping[str, Check]) -> list[Problem]:
    """The arguments a program handed a public function (``ips_needed``) that do not hold, each named as
    ``function.argument``: the ConfigError a caller gets instead of a TypeError (or a wrong answer) from inside."""
    return [
        Problem(f"{function}.{name}", Described(f"{type(value).__name__} {value!r}"[:80]), allowed, f"pass {allowed}")
        for name, (value, holds, allowed) in arguments.items()
        if not holds(value)
    ]


def count(value: Any) -> bool:
    """Whether ``value`` is a whole number >= 0 (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def strings(value: Any) -> bool:
    """Whether ``value`` is a list or tuple of strings."""
    return isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value)


class ConfigError(Exception):
    """Invalid input, found before anything is declared: the Problems, each naming the key, value, what is allowed
    and the fix. Its text is one ``str(problem)`` per line; reports render ``items`` with ``format_problems``."""

    def __init__(self, problems: Problem | Iterable[Problem]) -> None:
        self.items = [problems] if isinstance(problems, Problem) else list(problems)
        strays = [p for p in self.items if not isinstance(p, Problem)]
        if strays:
            raise TypeError(f"ConfigError takes Problems, got {type(strays[0]).__name__}: {strays[0]!r}")
        super().__init__("\n".join(str(p) for p in self.items))
