"""Behaviours a defect put into a copy of the code broke without any test failing (issue 47 §7): each test below
fails when its behaviour breaks."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone

import pytest
from helpers.fake_cluster import healthy_cluster
from helpers.stacks import stack_config
from ultraserver.config.aws_identity import kubeconfig_identity
from ultraserver.config.settings import parse_settings
from ultraserver.facts.capacity.capacity_blocks import MAX_BLOCK_DAYS, ReservationWindow, aws_schedule_problems
from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL
from ultraserver.problems import WARNING
from ultraserver.verify.expect import expectation
from ultraserver.verify.node_facts import NodePods, node_problems

START = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)


def test_a_capacity_block_one_day_longer_than_aws_sells_is_refused() -> None:
    assert aws_schedule_problems(ReservationWindow(START, START + timedelta(days=MAX_BLOCK_DAYS)), "w") == []
    longer = aws_schedule_problems(ReservationWindow(START, START + timedelta(days=MAX_BLOCK_DAYS + 1)), "w")
    assert [p.key for p in longer] == ["w"]
    assert f"at most {MAX_BLOCK_DAYS} days" in longer[0].allowed


def test_an_all_zero_cluster_uuid_in_the_clique_label_is_a_node_problem() -> None:
    settings = parse_settings(stack_config("gb200-x72"), stack="gb200-x72")
    expected = expectation(settings)
    [group] = expected.groups
    node = healthy_cluster(expected, nvlink_nodes=group.nodes).node_list[0]
    assert node_problems(node, group, NodePods()) == []
    zero = dataclasses.replace(node, labels={**node.labels, CLIQUE_LABEL: "00000000-0000-0000-0000-000000000000.1"})
    [problem] = node_problems(zero, group, NodePods())
    assert problem.key == f"node {node.name} label {CLIQUE_LABEL}" and "non-zero ClusterUUID" in problem.allowed


@pytest.mark.parametrize("roles", [1, 2, 3])
def test_a_role_chain_of_two_or_more_is_warned_about(roles: int) -> None:
    config = dict(stack_config("gb200-x72"))
    config["aws:assumeRoles"] = [{"roleArn": f"arn:aws:iam::111122223333:role/R{n}"} for n in range(roles)]
    settings = parse_settings(config, stack="gb200-x72")
    warned = [p for p in kubeconfig_identity(settings, START.date()) if p.key == "aws:assumeRoles"]
    assert len(warned) == (roles > 1) and all(p.level == WARNING for p in warned)
