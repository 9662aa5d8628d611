"""A Capacity Block that has ended and scheduled actions already past (sources in facts/capacity/capacity_blocks.py,
``has_ended`` and ``ACTION_PREFIX``): the plan makes nothing for an ended block, leaves past actions out, and says why.

gb200-x72 ships one UltraServer on the block 2026-12-01T11:30Z to 2026-12-15T11:30Z; each test pins the clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

import boto3
from botocore.stub import Stubber
from helpers.cli import run_main
from helpers.plan_lookup import one
from helpers.stacks import ROOT, stack_config
from ultraserver import clock
from ultraserver.config.settings import parse_settings, settings_warnings
from ultraserver.offline import Plan, run_plan
from ultraserver.problems import INFO, WARNING

START = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
END = datetime(2026, 12, 15, 11, 30, tzinfo=timezone.utc)
GROUPS = "ultraserver-eks:gpuNodeGroups"
GROUP = f"{GROUPS}[0]"
NODE_GROUP, TEMPLATE = "aws:eks/nodeGroup:NodeGroup", "aws:ec2/launchTemplate:LaunchTemplate"
SCHEDULE = "aws:autoscaling/schedule:Schedule"
OLD, NEW = "cr-0aaaaaaaaaaaaaaaa", "cr-0bbbbbbbbbbbbbbbb"


def two_blocks(handover: str = "switch") -> dict[str, Any]:
    """gb200-x72's group on a block that ended (Nov 2026) and the shipped one (Dec 2026)."""
    group = dict(stack_config("gb200-x72")[GROUPS][0])
    group.pop("capacityReservationIds"), group.pop("reservationWindow")
    group["handover"] = handover
    group["capacityBlocks"] = [
        {"capacityReservationIds": [OLD], "start": "2026-11-01T11:30:00Z", "end": "2026-11-15T11:30:00Z"},
        {"capacityReservationIds": [NEW], "start": START.isoformat(), "end": END.isoformat()},
    ]
    return {GROUPS: [group]}


def warnings_at(now: datetime, overrides: dict[str, Any] | None = None) -> list[Any]:
    config = {**stack_config("gb200-x72"), **(overrides or {})}
    with clock.pinned(now):
        settings = parse_settings(config)
        return [p for p in settings_warnings(settings) if p.key.startswith(GROUP)]


def reservations(plan: Plan) -> list[str]:
    return [
        t.inputs["capacityReservationSpecification"]["capacityReservationTarget"]["capacityReservationId"]
        for t in plan.of_type(TEMPLATE)
        if "capacityReservationSpecification" in t.inputs
    ]


def test_a_group_whose_only_block_ended_is_left_out_of_the_plan_with_a_warning_that_says_why() -> None:
    after = END + timedelta(minutes=1)
    plan = run_plan(ROOT, "gb200-x72", now=after)
    assert not [g for g in plan.of_type(NODE_GROUP) if "nvl72" in g.name]
    assert "cr-0123456789abcdef0" not in reservations(plan) and not plan.of_type(SCHEDULE)
    (ended,) = [p for p in warnings_at(after) if p.key == f"{GROUP}.reservationWindow.end"]
    assert ended.level == WARNING and "cr-0123456789abcdef0" in ended.allowed
    assert "you can no longer launch instances into it" in ended.allowed
    assert "leaves the whole group out" in ended.fix


def test_the_plan_shows_the_skipped_block() -> None:
    result = run_main("plan", "--stack", "gb200-x72", "--now", "2026-12-16T00:00:00Z")
    assert result.code == 0, result.stderr
    assert "0 GPU in 0 GPU node groups" in result.stdout
    # The Warnings section is format_problems: the key's line, then its value, allowed and fix lines below it.
    lines = result.stdout.splitlines()
    (at,) = [i for i, line in enumerate(lines) if "reservationWindow.end" in line and "WARNING" in line]
    warning = "\n".join(lines[at : at + 4])
    assert "expired" in warning and "leaves the whole group out" in warning


def test_an_ended_block_before_a_coming_one_makes_nothing_and_the_group_runs_on_the_next() -> None:
    now = START - timedelta(days=2)
    plan = run_plan(ROOT, "gb200-x72", two_blocks(), now=now)
    assert reservations(plan) == [NEW]
    assert all(s.inputs["startTime"] > "2026-11-16" for s in plan.of_type(SCHEDULE))
    (ended,) = [p for p in warnings_at(now, two_blocks()) if p.key.endswith(".end") and p.level == WARNING]
    assert ended.key == f"{GROUP}.capacityBlocks[0].end" and OLD in ended.allowed
    assert "makes nothing for this block" in ended.fix


