"""Back-to-back Capacity Blocks with ``handover: standby``: one deploy before both blocks, then the clock
walks through them with no further deploy. Each block's own group is made at 0 on its own reservation and its
scheduled actions alone bring it to full size in its block and back to 0 before the block ends."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from helpers.plan_lookup import one
from helpers.stacks import stack_config
from ultraserver.config.blocks import block_views, standby_timelines
from ultraserver.config.settings import parse_settings
from ultraserver.offline import Plan, PlanResource, record
from ultraserver.offline.groups import block_lines, group_views, windows_by_group
from ultraserver.problems import ConfigError
from ultraserver.resources.platform import Platform, PlatformArgs

FIRST = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
SECOND = datetime(2026, 12, 15, 11, 30, tzinfo=timezone.utc)  # starts when the first ends
DAYS = 14
IDS = (["cr-0aaaaaaaaaaaaaaaa", "cr-0cccccccccccccccc"], ["cr-0bbbbbbbbbbbbbbbb", "cr-0dddddddddddddddd"])
STEMS = ("20261201t1130z", "20261215t1130z")
SCHEDULE = "aws:autoscaling/schedule:Schedule"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ASG = "aws:autoscaling/group:Group"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
TODAY = FIRST.date() - timedelta(days=7)
DEPLOYED = FIRST - timedelta(days=2)
"""The one and only deploy: two days before the first block."""


def standby_config(mode: str = "managed", handover: str = "standby") -> dict[str, Any]:
    """gb200-x72 with two UltraServers over two back-to-back blocks."""
    config = copy.deepcopy(stack_config("gb200-x72"))
    group = config["ultraserver-eks:gpuNodeGroups"][0]
    group.pop("capacityReservationIds")
    group.pop("reservationWindow")
    group["mode"] = mode
    group["handover"] = handover
    group["capacityBlocks"] = [
        {"capacityReservationIds": ids, "start": start.isoformat(), "end": (start + timedelta(days=DAYS)).isoformat()}
        for ids, start in zip(IDS, (FIRST, SECOND), strict=True)
    ]
    return config


def plan_at(now: datetime, mode: str = "managed") -> Plan:
    settings = parse_settings(standby_config(mode), today=TODAY)
    return record(lambda: Platform("ultraserver", PlatformArgs(settings=settings, now=now)))


def group_name(position: int, block: int) -> str:
    return f"nvl72-{position + 1}-{STEMS[block]}"


def size_at(plan: Plan, group: PlanResource, mode: str, moment: datetime) -> int:
    """What Auto Scaling holds the group at, at ``moment``: its deployed size, then the latest of its scheduled actions
    that has run (each sets min, max and desired at its start time)."""
    size = int(group.inputs["scalingConfig"]["desiredSize"] if mode == "managed" else group.inputs["desiredCapacity"])
    ran = sorted(
        (s.inputs["startTime"], int(s.inputs["desiredCapacity"]))
        for s in plan.of_type(SCHEDULE)
        if s.name.startswith(f"{group.name}-capacity-block")
        and s.inputs["startTime"] <= moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    )
    return ran[-1][1] if ran else size


def reservation(plan: Plan, name: str) -> str:
    spec = one(plan, TEMPLATE, name).inputs["capacityReservationSpecification"]
    return str(spec["capacityReservationTarget"]["capacityReservationId"])


FIRST_DOWN = FIRST + timedelta(days=DAYS, minutes=-65)
SECOND_DOWN = SECOND + timedelta(days=DAYS, minutes=-65)
# Moments of the walk and the full-size block at each (None: every group at 0).
WALK = {
    "before the first": (FIRST - timedelta(minutes=1), None),
    "first starts": (FIRST, 0),
    "during the first": (FIRST + timedelta(days=7), 0),
    "first scaled down": (FIRST_DOWN, None),
    "between the blocks": (SECOND - timedelta(minutes=1), None),
    "second starts": (SECOND, 1),
    "during the second": (SECOND + timedelta(days=7), 1),
    "second scaled down": (SECOND_DOWN, None),
}


@pytest.mark.parametrize("mode", ["managed", "self-managed"])
@pytest.mark.parametrize("moment", WALK)
def test_one_deploy_runs_each_block_on_its_own_group_with_no_one_in_the_gap(moment: str, mode: str) -> None:
    plan = plan_at(DEPLOYED, mode)
    now, full = WALK[moment]
    for position in range(2):
        for block in range(2):
            name = group_name(position, block)
            # The right reservation: each block's group targets that block's reservation of its UltraServer.
            assert reservation(plan, name) == IDS[block][position]
            group = one(plan, NODE_GROUP if mode == "managed" else ASG, name)
            assert size_at(plan, group, mode, now) == (18 if block == full else 0), (name, moment)


def test_a_deploy_at_any_moment_changes_no_template_and_agrees_with_the_schedule() -> None:
    deployed = plan_at(DEPLOYED)
    for now, _ in WALK.values():
        later = plan_at(now)
        for name in (group_name(0, block) for block in range(2)):
            if not any(n.endswith(name) for n in names(later)):
                continue  # its block has ended: the deploy removes the group (at 0 since the scale-down)
            assert one(later, TEMPLATE, name).inputs == one(deployed, TEMPLATE, name).inputs
            before, after = one(deployed, NODE_GROUP, name), one(later, NODE_GROUP, name)
            assert size_at(later, after, "managed", now) == size_at(deployed, before, "managed", now)


def names(plan: Plan) -> list[str]:
    return [r.name for r in plan.of_type(NODE_GROUP)]


def test_an_ended_block_group_is_dropped_by_the_next_deploy() -> None:
    assert not [n for n in names(plan_at(SECOND + timedelta(days=1))) if STEMS[0] in n]
    assert [n for n in names(plan_at(FIRST + timedelta(days=DAYS, minutes=-1))) if STEMS[0] in n]


def test_the_plan_shows_each_blocks_timeline_and_no_switch() -> None:
    settings = parse_settings(standby_config(), today=TODAY)
    lines = block_lines(settings, DEPLOYED)
    assert lines[f"{settings.cluster.name}-{group_name(1, 1)}"] == (
        "cr-0dddddddddddddddd; create: any pulumi up before 2026-12-15 11:30Z (at 0 nodes); "
        "scale up: 2026-12-15 11:30Z; scale down: 2026-12-29 10:25Z; end: 2026-12-29 11:30Z"
    )
    assert not any("switch" in line for line in lines.values())
    assert block_views(settings, DEPLOYED) == []
    assert len(standby_timelines(settings, DEPLOYED)) == 4


def test_switch_handover_is_unchanged() -> None:
    settings = parse_settings(standby_config(handover="switch"), today=TODAY)
    assert standby_timelines(settings, DEPLOYED) == {}
    plan = record(lambda: Platform("ultraserver", PlatformArgs(settings=settings, now=DEPLOYED)))
    cluster = settings.cluster.name
    assert sorted(n for n in names(plan) if "nvl72" in n) == [f"{cluster}-nvl72-1", f"{cluster}-nvl72-2"]


def test_standby_without_capacity_blocks_names_the_key() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:gpuNodeGroups"][0]["handover"] = "standby"
    with pytest.raises(ConfigError) as raised:
        parse_settings(config, today=TODAY)
    assert "gpuNodeGroups[0].handover" in str(raised.value)
    assert "capacityBlocks" in str(raised.value)


def test_a_block_groups_longer_names_are_checked_against_the_limits() -> None:
    # "<cluster>-nvl72-1" fits every derived-name limit; "<cluster>-nvl72-1-<block start>" does not.
    config = standby_config(handover="switch")
    config["ultraserver-eks:cluster"]["name"] = "c" * 29
    parse_settings(config, today=TODAY)
    config["ultraserver-eks:gpuNodeGroups"][0]["handover"] = "standby"
    with pytest.raises(ConfigError) as raised:
        parse_settings(config, today=TODAY)
    assert f"{'c' * 29}-nvl72-1-{STEMS[0]}" in str(raised.value)


def test_the_plan_report_shows_each_block_group_with_its_window_and_timeline() -> None:
    settings = parse_settings(standby_config(), today=TODAY)
    plan = plan_at(DEPLOYED)
    views = {
        v.name: dict(v.rows)
        for v in group_views(plan, windows_by_group(settings), DEPLOYED, block_lines(settings, DEPLOYED))
    }
    second = views[f"{settings.cluster.name}-{group_name(0, 1)}"]
    assert second["reservation"] == IDS[1][0]
    assert second["capacity block"].startswith(f"{IDS[1][0]}; create: any pulumi up before 2026-12-15 11:30Z")
    assert second["window"].startswith("future: 2026-12-15T11:30Z to 2026-12-29T11:30Z")
