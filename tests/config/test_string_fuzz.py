"""Arbitrary text in every string setting of a stack file plans (exit 0) or is refused (exit 2), and never hangs.

The settings come from the stack file's JSON Schema (every property, array item and map value typed as a string),
so a setting added later is fuzzed too. The text mixes other scripts' digits, line breaks, NULs and other control
characters, and very long strings. ``ultraserver plan`` runs in-process, the path the command takes.
"""

from __future__ import annotations

import copy
import json
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import copy_project, run_main
from helpers.stacks import ROOT
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SCHEMA = json.loads((ROOT / "stacks" / "stack.schema.json").read_text())
HANG_SECONDS = 5
"""A refusal that takes longer than this is a hang (a refusal takes milliseconds)."""
PLAN_GUARD_SECONDS = 120
"""A run that plans does real work: it gets this long before it counts as a hang."""
TRICKY = "0123456789\u0660\u0661\u0669\u06f1\u0967\uff11\n\r\x00\t\x1b\u2028 -._/:@*,=+aZz\u00e4\u200b"


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def string_settings(node: dict[str, Any], path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """The path of every string in the schema: property names, 0 for an array item, "key" for a map value."""
    node = _resolve(node)
    branches = [_resolve(b) for b in node.get("anyOf", [])] or [node]
    for branch in branches:
        kind = branch.get("type")
        if kind == "string":
            yield path
        elif kind == "array" and isinstance(branch.get("items"), dict):
            yield from string_settings(branch["items"], (*path, 0))
        elif kind == "object":
            for name, child in branch.get("properties", {}).items():
                yield from string_settings(child, (*path, name))
            if isinstance(branch.get("additionalProperties"), dict):
                yield from string_settings(branch["additionalProperties"], (*path, "key"))


SETTINGS = sorted(set(string_settings(SCHEMA["properties"]["config"])), key=str)


def put(config: dict[str, Any], path: tuple[Any, ...], value: str) -> None:
    """Set ``value`` at ``path``, keeping what the shipped stack has around it (a list's first item, a map)."""
    parent: Any = config
    for part, following in zip(path, path[1:], strict=False):
        empty: Any = [] if following == 0 else {}
        if isinstance(parent, list):
            if not parent:
                parent.append(empty)
            parent = parent[0]
        else:
            if not isinstance(parent.get(part), (list, dict)):
                parent[part] = empty
            parent = parent[part]
    if isinstance(parent, list):
        parent[:] = [value]
    else:
        parent[path[-1]] = value


class Hang(Exception):
    pass


def _hang(*_: Any) -> None:
    raise Hang


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_project(tmp_path_factory.mktemp("string-fuzz"))


def test_the_schema_walk_finds_the_string_settings() -> None:
    assert ("ultraserver-eks:cluster", "name") in SETTINGS
    assert ("ultraserver-eks:cluster", "adminPrincipalArns", 0) in SETTINGS
    assert ("ultraserver-eks:gpuNodeGroups", 0, "labels", "key") in SETTINGS
    assert ("aws:region",) in SETTINGS
    assert len(SETTINGS) > 40


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    setting=st.sampled_from(SETTINGS),
    text=st.one_of(
        st.text(alphabet=TRICKY, max_size=30),
        st.text(max_size=30),
        st.builds(lambda s, n: s * n, st.text(alphabet=TRICKY, min_size=1, max_size=3), st.integers(100, 3000)),
    ),
)
def test_any_text_in_any_string_setting_plans_or_is_refused_quickly(
    project: Path, setting: tuple[Any, ...], text: str
) -> None:
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.gb200-x72.yaml").read_text())
    config = copy.deepcopy(document["config"])
    put(config, setting, text)
    (project / "stacks" / "Pulumi.fuzzed.yaml").write_text(yaml.safe_dump({"config": config}))
    previous = signal.signal(signal.SIGALRM, _hang)
    signal.alarm(PLAN_GUARD_SECONDS)
    started = time.monotonic()
    try:
        result = run_main("plan", "--stack", "fuzzed", "--project-dir", str(project))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert result.code in (0, 2), result.stderr
    assert "internal error" not in result.stderr, result.stderr
    if result.code == 2:
        assert time.monotonic() - started < HANG_SECONDS, "a refusal took longer than a hang's limit"
