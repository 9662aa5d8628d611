"""The terminal plan: honest counts, no alarming noise, dependency order, plain text when piped, NO_COLOR."""

from __future__ import annotations

import io
from datetime import datetime, timezone

import pytest
from helpers.stacks import STACKS
from ultraserver.offline.groups import clock_line, group_views
from ultraserver.offline.report import PlanText, counts, creation_order, summary, tree
from ultraserver.offline.terminal import console_for, print_plan
from ultraserver.problems import WARNING, Problem

NOW = datetime(2026, 11, 23, 2, 50, tzinfo=timezone.utc)


class Terminal(io.StringIO):
    """A stream that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def plan_text(plan) -> PlanText:  # type: ignore[no-untyped-def]
    return PlanText(
        title="Offline plan of test",
        clock=clock_line(NOW, injected=True),
        groups=group_views(plan, {}, NOW),
        warnings=[Problem("key[0]", "a warning [with brackets]", "[x]", "fix [y]", WARNING)],
        policies="Policies: 30 rules checked, no violations.",
        tree=tree(plan),
        summary=summary(plan),
    )


def printed(plan, stream: io.StringIO, env: dict[str, str]) -> str:  # type: ignore[no-untyped-def]
    print_plan(console_for(stream, env), plan_text(plan), stream)
    return stream.getvalue()


@pytest.mark.parametrize("stack", STACKS)
def test_resource_count_equals_the_json_entries(shipped_plan, stack: str) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan(stack)
    line = counts(plan)
    assert line.startswith(f"Resources: {len(plan.to_json()['resources'])}, one per entry of --json: 1 stack, ")
    numbers = [int(part.split()[0]) for part in line.split(": ", 2)[2].split(" (")[0].split(", ")]
    assert sum(numbers) == len(plan.resources)


def test_summary_is_short_not_a_count_per_type(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    text = summary(shipped_plan("gb200-x72"))
    assert len(text.splitlines()) == 2
    assert "aws:ec2/routeTable:RouteTable" not in text


def test_templates_without_interfaces_do_not_say_interfaces_0(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    text = tree(shipped_plan("gb200-x72"))
    assert "interfaces=0" not in text
    system = next(line for line in text.splitlines() if "LaunchTemplate gb200-x72-system" in line)
    assert "interfaces" not in system
    gpu = next(line for line in text.splitlines() if "LaunchTemplate gb200-x72-nvl72" in line)
    assert "interfaces=5 (4 EFA, 1 ENA only)" in gpu


@pytest.mark.parametrize("stack", STACKS)
def test_tree_lists_siblings_after_what_they_wait_for(shipped_plan, stack: str) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan(stack)
    lines = [line.strip() for line in tree(plan).splitlines()]
    position = {f"{r.type} {r.name}": i for i, r in enumerate(plan.resources)}
    assert len(lines) == len(plan.resources)
    at = {}
    for index, line in enumerate(lines):
        key = line.split("  [")[0]
        at[key] = index
    assert set(at) == set(position)
    by_urn = plan.by_urn()
    order = creation_order(plan)
    for resource in plan.resources:
        for dep in resource.dependencies:
            other = by_urn.get(dep)
            if other is not None and other.parent == resource.parent:
                assert order[other.urn] < order[resource.urn]
                assert at[f"{other.type} {other.name}"] < at[f"{resource.type} {resource.name}"]


def test_piped_output_is_plain_text_in_the_issue_order(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    text = printed(shipped_plan("gb200-x72"), io.StringIO(), {})
    assert "\x1b" not in text
    assert text.count("clock: 2026-11-23T02:50Z (injected)") == 1
    assert all(line == line.rstrip() for line in text.splitlines())
    order = ["GPU node group gb200-x72-nvl72", "reservation", "Resources: ", "Warnings:", "Policies:", "pulumi:pulumi"]
    assert [text.index(marker) for marker in order] == sorted(text.index(marker) for marker in order)
    # Values are text, never markup: brackets survive.
    assert "a warning [with brackets]" in text


def test_a_terminal_gets_colour(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    assert "\x1b[" in printed(shipped_plan("gb200-x72"), Terminal(), {"TERM": "xterm-256color"})


def test_no_color_turns_every_escape_off(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    text = printed(shipped_plan("gb200-x72"), Terminal(), {"TERM": "xterm-256color", "NO_COLOR": "1"})
    assert "\x1b" not in text and "GPU node group gb200-x72-nvl72" in text
