"""A second `pulumi up` of a deployed shipped stack replaces none of the resources listed in
tests/fixtures/deployed_urns.json (written by scripts/deployed_urns.py from the code before a refactor): each URN, and
each URN of its parent chain, is still declared or is an alias of a declared resource."""

from __future__ import annotations

import json
from datetime import datetime

import pytest
from helpers.modules import load_file
from helpers.stacks import ROOT, STACKS, TEST_NOW
from ultraserver.offline import Plan, PlanResource

DEPLOYED = json.loads((ROOT / "tests" / "fixtures" / "deployed_urns.json").read_text())


def test_the_list_covers_every_shipped_stack_at_the_tests_moment() -> None:
    assert sorted(DEPLOYED["stacks"]) == sorted(STACKS)
    assert datetime.fromisoformat(DEPLOYED["now"]) == TEST_NOW


def claimant(plan: Plan, chain: list[str]) -> PlanResource | None:
    """The declared resource that is, or takes over, chain[0] with every ancestor taking over the chain's next URN."""
    by_urn = plan.by_urn()

    def claims(resource: PlanResource, urn: str) -> bool:
        return urn == resource.urn or urn in resource.aliases

    for resource in plan.resources:
        current: PlanResource | None = resource
        for urn in chain:
            if current is None or not claims(current, urn):
                break
            current = by_urn.get(current.parent)
        else:
            if current is None:
                return resource
    return None


@pytest.mark.parametrize("stack", STACKS)
def test_every_deployed_urn_is_still_declared_or_aliased(shipped_plan, stack) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan(stack)
    missing = [chain[0] for chain in DEPLOYED["stacks"][stack] if claimant(plan, chain) is None]
    assert missing == [], f"{stack}: these deployed resources would be replaced (no URN or alias keeps them)"


def test_the_script_lists_each_component_with_its_children_and_their_parent_chains(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    script = load_file(ROOT / "scripts" / "deployed_urns.py", "deployed_urns_script")
    plan = shipped_plan("gb200-x36")
    listed = script.chains(plan, {"ultraserver:index:EventQueue"})
    # Today's URNs of what the fixture lists under the two former component types: the same resources.
    assert sorted(claimant(plan, chain).urn for chain in DEPLOYED["stacks"]["gb200-x36"]) == [c[0] for c in listed]
    assert all(chain[-1] == plan.of_type("pulumi:pulumi:Stack")[0].urn for chain in listed)