def test_standby_drops_an_ended_blocks_group_the_same_way() -> None:
    now = START - timedelta(days=2)
    plan = run_plan(ROOT, "gb200-x72", two_blocks("standby"), now=now)
    assert reservations(plan) == [NEW]
    assert [g.name for g in plan.of_type(NODE_GROUP) if "nvl72" in g.name] == ["gb200-x72-nvl72-20261201t1130z"]
    assert [p.key for p in warnings_at(now, two_blocks("standby")) if p.level == WARNING] == [
        f"{GROUP}.capacityBlocks[0].end"
    ]


def test_a_running_block_still_plans_at_full_size_without_its_past_scale_up() -> None:
    now = START + timedelta(days=3)
    plan = run_plan(ROOT, "gb200-x72", now=now)
    group = one(plan, NODE_GROUP, "nvl72")
    assert group.inputs["scalingConfig"]["desiredSize"] == 18
    assert reservations(plan) == ["cr-0123456789abcdef0"]
    (action,) = plan.of_type(SCHEDULE)
    assert action.inputs["scheduledActionName"] == "capacity-block-end" and action.inputs["desiredCapacity"] == 0
    (past,) = [p for p in warnings_at(now) if p.key == f"{GROUP}.reservationWindow.start"]
    assert past.level == INFO and "If you try to schedule your action in the past" in past.allowed
    assert "leaves the scale-up action out" in past.fix


def test_every_planned_action_is_a_request_auto_scaling_accepts_none_in_the_past() -> None:
    """Each Schedule of a running block, sent as PutScheduledUpdateGroupAction (request shape checked by botocore),
    starts after the plan's clock."""
    now = START + timedelta(days=3)
    plan = run_plan(ROOT, "gb200-x72", now=now)
    client = boto3.client(
        "autoscaling", region_name="us-east-1", aws_access_key_id="offline", aws_secret_access_key="offline"
    )
    with Stubber(client) as stub:
        for action in plan.of_type(SCHEDULE):
            params = {
                "AutoScalingGroupName": "gb200-x72-nvl72",
                "ScheduledActionName": action.inputs["scheduledActionName"],
                "StartTime": action.inputs["startTime"],
                "MinSize": action.inputs["minSize"],
                "MaxSize": action.inputs["maxSize"],
                "DesiredCapacity": action.inputs["desiredCapacity"],
            }
            assert datetime.fromisoformat(params["StartTime"]) > now
            stub.add_response("put_scheduled_update_group_action", {}, params)
            client.put_scheduled_update_group_action(**params)
        stub.assert_no_pending_responses()


def test_an_action_due_within_the_deploy_margin_warns_and_is_still_planned() -> None:
    now = START - timedelta(minutes=10)
    plan = run_plan(ROOT, "gb200-x72", now=now)
    assert {s.inputs["scheduledActionName"] for s in plan.of_type(SCHEDULE)} == {
        "capacity-block-start",
        "capacity-block-end",
    }
    (soon,) = [p for p in warnings_at(now) if p.key == f"{GROUP}.reservationWindow.start"]
    assert soon.level == WARNING and "due within 30 minutes" in soon.allowed
    assert not [p for p in warnings_at(START - timedelta(days=1)) if p.key.endswith((".start", ".end"))]


def test_a_block_past_its_scale_down_but_not_ended_reports_only_the_scale_down() -> None:
    now = END - timedelta(minutes=20)  # scaled to 0 (60 min lead), EC2 not done yet
    plan = run_plan(ROOT, "gb200-x72", now=now)
    assert one(plan, NODE_GROUP, "nvl72").inputs["scalingConfig"]["desiredSize"] == 0
    assert not plan.of_type(SCHEDULE)
    (past,) = [p for p in warnings_at(now) if p.key.startswith(f"{GROUP}.reservationWindow")]
    assert past.key.endswith(".end") and past.level == INFO and "desired size to 0" in past.fix


def test_a_group_left_out_gets_no_fabric_check_and_no_quota_but_kueue_stays() -> None:
    """Nothing on the Kubernetes side waits for nodes of a group whose every block has ended, and Kueue (whose chart
    carries its CRDs, so an uninstall would delete the users' queues) stays installed with no GPU quota."""
    during, after = START + timedelta(days=1), END + timedelta(minutes=1)
    running, ended = run_plan(ROOT, "gb200-x72", now=during), run_plan(ROOT, "gb200-x72", now=after)
    jobs, queue = "kubernetes:kubeflow.org/v2beta1:MPIJob", "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue"
    assert running.of_type(jobs) and ended.of_type(jobs) == []

    def quotas(plan: Plan) -> set[int]:
        groups = one(plan, queue).inputs["spec"]["resourceGroups"]
        return {r["nominalQuota"] for g in groups for f in g["flavors"] for r in f["resources"]}

    assert 72 in quotas(running) and quotas(ended) == {0}
