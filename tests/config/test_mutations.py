"""Broken copies of every shipped stack: each plans (exit 0) or is refused (exit 2), never a traceback.

Hypothesis mutates one key of a shipped stack file (wrong types, empty, negative, huge, unknown and misspelled
keys, removed keys) and runs ``ultraserver plan`` in-process, the same code path as the command.
"""

from __future__ import annotations

import copy
from datetime import date, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.cli import copy_project, run_main
from helpers.stacks import ROOT, STACKS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ODD_VALUES: list[Any] = [
    None,
    "",
    0,
    -1,
    10**12,
    1.3,
    True,
    "x" * 300,
    [],
    {},
    ["x"],
    {"a": 1},
    "0.0.0.0/0",
    datetime(2026, 12, 1, 11, 30),
    date(2026, 12, 1),
    "ümlaut",
]


def stack_data(stack: str) -> dict[str, Any]:
    return yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside the config (mappings by key, lists by index)."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, item in value.items():
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


def misspelled(key: str) -> str:
    return key[:-1] if len(key) > 3 else key + "x"


def mutate(config: dict[str, Any], path: tuple[Any, ...], how: str, odd: Any, word: str) -> None:
    parent: Any = config
    for part in path[:-1]:
        parent = parent[part]
    last = path[-1]
    if how == "replace":
        parent[last] = odd
    elif how == "remove":
        del parent[last]
    elif how == "unknown" and isinstance(parent, dict):
        parent[word] = odd
    elif how == "misspell" and isinstance(parent, dict) and isinstance(last, str):
        parent[misspelled(last)] = parent.pop(last)
    elif isinstance(parent, list):
        parent.append(odd)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_project(tmp_path_factory.mktemp("mutations"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_every_mutation_plans_or_is_refused_cleanly(project: Path, data: st.DataObject) -> None:
    stack = data.draw(st.sampled_from(STACKS), label="stack")
    document = stack_data(stack)
    path = data.draw(st.sampled_from(paths(document["config"])), label="path")
    how = data.draw(st.sampled_from(["replace", "remove", "unknown", "misspell"]), label="how")
    odd = data.draw(
        st.one_of(
            st.sampled_from(ODD_VALUES),
            st.integers(min_value=-(2**70), max_value=2**70),
            st.floats(),
            st.text(max_size=40),
        ),
        label="value",
    )
    word = data.draw(st.sampled_from(["nmae", "foo", "aws:x", "1", "availabilityZones"]), label="word")
    broken = copy.deepcopy(document)
    mutate(broken["config"], path, how, odd, word)
    (project / "stacks" / "Pulumi.mutated.yaml").write_text(yaml.safe_dump(broken))
    result = run_main("plan", "--stack", "mutated", "--project-dir", str(project))
    assert result.code in (0, 2), result.stderr
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr, result.stderr
    if result.code == 2:
        assert "Resources:" not in result.stdout, "nothing may be declared when the input is refused"
        # Every problem names a stack key as written (or the stack file), never an internal name.
        # format_problems with the label "-": "  -  <key>  <value>", then allowed and fix lines below the value.
        lines = [line[5:] for line in result.stderr.splitlines() if line.startswith("  -  ")]
        assert lines and all(line.startswith(("ultraserver-eks:", "aws:", "Pulumi.mutated.yaml")) for line in lines), (
            result.stderr
        )
