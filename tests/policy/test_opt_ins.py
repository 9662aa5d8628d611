"""Settings and policy agree: what a stack opts in to, with the setting its error names, no policy refuses.

One row per policy rule whose refusal a stack setting can lift: the settings the error tells the user to write, and
the same stack without the opt-in (the settings refuse it, so the rule and the setting decide one question).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from helpers.stacks import stack_config
from ultraserver.offline import Plan
from ultraserver.policy import evaluate
from ultraserver.problems import ConfigError

STACK = "gb200-x72"


def open_endpoint(allow: bool) -> dict[str, Any]:
    """The shipped cluster with an API endpoint open to the internet, opted in or not."""
    cluster = copy.deepcopy(stack_config(STACK)["ultraserver-eks:cluster"])
    cluster.update(endpointPublicAccessCidrs=["0.0.0.0/0"], allowPublicEndpointFromAnywhere=allow)
    return {"cluster": cluster}


# rule -> the stack overrides with the opt-in set to True or False
OPT_INS: dict[str, Callable[[bool], dict[str, Any]]] = {
    "eks-public-endpoint-cidrs": open_endpoint,
}


@pytest.mark.parametrize("rule", sorted(OPT_INS))
def test_an_opted_in_stack_passes_the_rule(rule: str, plan_with: Callable[..., Plan]) -> None:
    plan = plan_with(STACK, OPT_INS[rule](True))
    assert [v.message for v in evaluate(plan.resources) if v.policy == rule] == []


@pytest.mark.parametrize("rule", sorted(OPT_INS))
def test_without_the_opt_in_the_settings_refuse_it(rule: str, plan_with: Callable[..., Plan]) -> None:
    with pytest.raises(ConfigError):
        plan_with(STACK, OPT_INS[rule](False))


def test_the_policy_still_refuses_an_open_endpoint_nobody_opted_in_to(plan_with: Callable[..., Plan]) -> None:
    """A program that declares the cluster itself, without the stack's opt-in tag, is still refused."""
    plan = plan_with(STACK, open_endpoint(True))
    untagged = [
        r.__class__(**{**vars(r), "inputs": {**r.inputs, "tags": {}}}) if r.type == "eks:index:Cluster" else r
        for r in plan.resources
    ]
    assert [v for v in evaluate(untagged) if v.policy == "eks-public-endpoint-cidrs"]
