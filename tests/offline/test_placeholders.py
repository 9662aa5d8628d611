"""Every output a real deploy would know has a labelled offline placeholder, from the provider SDKs."""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

import pulumi
import pytest
from helpers.stacks import STACKS
from ultraserver.offline import Plan, placeholders, sdk_schema

REGION = "us-east-1"


def _shipped_types(shipped_plan: Callable[[str], Plan]) -> list[str]:
    types = {r.type for stack in STACKS for r in shipped_plan(stack).resources}
    return sorted(t for t in types if sdk_schema.resource_class(t) is not None)


def _labelled(value: Any) -> bool:
    """Text says it is offline (or is the stack's region); containers hold only labelled text."""
    if isinstance(value, str):
        return "offline" in value or value == REGION
    if isinstance(value, dict):
        return all(_labelled(v) for v in value.values())
    if isinstance(value, list):
        return all(_labelled(v) for v in value)
    return isinstance(value, (int, float, bool))


def test_every_known_output_of_every_shipped_type_has_a_labelled_placeholder(
    shipped_plan: Callable[[str], Plan],
) -> None:
    types = _shipped_types(shipped_plan)
    assert "aws:ec2/vpc:Vpc" in types and "kubernetes:core/v1:Namespace" in types
    for token in types:
        # Declared with no inputs: all text, and everything else the SDK says always has a value, comes from the mock.
        outputs = placeholders.resource_outputs(token, "probe", {}, REGION)
        generic = placeholders.generated_outputs(token, "probe", {}, REGION)
        cls = sdk_schema.resource_class(token)
        assert cls is not None
        for prop in sdk_schema.output_properties(cls):
            # Resource references and untyped values (pulumi-eks's kubeconfig) have no generic form; the engine's
            # pulumi-eks stand-in gives those.
            if (
                prop.optional
                and prop.type is not str
                or prop.type is Any
                or isinstance(prop.type, type)
                and issubclass(prop.type, pulumi.Resource)
            ):
                continue
            assert outputs.get(prop.name) is not None, (token, prop.name)
            # Known shapes (a node group's status ACTIVE) may replace the generic value; that one is labelled.
            if typing.get_origin(prop.type) is not typing.Literal:  # a fixed value (apiVersion) is the real one
                assert _labelled(generic[prop.name]), (token, prop.name, generic[prop.name])


@pytest.mark.parametrize("name_prefix", ["alerts-", "x-"])
def test_a_name_prefix_names_the_resource_from_the_prefix(name_prefix: str) -> None:
    outputs = placeholders.resource_outputs(
        "aws:cloudwatch/eventRule:EventRule", "r", {"namePrefix": name_prefix}, REGION
    )
    assert outputs["name"] == f"{name_prefix}offline-placeholder"
