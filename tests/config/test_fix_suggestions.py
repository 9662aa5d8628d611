"""A fix that proposes one value proposes a value that is accepted: applying it clears the problem it fixes."""

from __future__ import annotations

import copy
import re
from typing import Any

from helpers.stacks import stack_config
from hypothesis import given, settings
from hypothesis import strategies as st
from ultraserver.config.settings import parse_settings
from ultraserver.problems import ConfigError, Problem

TIMES = ("ultraserver-eks:gpuNodeGroups", 0, "reservationWindow")
# Bad values whose problems' fixes are values: times without a zone or a time of day, near-miss choices.
BAD_VALUES = st.one_of(
    st.tuples(
        st.sampled_from([(*TIMES, "start"), (*TIMES, "end")]),
        st.builds(
            lambda day, hour, minute, form: form.format(d=day, h=hour, m=minute),
            st.dates(),
            st.integers(0, 23),
            st.integers(0, 59),
            st.sampled_from(
                ["{d}", "{d}Z", "{d}+00:00", "{d}T{h:02}:{m:02}", "{d}T{h:02}:{m:02}:00", "{d} {h:02}:{m:02}"]
            ),
        ),
    ),
    st.tuples(st.just(("ultraserver-eks:cluster", "logRetentionDays")), st.integers(-10, 5000)),
    st.tuples(
        st.sampled_from(
            [
                ("ultraserver-eks:cluster", "deployerAccess"),
                ("ultraserver-eks:network", "natGateways"),
                ("ultraserver-eks:systemNodeGroup", "amiType"),
                ("ultraserver-eks:kubernetes", "layer"),
                ("ultraserver-eks:gpuNodeGroups", 0, "handover"),
            ]
        ),
        st.sampled_from(["public-endpont", "in_vpc", "single", "one-per-az", "AL2023_ARM_64", "same stack", "swich"]),
    ),
)


def put(config: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    parent: Any = config
    for part in path[:-1]:
        if isinstance(parent, dict) and part not in parent:
            parent[part] = {}
        parent = parent[part]
    parent[path[-1]] = value


def path_of(key: str) -> tuple[Any, ...]:
    """ultraserver-eks:gpuNodeGroups[0].reservationWindow.start as a path into the stack config."""
    top = key.split(".")[0].split("[")[0]
    parts: list[Any] = [top]
    for name, index in re.findall(r"\.([A-Za-z0-9]+)|\[([0-9]+)\]", key[len(top) :]):
        parts.append(int(index) if index else name)
    return tuple(parts)


def problems(config: dict[str, Any]) -> list[Problem]:
    try:
        parse_settings(config, stack="gb200-x72")
    except ConfigError as err:
        return list(err.items)
    return []


def test_path_of_reads_stack_keys() -> None:
    assert path_of("ultraserver-eks:gpuNodeGroups[0].reservationWindow.start") == (*TIMES, "start")
    assert path_of("ultraserver-eks:cluster.logRetentionDays") == ("ultraserver-eks:cluster", "logRetentionDays")


@settings(max_examples=60, deadline=None)
@given(bad=BAD_VALUES)
def test_every_fix_that_is_a_value_is_accepted(bad: tuple[tuple[Any, ...], Any]) -> None:
    path, value = bad
    config = copy.deepcopy(stack_config("gb200-x72"))
    put(config, path, value)
    for problem in [p for p in problems(config) if p.suggestion is not None]:
        fixed = copy.deepcopy(config)
        put(fixed, path_of(problem.key), problem.suggestion)
        again = [p for p in problems(fixed) if p.key == problem.key and p.allowed == problem.allowed]
        assert not again, f"{problem}: the fix {problem.suggestion!r} is refused the same way: {again}"


def test_the_refusals_that_prompted_this_propose_values() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    put(config, (*TIMES, "start"), "2026-12-08Z")
    put(config, ("ultraserver-eks:cluster", "logRetentionDays"), 2)
    found = {p.key: p for p in problems(config)}
    window = found["ultraserver-eks:gpuNodeGroups[0].reservationWindow.start"]
    assert window.suggestion == "2026-12-08T11:30:00Z" and "ZZ" not in window.fix
    retention = found["ultraserver-eks:cluster.logRetentionDays"]
    assert retention.suggestion in (1, 3) and "allowed: one of 1, 3, 5," in str(retention)
