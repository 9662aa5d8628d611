"""Typed reading of nested stack config that collects one clear message per problem.

Every message names the full config key, the bad value, what is allowed and how to fix it, so a
stack author can correct all problems in one pass instead of one traceback at a time.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Mapping
from typing import Any


class _Missing:
    def __repr__(self) -> str:
        return "<required>"


REQUIRED: Any = _Missing()


def problem(key: str, value: Any, allowed: str, fix: str) -> str:
    """Format one problem: key, bad value, what is allowed, how to fix it."""
    return f"{key}: got {value!r}; allowed: {allowed}; fix: {fix}"


class Reader:
    """Reads fields of one config object, recording problems instead of raising."""

    def __init__(self, key: str, raw: Any, problems: list[str]) -> None:
        self.key = key
        self.problems = problems
        self._seen: set[str] = set()
        if raw is None:
            raw = {}
        if not isinstance(raw, Mapping):
            problems.append(problem(key, raw, "an object (a YAML mapping)", f"write {key} as key: value pairs"))
            raw = {}
        self.raw: Mapping[str, Any] = raw

    def path(self, name: str) -> str:
        """The full config key of a field."""
        return f"{self.key}.{name}"

    def has(self, name: str) -> bool:
        """Whether the field is present in the config."""
        return name in self.raw

    def _get(self, name: str, default: Any) -> tuple[Any, bool]:
        self._seen.add(name)
        if name in self.raw and self.raw[name] is not None:
            return self.raw[name], True
        if default is REQUIRED:
            self.problems.append(
                problem(self.path(name), None, "a value (this key is required)", f"add {name} to {self.key}")
            )
        return default, False

    def string(
        self,
        name: str,
        default: Any = REQUIRED,
        *,
        pattern: str | None = None,
        allowed: str = "a string",
        fix: str = "",
        choices: tuple[str, ...] | None = None,
    ) -> Any:
        """A string field, optionally restricted to a regex or a set of choices."""
        value, present = self._get(name, default)
        if not present:
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            self.problems.append(problem(self.path(name), value, allowed, fix or f"quote the value of {name}"))
            return default if default is not REQUIRED else None
        if choices is not None and value not in choices:
            close = difflib.get_close_matches(value, choices, n=1)
            hint = f"use {close[0]!r}" if close else f"use one of {', '.join(choices)}"
            self.problems.append(problem(self.path(name), value, "one of " + ", ".join(choices), fix or hint))
            return default if default is not REQUIRED else None
        if pattern is not None and not re.fullmatch(pattern, value):
            self.problems.append(problem(self.path(name), value, allowed, fix or f"correct {name}"))
            return default if default is not REQUIRED else None
        return value

    def integer(
        self, name: str, default: Any = REQUIRED, *, minimum: int | None = None, maximum: int | None = None
    ) -> Any:
        """An integer field within optional bounds."""
        value, present = self._get(name, default)
        if not present:
            return value
        allowed = (
            "an integer"
            + (f" >= {minimum}" if minimum is not None else "")
            + (f" <= {maximum}" if maximum is not None else "")
        )
        if isinstance(value, bool) or not isinstance(value, (int, float)) or int(value) != value:
            self.problems.append(problem(self.path(name), value, allowed, f"set {name} to a whole number"))
            return default if default is not REQUIRED else None
        value = int(value)
        if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
            self.problems.append(problem(self.path(name), value, allowed, f"set {name} within the bounds"))
            return default if default is not REQUIRED else None
        return value

    def number(self, name: str, default: Any = REQUIRED, *, minimum: float = 0.0) -> Any:
        """A number field (int or float) at or above a minimum."""
        value, present = self._get(name, default)
        if not present:
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
            self.problems.append(problem(self.path(name), value, f"a number >= {minimum}", f"set {name} to a number"))
            return default if default is not REQUIRED else None
        return float(value)

    def boolean(self, name: str, default: Any = REQUIRED) -> Any:
        """A true/false field."""
        value, present = self._get(name, default)
        if present and not isinstance(value, bool):
            self.problems.append(
                problem(self.path(name), value, "true or false", f"write {name}: true or {name}: false")
            )
            return default if default is not REQUIRED else None
        return value

    def string_list(
        self, name: str, default: Any = REQUIRED, *, check: Callable[[str], str | None] | None = None
    ) -> Any:
        """A list of strings, each optionally checked (check returns a problem text or None)."""
        value, present = self._get(name, default)
        if not present:
            return list(value) if isinstance(value, list) else value
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.problems.append(problem(self.path(name), value, "a list of strings", f"write {name} as a YAML list"))
            return list(default) if isinstance(default, list) else []
        for index, item in enumerate(value):
            why = check(item) if check else None
            if why:
                self.problems.append(f"{self.path(name)}[{index}]: got {item!r}; {why}")
        return list(value)

    def string_map(self, name: str, default: Any = REQUIRED) -> Any:
        """A mapping of string keys to string values (labels, tags)."""
        value, present = self._get(name, default)
        if not present:
            return dict(value) if isinstance(value, dict) else value
        if not isinstance(value, Mapping) or not all(
            isinstance(k, str) and isinstance(v, (str, int, float, bool)) for k, v in value.items()
        ):
            self.problems.append(
                problem(self.path(name), value, "a mapping of names to strings", f"write {name} as key: value pairs")
            )
            return {}
        return {k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}

    def any_map(self, name: str) -> dict[str, Any]:
        """A free-form mapping (e.g. Helm values overrides), checked only for being a mapping."""
        value, present = self._get(name, {})
        if present and not isinstance(value, Mapping):
            self.problems.append(problem(self.path(name), value, "a mapping", f"write {name} as key: value pairs"))
            return {}
        return dict(value)

    def child(self, name: str) -> Reader:
        """A nested object field."""
        value, _ = self._get(name, None)
        return Reader(self.path(name), value, self.problems)

    def children(self, name: str) -> list[Reader]:
        """A list of nested objects."""
        value, present = self._get(name, [])
        if not present:
            return []
        if not isinstance(value, list):
            self.problems.append(problem(self.path(name), value, "a list of objects", f"write {name} as a YAML list"))
            return []
        return [Reader(f"{self.path(name)}[{i}]", item, self.problems) for i, item in enumerate(value)]

    def raw_value(self, name: str) -> Any:
        """The raw value of a field whose shape the caller checks itself."""
        value, _ = self._get(name, None)
        return value

    def finish(self) -> None:
        """Record a problem for every key nobody read: almost always a typo."""
        for name in self.raw:
            if name not in self._seen:
                close = difflib.get_close_matches(str(name), sorted(self._seen), n=1)
                fix = f"did you mean {close[0]!r}?" if close else "remove it"
                self.problems.append(
                    problem(self.path(str(name)), self.raw[name], "known keys: " + ", ".join(sorted(self._seen)), fix)
                )
