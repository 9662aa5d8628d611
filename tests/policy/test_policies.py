"""Each policy rule passes on the compliant stacks (and their accepted variants) and fails on broken ones.

Every case runs on the shipped gb200-x72 stack as the real components record it, and on the hand-written fixture.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from helpers.policy_cases import (  # noqa: F401 (base is a fixture)
    ADDED,
    FAILING,
    FIXTURE_NAMES,
    PASSING,
    REAL_STACK,
    ROLE_TYPES,
    Case,
    Config,
    Stack,
    base,
    config_for,
    fixture_stack,
    real_stack,
)
from helpers.stacks import STACKS, stack_config
from ultraserver.offline import Plan
from ultraserver.policy import MANDATORY, RULES, PlanResource, evaluate
from ultraserver.problems import ConfigError


def ids(cases: list[tuple[Case, dict | Config | None]]) -> list[str]:
    """Readable test ids."""
    return [str(case) for case, _ in cases]


@pytest.mark.parametrize(("case", "config"), PASSING, ids=ids(PASSING))
def test_rule_passes(case: Case, config: dict | Config | None, base: Stack) -> None:
    """The rule reports nothing on a compliant (or correctly configured) stack."""
    stack = case.stack(base)
    found = [v for v in evaluate(stack.resources, config_for(config, stack)) if v.policy == case.rule]
    assert found == []


@pytest.mark.parametrize(("case", "config"), FAILING, ids=ids(FAILING))
def test_rule_fails(case: Case, config: dict | Config | None, base: Stack) -> None:
    """The rule blames the broken resource with a message that names the problem."""
    stack = case.stack(base)
    found = [v for v in evaluate(stack.resources, config_for(config, stack)) if v.policy == case.rule]
    assert [v.urn for v in found] == [stack.get(case.blamed).urn], found
    assert case.says.format_map(stack.names) in found[0].message
    assert found[0].level == next(r.level for r in RULES if r.name == case.rule)


def test_every_rule_has_a_passing_and_a_failing_case() -> None:
    """No rule goes untested in either direction (beyond the shared compliant stack)."""
    names = {rule.name for rule in RULES}
    assert names == {case.rule for case, _ in FAILING}
    assert names <= {case.rule for case, _ in PASSING}


def test_compliant_stack_has_no_violations(base: Stack) -> None:
    """The reference stack passes every rule."""
    assert evaluate(base.resources) == []


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_stacks_pass_every_mandatory_rule(shipped_plan: Callable[[str], Plan], stack: str) -> None:
    """What the project ships is what its policy pack accepts."""
    assert [v for v in evaluate(shipped_plan(stack).resources) if v.level == MANDATORY] == []


def test_fixture_has_the_shapes_of_the_real_stack(shipped_plan: Callable[[str], Plan]) -> None:
    """Each hand-written resource has its real twin's type, input shapes (types, nesting) and links to other roles."""
    fixture, real = fixture_stack(), real_stack(shipped_plan(REAL_STACK).resources)
    roles = [role for role in FIXTURE_NAMES if role in ROLE_TYPES and role not in ("aws_cluster", *ADDED)]
    for role in roles:
        mine, twin = fixture.get(role), real.get(role)
        assert mine.type == twin.type, role
        shared = set(mine.inputs) & set(twin.inputs)
        assert shared, role
        assert all(same_shape(mine.inputs[k], twin.inputs[k]) for k in shared), role
        assert linked_roles(fixture, mine, roles) <= linked_roles(real, twin, roles), role


def same_shape(mine: Any, real: Any) -> bool:
    """Both values have the same JSON type, recursively over the keys both have (lists by their first item)."""
    if isinstance(mine, dict) and isinstance(real, dict):
        return all(same_shape(mine[k], real[k]) for k in mine.keys() & real.keys())
    if isinstance(mine, list) and isinstance(real, list):
        return not mine or not real or same_shape(mine[0], real[0])
    return type(mine) is type(real)


def linked_roles(stack: Stack, resource: PlanResource, roles: list[str]) -> set[str]:
    """Roles of the resources this one depends on."""
    by_urn = {stack.get(role).urn: role for role in roles}
    return {by_urn[urn] for urn in resource.dependencies if urn in by_urn}


CHART_OVERRIDES = [
    ("gpu-operator-host-driver", "gpuOperator", {"driver": {"enabled": True}}, "driver.enabled=false"),
    ("gpu-operator-mig-manager-disabled", "gpuOperator", {"migManager": {"enabled": True}}, "migManager.enabled=false"),
    (
        "dra-driver-compute-domains-enabled",
        "draDriver",
        {"resources": {"computeDomains": {"enabled": False}}},
        "computeDomains.enabled=true",
    ),
]


@pytest.mark.parametrize(("rule", "chart", "values", "says"), CHART_OVERRIDES, ids=[c[0] for c in CHART_OVERRIDES])
def test_chart_values_set_in_the_stack_file_are_caught(
    plan_with: Callable[..., Plan], rule: str, chart: str, values: dict, says: str
) -> None:
    """Chart values are the user's to override, so the real stack planned with a bad override fails the rule."""
    plan = plan_with(REAL_STACK, {"kubernetes": {chart: {"values": values}}})
    found = [v for v in evaluate(plan.resources) if v.level == MANDATORY]
    assert [v.policy for v in found] == [rule]
    assert plan.by_urn()[found[0].urn].type == "kubernetes:helm.sh/v3:Release"
    assert says in found[0].message


REJECTED_SETTINGS = [
    ("eks-kubernetes-version", "cluster", {"kubernetesVersion": "1.32"}, "cluster.kubernetesVersion: got '1.32'"),
    (
        "eks-public-endpoint-cidrs",
        "cluster",
        {"endpointPublicAccessCidrs": ["0.0.0.0/0"]},
        "cluster.endpointPublicAccessCidrs: got '0.0.0.0/0'",
    ),
    ("gb200-ami-release", "gpuNodeGroups", {"amiRelease": "v20250519"}, "gpuNodeGroups[0].amiRelease: got 'v20250519'"),
]


@pytest.mark.parametrize(
    ("rule", "section", "change", "says"), REJECTED_SETTINGS, ids=[c[0] for c in REJECTED_SETTINGS]
)
def test_settings_reject_what_the_rules_forbid(
    plan_with: Callable[..., Plan], rule: str, section: str, change: dict, says: str
) -> None:
    """Many violations cannot be written in a stack file at all: the settings stop them before any resource."""
    config = stack_config(REAL_STACK)[f"ultraserver-eks:{section}"]
    value = [{**config[0], **change}] if isinstance(config, list) else {**config, **change}
    with pytest.raises(ConfigError) as error:
        plan_with(REAL_STACK, {section: value})
    assert says in str(error.value), rule
