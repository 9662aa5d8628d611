"""Each policy rule passes on the compliant stack (and its accepted variants) and fails on a broken one."""

from __future__ import annotations

import pytest

from policy_cases import FAILING, PASSING, Case, base  # noqa: F401 (base is a fixture)
from policy_fixtures import find, good_stack
from sdk_stack import recorded_stack
from ultraserver.policy import RULES, PlanResource, evaluate


def ids(cases: list[tuple[Case, dict | None]]) -> list[str]:
    """Readable test ids."""
    return [str(case) for case, _ in cases]


@pytest.mark.parametrize(("case", "config"), PASSING, ids=ids(PASSING))
def test_rule_passes(case: Case, config: dict | None, base: list[PlanResource]) -> None:
    """The rule reports nothing on a compliant (or correctly configured) stack."""
    found = [v for v in evaluate(case.stack(base), config) if v.policy == case.rule]
    assert found == []


@pytest.mark.parametrize(("case", "config"), FAILING, ids=ids(FAILING))
def test_rule_fails(case: Case, config: dict | None, base: list[PlanResource]) -> None:
    """The rule blames the broken resource with a message that names the problem."""
    stack = case.stack(base)
    found = [v for v in evaluate(stack, config) if v.policy == case.rule]
    blamed = find(stack, *case.blamed)
    assert [v.urn for v in found] == [blamed.urn], found
    assert case.says in found[0].message
    assert found[0].level == next(r.level for r in RULES if r.name == case.rule)


def test_every_rule_has_a_passing_and_a_failing_case() -> None:
    """No rule goes untested in either direction (beyond the shared compliant stack)."""
    names = {rule.name for rule in RULES}
    assert names == {case.rule for case, _ in FAILING}
    assert names <= {case.rule for case, _ in PASSING}


def test_compliant_stack_has_no_violations(base: list[PlanResource]) -> None:
    """The reference stack passes every rule."""
    assert evaluate(base) == []


def test_recording_matches_the_fixture() -> None:
    """The hand-written fixture has the recorded inputs and links (the engine may add more, e.g. Helm's compat)."""
    recorded = list(recorded_stack())
    by_key = {(r.type, r.name): r for r in recorded}
    for resource in good_stack():
        twin = by_key[(resource.type, resource.name)]
        assert {k: twin.inputs.get(k) for k in resource.inputs} == resource.inputs, resource.name
        assert dependency_names(good_stack(), resource) <= dependency_names(recorded, twin), resource.name


def dependency_names(stack: list[PlanResource], resource: PlanResource) -> set[str]:
    """Names of the resources this one depends on."""
    names = {r.urn: r.name for r in stack}
    return {names[urn] for urn in resource.dependencies if urn in names}
