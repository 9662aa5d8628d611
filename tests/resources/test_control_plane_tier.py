"""The EKS control-plane scaling tier: derived from the fleet's GPU nodes unless set, refused when EKS has no such
tier, and set on pulumi-eks's aws:eks/cluster:Cluster child through a transform."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pulumi
import pytest
from helpers.stacks import stack_config
from ultraserver.cli.plan import control_plane_notes
from ultraserver.config.settings import parse_settings
from ultraserver.facts.aws import control_plane
from ultraserver.problems import ConfigError
from ultraserver.resources.cluster import scaling_tier

TODAY = date(2026, 11, 23)


def settings(**cluster: Any) -> Any:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:cluster"].update(cluster)
    return parse_settings(config, today=TODAY)


@pytest.mark.parametrize(
    ("nodes", "tier"),
    [
        (18, "standard"),
        (999, "standard"),
        (1_000, "tier-xl"),
        (2_500, "tier-2xl"),
        (5_000, "tier-4xl"),
        (18_000, "tier-8xl"),
    ],
)
def test_the_tier_follows_the_fleet(nodes: int, tier: str) -> None:
    assert control_plane.tier_for(nodes) == tier


def test_shipped_stacks_stay_standard_and_a_set_tier_wins() -> None:
    assert settings().control_plane_tier == "standard" and control_plane_notes(settings()) == []
    chosen = settings(controlPlaneTier="tier-2xl")
    assert chosen.control_plane_tier == "tier-2xl"
    [note] = control_plane_notes(chosen)
    assert note.startswith("Control plane tier: tier-2xl (cluster.controlPlaneTier);") and "UNVERIFIED" in note


def test_a_tier_eks_does_not_offer_is_refused_with_the_key() -> None:
    with pytest.raises(ConfigError) as raised:
        settings(controlPlaneTier="tier-16xl")
    assert "cluster.controlPlaneTier" in str(raised.value) and "tier-8xl" in str(raised.value)
    with pytest.raises(ConfigError, match="control_plane_tier"):
        scaling_tier("huge")


def test_the_transform_sets_the_tier_on_the_aws_cluster_child_only() -> None:
    transform = scaling_tier("tier-xl")
    opts = pulumi.ResourceOptions()
    child = pulumi.ResourceTransformArgs(
        custom=True, type_="aws:eks/cluster:Cluster", name="c-eksCluster", props={"name": "c"}, opts=opts
    )
    result = transform(child)
    assert result is not None and result.props == {"name": "c", "controlPlaneScalingConfig": {"tier": "tier-xl"}}
    other = pulumi.ResourceTransformArgs(custom=True, type_="aws:iam/role:Role", name="r", props={}, opts=opts)
    assert transform(other) is None
