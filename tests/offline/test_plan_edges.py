"""The offline plan keeps inputs read from names AWS generates, and their dependency edges (issue 23 §8)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pulumi
import pulumi_aws as aws
import pytest
from helpers.plan_lookup import one
from helpers.stacks import ROOT, STACKS
from pulumi.runtime import rpc
from ultraserver.offline import Plan, record, run_plan, sdk_schema

RULE = "aws:cloudwatch/eventRule:EventRule"
TARGET = "aws:cloudwatch/eventTarget:EventTarget"


@pytest.mark.parametrize("stack", STACKS)
def test_every_event_target_names_its_rule_and_waits_for_it(shipped_plan: Callable[[str], Plan], stack: str) -> None:
    plan = shipped_plan(stack)
    rules = {r.urn: r for r in plan.of_type(RULE)}
    targets = plan.of_type(TARGET)
    assert targets
    for target in targets:
        assert target.inputs.get("rule"), target.name
        (rule,) = [rules[d] for d in target.dependencies if d in rules]
        # Named by name_prefix: the placeholder says what AWS would generate from the prefix.
        expected = rule.inputs.get("name") or f"{rule.inputs['namePrefix']}offline-placeholder"
        assert target.inputs["rule"] == expected


class DroppedInputs:
    """Records each Output-valued input Pulumi drops because it resolved to None (with it go its dependency edges:
    pulumi/runtime/rpc.py serialize_properties treats a property that serializes to None as absent)."""

    def __init__(self) -> None:
        self.found: list[tuple[str, str]] = []

    def __enter__(self) -> DroppedInputs:
        self._original = rpc.serialize_property

        async def watched(value: Any, deps: list[Any], key: str, resource: Any = None, *args: Any, **kw: Any) -> Any:
            result = await self._original(value, deps, key, resource, *args, **kw)
            if result is None and isinstance(value, pulumi.Output) and await value.resources():
                self.found.append((getattr(resource, "_name", type(resource).__name__), key))
            return result

        rpc.serialize_property = watched
        return self

    def __exit__(self, *exc: object) -> None:
        rpc.serialize_property = self._original


@pytest.mark.parametrize("stack", STACKS)
def test_no_input_read_from_another_resource_is_dropped(stack: str) -> None:
    with DroppedInputs() as dropped:
        run_plan(ROOT, stack)
    assert dropped.found == []


def test_the_watch_sees_an_input_that_resolves_to_none() -> None:
    """The check above can fail: an input read from an output the engine does not know is reported."""

    def program() -> None:
        vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
        aws.ec2.Subnet("subnet", vpc_id=vpc.id.apply(lambda _: None), cidr_block="10.0.0.0/24")

    with DroppedInputs() as dropped:
        plan = record(program)
    assert dropped.found == [("subnet", "vpc_id")]
    assert "vpcId" not in one(plan, "aws:ec2/subnet:Subnet").inputs


def test_every_string_output_of_a_resource_has_a_labelled_placeholder() -> None:
    """An output nobody special-cased (the VPC's default route table) still reaches the resource that reads it, with
    its edge: the placeholder comes from the SDK's own list of the type's outputs."""

    def program() -> None:
        vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
        aws.ec2.Route("route", route_table_id=vpc.default_route_table_id, destination_cidr_block="0.0.0.0/0")

    with DroppedInputs() as dropped:
        plan = record(program)
    route, vpc = one(plan, "aws:ec2/route:Route"), one(plan, "aws:ec2/vpc:Vpc")
    assert dropped.found == []
    assert "offline-placeholder" in route.inputs["routeTableId"]
    assert route.property_dependencies["routeTableId"] == [vpc.urn] and vpc.urn in route.dependencies


@pytest.mark.parametrize("stack", STACKS)
def test_every_input_edge_is_in_the_graph(shipped_plan: Callable[[str], Plan], stack: str) -> None:
    """What each input was read from is a dependency of the resource: the edges the order and deadlock checks walk."""
    for resource in shipped_plan(stack).resources:
        for key, urns in resource.property_dependencies.items():
            assert set(urns) <= set(resource.dependencies), (resource.name, key)


def missing_arguments(plan: Plan) -> list[str]:
    """Required arguments (by the provider SDK's Args classes) absent from a plan's provider resources."""
    found = []
    for resource in plan.resources:
        for argument in sdk_schema.required_arguments(resource.type) if resource.custom else ():
            if argument not in resource.inputs:
                found.append(f"{resource.urn}: {argument}")
    return found


@pytest.mark.parametrize("stack", STACKS)
def test_every_provider_resource_has_its_required_arguments(shipped_plan: Callable[[str], Plan], stack: str) -> None:
    plan = shipped_plan(stack)
    checked = {r.type for r in plan.resources if r.custom and sdk_schema.required_arguments(r.type)}
    assert len(checked) > 10
    assert missing_arguments(plan) == []


def test_a_missing_required_argument_is_found(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("gb200-x72")
    group = one(plan, "aws:eks/nodeGroup:NodeGroup", "system")
    inputs = {k: v for k, v in group.inputs.items() if k != "nodeRoleArn"}
    broken = Plan(plan.project, plan.stack, [replace(group, inputs=inputs)], [])
    assert missing_arguments(broken) == [f"{group.urn}: nodeRoleArn"]
