"""`plan --upgrade`: clock walks over a stack's blocks. The upgrade lands in a gap, never while a block serves; with no
gap the plan shows the cost either way; the rollback advice is a request botocore's EKS model accepts."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from helpers.capacity import two_block_settings
from helpers.cli import run_main
from helpers.preflight import stubbed
from helpers.stacks import stack_config
from ultraserver.config.settings import Settings, parse_settings
from ultraserver.offline import upgrade

UTC = timezone.utc
A_START = datetime(2026, 12, 1, 11, 30, tzinfo=UTC)


def blocks_settings(*spans: tuple[datetime, datetime], minor: str = "1.35") -> Settings:
    """gb200-x72 with its group on successive blocks (one reservation each), on Kubernetes ``minor``."""
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:cluster"]["kubernetesVersion"] = minor
    [group] = config["ultraserver-eks:gpuNodeGroups"]
    group.pop("capacityReservationIds")
    group.pop("reservationWindow")
    group["capacityBlocks"] = [
        {"start": start.isoformat(), "end": end.isoformat(), "capacityReservationIds": [f"cr-0{index:016x}"]}
        for index, (start, end) in enumerate(spans, start=1)
    ]
    return parse_settings(config, stack="gb200-x72", today=A_START.date() - timedelta(days=3))


def serving(settings: Settings) -> list[tuple[datetime, datetime]]:
    """The block windows as the stack file writes them (not the planner's merged view)."""
    return [(b.window.start, b.window.end) for g in settings.gpu_node_groups for b in g.blocks if b.window]


def steps_outside_blocks(plan: upgrade.UpgradePlan, settings: Settings) -> bool:
    assert plan.control_plane_at is not None and plan.node_groups_at is not None
    done = plan.node_groups_at + upgrade.NODE_GROUP_BUDGET
    return all(done <= start or plan.control_plane_at >= end for start, end in serving(settings))


GAP = (A_START, A_START + timedelta(days=7)), (A_START + timedelta(days=10), A_START + timedelta(days=17))


@pytest.mark.parametrize(
    "now",
    [A_START - timedelta(days=2), A_START + timedelta(days=3), A_START + timedelta(days=7, hours=1)],
    ids=["before the first block", "inside block 1", "in the gap"],
)
def test_the_upgrade_lands_in_the_gap_between_blocks(now: datetime) -> None:
    settings = blocks_settings(*GAP)
    plan = upgrade.plan_upgrade(settings, "1.36", now)
    assert plan.control_plane_at is not None and plan.control_plane_at >= now
    assert steps_outside_blocks(plan, settings)
    if now < A_START:  # before the first block: that gap holds the budget, the first block's acceptance checks it
        assert plan.acceptance_at == A_START
    else:
        assert plan.control_plane_at >= GAP[0][1] and plan.acceptance_at == GAP[1][0]


def test_inside_a_block_the_upgrade_is_refused_now_and_waits_for_the_gap() -> None:
    settings = blocks_settings(*GAP)
    plan = upgrade.plan_upgrade(settings, "1.36", A_START + timedelta(days=3))
    assert plan.not_now.startswith("a block's 18 nodes serve until 2026-12-08 11:30Z")
    text = "\n".join(plan.lines())
    assert "not now" in text and "2026-12-08 11:30Z  control plane to 1.36" in text


def test_in_a_long_gap_the_upgrade_waits_so_the_acceptance_falls_inside_the_rollback_window() -> None:
    spans = (A_START, A_START + timedelta(days=7)), (A_START + timedelta(days=28), A_START + timedelta(days=35))
    plan = upgrade.plan_upgrade(blocks_settings(*spans), "1.36", A_START + timedelta(days=8))
    assert plan.control_plane_at is not None and plan.acceptance_at == spans[1][0] and plan.rollback is not None
    assert plan.acceptance_at - plan.control_plane_at <= timedelta(days=7) - upgrade.ROLLBACK_MARGIN
    assert plan.rollback.until - plan.acceptance_at >= upgrade.ROLLBACK_MARGIN


def test_back_to_back_blocks_leave_no_gap_and_the_plan_prices_both_ways() -> None:
    settings = blocks_settings(
        (A_START, A_START + timedelta(days=7)),
        (A_START + timedelta(days=7), A_START + timedelta(days=14)),
        minor="1.34",
    )
    plan = upgrade.plan_upgrade(settings, "1.35", A_START - timedelta(hours=1))
    assert plan.control_plane_at is None and plan.rollback is None
    # 1.34 leaves standard support on 2026-12-02; the blocks end 2026-12-15 11:30: 323.5 h at $0.50 more per hour.
    assert "draining 18 nodes for 2 h loses 36 block instance-hours (72 GPUs)" in plan.no_gap
    assert "324 h in extended support from 2026-12-02: $161.75 more ($0.60 instead of $0.10" in plan.no_gap


def test_the_shipped_two_block_handover_has_no_gap_either() -> None:
    plan = upgrade.plan_upgrade(two_block_settings(), "1.36", A_START + timedelta(days=1))
    assert plan.control_plane_at is None and plan.not_now and "no gap of 2 h" in plan.no_gap


def test_a_failed_acceptance_has_a_rollback_botocore_accepts_within_the_window() -> None:
    plan = upgrade.plan_upgrade(blocks_settings(*GAP), "1.36", A_START + timedelta(days=7, hours=1))
    assert plan.rollback is not None and plan.acceptance_at is not None and plan.control_plane_at is not None
    assert plan.acceptance_at < plan.rollback.until == plan.control_plane_at + timedelta(days=7)
    request = plan.rollback.request()
    assert request["version"] == "1.35" and request["rollbackConfig"]["timeoutMinutes"] in range(120, 10081)
    eks, stub = stubbed("eks")
    stub.add_response("update_cluster_version", {"update": {"id": "u-1", "status": "InProgress"}}, request)
    eks.update_cluster_version(**request)  # botocore validates rollbackConfig against its EKS model
    stub.assert_no_pending_responses()
    text = "\n".join(plan.lines())
    assert "If that acceptance fails, roll back before 2026-12-15" in text and "rollbackConfig" in text


@pytest.mark.parametrize(
    ("minor", "target", "allowed"),
    [("1.36", "1.37", "(none;"), ("1.35", "1.37", "(1.36;"), ("1.35", "1.34", "(1.36;"), ("1.35", "latest", "(1.36;")],
    ids=["no AMI for 1.37", "two minors", "down", "text"],
)
def test_a_target_that_is_not_the_next_pinned_minor_is_refused(minor: str, target: str, allowed: str) -> None:
    problem = upgrade.target_problem(blocks_settings(*GAP, minor=minor), target, A_START)
    assert problem is not None and problem.key == "--upgrade" and allowed in problem.allowed


def test_plan_prints_the_upgrade_and_refuses_a_bad_target(tmp_path: Any) -> None:
    result = run_main("plan", "--stack", "gb200-x72", "--upgrade", "1.36", "--now", "2026-11-28T00:00:00Z")
    assert result.code == 0, result.stderr
    assert "Upgrade 1.35 -> 1.36" in result.stdout and "block-start acceptance on 1.36" in result.stdout
    refused = run_main("plan", "--stack", "gb200-x72", "--upgrade", "1.37", "--now", "2026-11-28T00:00:00Z")
    assert refused.code == 2 and "--upgrade" in refused.stderr and "Traceback" not in refused.stderr
