"""The plan records the earlier URNs each resource takes over, as the Pulumi engine computes them from its aliases and
its parent's (pulumi/pulumi pkg/resource/deploy/step_generator.go: offline/aliases.py)."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws
from ultraserver.offline import Plan, record

QUEUE = "aws:sqs/queue:Queue"
PREFIX = "urn:pulumi:offline::ultraserver::"


def declare(parent_aliases: list[pulumi.Alias], child: str = "new-queue", **child_opts) -> Plan:  # type: ignore[no-untyped-def]
    def program() -> None:
        parent = pulumi.ComponentResource("x:index:New", "new", None, pulumi.ResourceOptions(aliases=parent_aliases))
        aws.sqs.Queue(child, opts=pulumi.ResourceOptions(parent=parent, **child_opts))

    return record(program)


def aliases(plan: Plan, name: str) -> list[str]:
    (found,) = [r for r in plan.resources if r.name == name]
    return [a.removeprefix(PREFIX) for a in found.aliases]


def test_a_child_follows_its_parent_to_the_parent_s_earlier_type() -> None:
    plan = declare([pulumi.Alias(type_="x:index:Old")])
    assert aliases(plan, "new") == ["pulumi:pulumi:Stack$x:index:Old::new"]
    assert aliases(plan, "new-queue") == [f"x:index:Old${QUEUE}::new-queue"]


def test_a_child_named_after_its_parent_follows_the_parent_s_earlier_name() -> None:
    plan = declare([pulumi.Alias(name="old")])
    assert aliases(plan, "new-queue") == [f"x:index:New${QUEUE}::old-queue"]
    # A name that does not start with the parent's keeps its own name.
    assert aliases(declare([pulumi.Alias(name="old")], child="queue"), "queue") == [f"x:index:New${QUEUE}::queue"]


def test_a_child_s_own_alias_counts_under_its_parent_and_under_the_parent_s_earlier_urn() -> None:
    plan = declare([pulumi.Alias(type_="x:index:Old")], aliases=[pulumi.Alias(name="new")])
    assert aliases(plan, "new-queue") == [
        f"x:index:New${QUEUE}::new",
        f"x:index:Old${QUEUE}::new-queue",
        f"x:index:Old${QUEUE}::new",
    ]


def test_urn_aliases_are_kept_as_given_and_no_parent_means_the_stack() -> None:
    given = f"{PREFIX}x:index:Elsewhere${QUEUE}::q"
    plan = declare([], aliases=[given, pulumi.Alias(parent=None)])
    assert aliases(plan, "new-queue") == [given.removeprefix(PREFIX), f"pulumi:pulumi:Stack${QUEUE}::new-queue"]


def test_resources_without_aliases_claim_nothing() -> None:
    plan = declare([])
    assert all(r.aliases == [] for r in plan.resources)
