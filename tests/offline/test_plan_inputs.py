"""Every shipped plan carries every required argument and every edge its Outputs imply (issue 23 §8)."""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
from helpers.plan_inputs import lost_edges, missing_required_inputs
from helpers.stacks import STACKS
from ultraserver.offline import Plan, sdk_types

TARGET = "aws:cloudwatch/eventTarget:EventTarget"


def test_required_arguments_are_read_from_the_sdk_args_classes() -> None:
    # pulumi_aws EventTargetArgs.__init__(*, arn, rule, ...); pulumi_kubernetes ReleaseArgs(*, chart, ...).
    assert set(sdk_types.required_inputs(TARGET)) == {"arn", "rule"}
    assert "chart" in sdk_types.required_inputs("kubernetes:helm.sh/v3:Release")
    # Python names map to the engine's: NodeGroupArgs(cluster_name=...) is clusterName.
    assert "clusterName" in sdk_types.required_inputs("aws:eks/nodeGroup:NodeGroup")


@pytest.mark.parametrize("stack", STACKS)
def test_every_provider_resource_has_every_required_argument(shipped_plan: Callable[[str], Plan], stack: str) -> None:
    plan = shipped_plan(stack)
    assert sum(bool(sdk_types.required_inputs(r.type)) for r in plan.resources) > 10
    assert missing_required_inputs(plan) == []


def test_a_dropped_required_argument_is_caught(shipped_plan: Callable[[str], Plan]) -> None:
    plan = copy.deepcopy(shipped_plan(STACKS[0]))
    target = plan.of_type(TARGET)[0]
    del target.inputs["rule"]
    assert missing_required_inputs(plan) == [f"{STACKS[0]}: {target.urn} ({TARGET}) has no 'rule'"]


@pytest.mark.parametrize("stack", STACKS)
def test_every_output_valued_input_keeps_its_edge(shipped_plan: Callable[[str], Plan], stack: str) -> None:
    plan = shipped_plan(stack)
    assert sum(len(r.declared_sources) for r in plan.resources) > 50
    assert lost_edges(plan) == []


def test_a_lost_edge_or_a_none_output_is_caught(shipped_plan: Callable[[str], Plan]) -> None:
    plan = copy.deepcopy(shipped_plan(STACKS[0]))
    target = plan.of_type(TARGET)[0]
    (rule,) = target.declared_sources["rule"]
    # As Pulumi records an input whose Output resolved to None: the value and its dependency are gone.
    del target.inputs["rule"], target.property_dependencies["rule"]
    target.dependencies.remove(rule)
    target.unresolved_inputs.append("rule")
    problems = lost_edges(plan)
    assert f"{STACKS[0]}: {target.urn} ({TARGET}) input rule was an Output that resolved to None" in problems
    assert any(f"input 'rule' came from {rule}" in p for p in problems)
