"""The offline plan keeps inputs read from names AWS generates, and their dependency edges (issue 23 §8)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.stacks import STACKS
from ultraserver.offline import Plan

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
