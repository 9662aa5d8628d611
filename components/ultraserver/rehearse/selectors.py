"""Label and field selectors as the Kubernetes API applies them to a list, for the emulator that does not.

The grammar (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors, read
2026-11-27): comma-separated requirements, all of which must hold; ``key=value``, ``key==value``, ``key!=value``,
``key in (a,b)``, ``key notin (a,b)``, ``key`` (exists) and ``!key`` (does not exist). Field selectors take
``=``, ``==`` and ``!=`` on dotted paths such as ``spec.nodeName`` or ``metadata.name``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

_SET = re.compile(r"\s*([^\s!=]+)\s+(in|notin)\s+\(([^)]*)\)\s*")
_PAIR = re.compile(r"\s*([^\s!=]+)\s*(==|=|!=)\s*([^\s]*)\s*")
_EXISTS = re.compile(r"\s*(!?)\s*([^\s!=()]+)\s*")

Requirement = Callable[[Mapping[str, str]], bool]


def _requirements(selector: str) -> list[str]:
    """Split on the commas that are not inside a set's parentheses."""
    parts, depth, current = [], 0, ""
    for char in selector:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [p for p in [*parts, current] if p.strip()]


def _requirement(text: str) -> Requirement:
    found = _SET.fullmatch(text)
    if found:
        key, operator, values = found.group(1), found.group(2), {v.strip() for v in found.group(3).split(",")}
        if operator == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    found = _PAIR.fullmatch(text)
    if found:
        key, operator, value = found.groups()
        if operator == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    found = _EXISTS.fullmatch(text)
    if found:
        negated, key = found.group(1) == "!", found.group(2)
        return lambda labels: (key in labels) != negated
    raise ValueError(f"unable to parse requirement {text!r}")


def matches(selector: str, labels: Mapping[str, str]) -> bool:
    """Whether the labels satisfy every requirement of the selector (an empty selector selects everything)."""
    return all(_requirement(part)(labels) for part in _requirements(selector))


def field_values(obj: Mapping[str, Any], selector: str) -> dict[str, str]:
    """The object's value of each dotted path the field selector names (missing fields read as '')."""
    values = {}
    for part in _requirements(selector):
        found = _PAIR.fullmatch(part)
        if not found:
            raise ValueError(f"unable to parse field requirement {part!r}")
        value: Any = obj
        for step in found.group(1).split("."):
            value = value.get(step, "") if isinstance(value, Mapping) else ""
        values[found.group(1)] = str(value)
    return values
