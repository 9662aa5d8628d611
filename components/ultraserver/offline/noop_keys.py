"""Value keys that change nothing: render a release with each set value changed, and compare with the plain render.

A key counts as read when changing its value changes a rendered object (or makes Helm refuse the values). Changing
rather than removing it tells "no template reads this here" from "this is the chart's default". Fields that differ
between two renders of the same values (a random password, a generated certificate) are left out of the comparison.
When every key below a map changes nothing, the map is reported once.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

Path = tuple[str, ...]
Flat = dict[tuple[Any, ...], Any]
Render = Callable[[Mapping[str, Any]], "str | None"]
"""Renders values into Helm's output text; None when Helm refuses them."""
Parse = Callable[[str], Sequence[Mapping[str, Any]]]
_WORKERS = 4
_DOCUMENT = "\n---\n"


def leaves(values: Mapping[str, Any], prefix: Path = ()) -> list[Path]:
    """Paths of every set value: a non-empty map is followed, anything else is one value."""
    found: list[Path] = []
    for key, value in values.items():
        path = (*prefix, str(key))
        found += leaves(value, path) if isinstance(value, Mapping) and value else [path]
    return found


def changed(value: Any) -> Any:
    """Another value of the same shape (what a user could have set instead)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 1
    if isinstance(value, str):
        return f"{value}-changed" if value else "changed"
    if isinstance(value, list):
        return [] if value else [{"changed": "changed"}]
    return {"changed": "changed"}


def with_changed(values: Mapping[str, Any], path: Path) -> dict[str, Any]:
    """A copy of ``values`` with the value at ``path`` changed."""
    result = copy.deepcopy(dict(values))
    node = result
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = changed(node[path[-1]])
    return result


def flatten(objects: Sequence[Mapping[str, Any]]) -> Flat:
    """Every scalar of every object, keyed by the object's identity and the field's path."""
    flat: Flat = {}

    def walk(node: Any, at: tuple[Any, ...]) -> None:
        if isinstance(node, Mapping):
            for key, value in node.items():
                walk(value, (*at, key))
        elif isinstance(node, list):
            for index, value in enumerate(node):
                walk(value, (*at, index))
        else:
            flat[at] = node

    for body in objects:
        meta = body.get("metadata") or {}
        walk(body, (body.get("apiVersion"), body.get("kind"), meta.get("namespace"), meta.get("name")))
    return flat


def unstable(first: Flat, second: Flat) -> set[tuple[Any, ...]]:
    """Fields two renders of the same values disagree on."""
    return {key for key in first.keys() | second.keys() if first.get(key) != second.get(key)}


class _Judge:
    """Whether a render equals the plain one, document by document: as text where two plain renders agree (most
    documents of most charts), else object by object without the fields that differed between them."""

    def __init__(self, base: str, again: str, parse: Parse) -> None:
        self.parse = parse
        self.base = base.split(_DOCUMENT)
        others = again.split(_DOCUMENT)
        # Two renders with different document counts: no document can be matched, so each one is compared whole.
        pairs = zip(self.base, others, strict=True) if len(others) == len(self.base) else [(base, again)]
        self.noise: dict[int, tuple[Flat, set[tuple[Any, ...]]]] = {}
        for index, (first, second) in enumerate(pairs):
            if first != second:
                flat = flatten(parse(first))
                self.noise[index] = flat, unstable(flat, flatten(parse(second)))
        if len(others) != len(self.base):
            self.base = [base]

    def same(self, other: str | None) -> bool:
        if other is None:
            return False
        documents = other.split(_DOCUMENT) if len(self.base) > 1 else [other]
        if len(documents) != len(self.base):
            return False
        for index, (mine, theirs) in enumerate(zip(self.base, documents, strict=True)):
            if mine == theirs:
                continue
            if index not in self.noise:
                return False
            flat, noise = self.noise[index]
            changed = flatten(self.parse(theirs))
            if any(flat.get(k) != changed.get(k) for k in (flat.keys() | changed.keys()) - noise):
                return False
        return True


def _collapse(values: Mapping[str, Any], idle: set[Path], prefix: Path = ()) -> list[Path]:
    """The idle paths, each map of several values that are all idle reported as the map."""
    found: list[Path] = []
    for key, value in values.items():
        path = (*prefix, str(key))
        if isinstance(value, Mapping) and value:
            below = _collapse(value, idle, path)
            inner = leaves(value, path)
            found += [path] if len(inner) > 1 and all(p in idle for p in inner) else below
        elif path in idle:
            found.append(path)
    return found


def idle_keys(values: Mapping[str, Any], render: Render, base: str, again: str, parse: Parse) -> list[Path]:
    """Paths of the set values whose change leaves the render as it was (``base`` and ``again``: two renders
    of ``values``; ``parse`` reads a render's objects)."""
    judge = _Judge(base, again, parse)
    paths = leaves(values)
    with ThreadPoolExecutor(max_workers=_WORKERS) as pool:
        results = list(pool.map(lambda p: judge.same(render(with_changed(values, p))), paths))
    idle = {p for p, same in zip(paths, results, strict=True) if same}
    return _collapse(values, idle)
