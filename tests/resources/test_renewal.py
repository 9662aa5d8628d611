"""Renewal across successive Capacity Blocks: the whole platform planned with "now" pinned before, during, between and
after two blocks; the launch template, desired size and scheduled actions at each moment, and the upgrade rule at the
switch."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from helpers.plan_lookup import one
from helpers.stacks import stack_config
from ultraserver.config.blocks import block_views
from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.settings import parse_settings
from ultraserver.facts.aws import limits
from ultraserver.offline import Plan, engine, record
from ultraserver.policy import evaluate
from ultraserver.policy.node_groups import UPGRADE_RULE, deployed_state
from ultraserver.problems import ConfigError
from ultraserver.resources.cluster import ClusterCoreData
from ultraserver.resources.gpu_node_group import GpuNodeGroup, GpuNodeGroupArgs
from ultraserver.resources.platform import Platform, PlatformArgs

FIRST = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
SECOND = datetime(2026, 12, 15, 11, 30, tzinfo=timezone.utc)  # starts when the first ends
DAYS = 14
IDS = (["cr-0aaaaaaaaaaaaaaaa", "cr-0cccccccccccccccc"], ["cr-0bbbbbbbbbbbbbbbb", "cr-0dddddddddddddddd"])
SCHEDULE = "aws:autoscaling/schedule:Schedule"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
TODAY = FIRST.date() - timedelta(days=7)

# Moments and what each must show: (now, current block, desired size, scheduled action names left).
FIRST_DOWN = FIRST + timedelta(days=DAYS, minutes=-65)
SECOND_DOWN = SECOND + timedelta(days=DAYS, minutes=-65)
B1 = ["20261201T1130Z-start", "20261201T1130Z-end"]
B2 = ["20261215T1130Z-start", "20261215T1130Z-end"]
MOMENTS = {
    "before the first": (FIRST - timedelta(days=1), 0, 0, B1 + B2),
    "during the first": (FIRST + timedelta(days=1), 0, 18, B1[1:] + B2),
    # Scaled down, instances maybe still terminating: the template stays on the first block's reservation.
    "settling after the first": (FIRST_DOWN + timedelta(minutes=5), 0, 0, B2),
    "between the blocks": (FIRST_DOWN + timedelta(minutes=10), 1, 0, B2),
    "during the second": (SECOND + timedelta(days=1), 1, 18, B2[1:]),
    "after the second": (SECOND_DOWN + timedelta(minutes=1), 1, 0, []),
}


def renewal_settings(mode: str = "managed") -> Any:
    """gb200-x72 with two UltraServers renewed over two back-to-back blocks, switching (a deploy in each gap; standby
    is the default with several blocks)."""
    config = copy.deepcopy(stack_config("gb200-x72"))
    group = config["ultraserver-eks:gpuNodeGroups"][0]
    group.pop("capacityReservationIds")
    group.pop("reservationWindow")
    group["mode"], group["handover"] = mode, "switch"
    group["capacityBlocks"] = [
        {"capacityReservationIds": ids, "start": start.isoformat(), "end": (start + timedelta(days=DAYS)).isoformat()}
        for ids, start in zip(IDS, (FIRST, SECOND), strict=True)
    ]
    return parse_settings(config, today=TODAY)


def plan_at(now: datetime, mode: str = "managed") -> Plan:
    settings = renewal_settings(mode)
    return record(lambda: Platform("ultraserver", PlatformArgs(settings=settings, now=now)))


def target(plan: Plan, group: str) -> str:
    spec = one(plan, TEMPLATE, group).inputs["capacityReservationSpecification"]
    return str(spec["capacityReservationTarget"]["capacityReservationId"])


def desired(plan: Plan, group: str) -> int:
    return int(one(plan, NODE_GROUP, group).inputs["scalingConfig"]["desiredSize"])


def actions(plan: Plan, group: str) -> list[str]:
    names = [s.inputs["scheduledActionName"] for s in plan.of_type(SCHEDULE) if group in s.name]
    return sorted(names, key=lambda n: (n.split("-")[2], n.endswith("end")))


@pytest.mark.parametrize("moment", MOMENTS)
def test_each_node_group_follows_its_reservation_of_the_current_block(moment: str) -> None:
    now, index, size, left = MOMENTS[moment]
    plan = plan_at(now)
    for position, group in enumerate(["nvl72-1", "nvl72-2"]):
        assert target(plan, group) == IDS[index][position]
        assert desired(plan, group) == size
        assert actions(plan, f"{group}-capacity") == [f"capacity-block-{name}" for name in left]


def test_scheduled_actions_scale_up_at_each_start_and_down_before_each_end() -> None:
    plan = plan_at(FIRST - timedelta(days=1), "self-managed")
    found = {s.inputs["scheduledActionName"]: s.inputs for s in plan.of_type(SCHEDULE) if "nvl72-1-capacity" in s.name}
    assert {name: (a["startTime"], a["desiredCapacity"]) for name, a in found.items()} == {
        "capacity-block-20261201T1130Z-start": ("2026-12-01T11:30:00Z", 18),
        "capacity-block-20261201T1130Z-end": ("2026-12-15T10:25:00Z", 0),
        "capacity-block-20261215T1130Z-start": ("2026-12-15T11:30:00Z", 18),
        "capacity-block-20261215T1130Z-end": ("2026-12-29T10:25:00Z", 0),
    }
    # Auto Scaling refuses two actions of a group at one time, and names longer than its limit.
    assert len({a["startTime"] for a in found.values()}) == len(found)
    assert all(not limits.over(limits.SCHEDULED_ACTION_NAME, len(name)) for name in found)


def test_a_deploy_inside_a_block_keeps_its_reservation_so_nothing_rolls() -> None:
    early, late = plan_at(FIRST - timedelta(days=1)), plan_at(FIRST_DOWN - timedelta(minutes=1))
    assert one(early, TEMPLATE, "nvl72-1").inputs == one(late, TEMPLATE, "nvl72-1").inputs


def upgrade_messages(deployed: Plan, plan: Plan) -> list[str]:
    config = {UPGRADE_RULE: {"deployed": deployed_state(deployed.resources)}}
    return [v.message for v in evaluate(plan.resources, config) if v.policy == UPGRADE_RULE]


def test_switching_at_zero_passes_the_upgrade_rule() -> None:
    deployed = plan_at(FIRST + timedelta(days=1))
    assert upgrade_messages(deployed, plan_at(FIRST_DOWN + timedelta(minutes=10))) == []


def test_switching_inside_the_next_block_with_nodes_up_is_refused() -> None:
    # Nobody deployed between the blocks: the switch now happens with the group at full size.
    deployed = plan_at(FIRST + timedelta(days=1))
    messages = upgrade_messages(deployed, plan_at(SECOND + timedelta(days=1)))
    assert messages and all("capacityReservationId" in m for m in messages), messages


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (
            FIRST + timedelta(days=1),
            "nvl72-1: block 1 of 2 (cr-0aaaaaaaaaaaaaaaa) active; next switch: run `pulumi up` between "
            "2026-12-15 10:35Z and 2026-12-15 11:30Z",
        ),
        (
            FIRST_DOWN + timedelta(minutes=10),
            "nvl72-1: block 2 of 2 (cr-0bbbbbbbbbbbbbbbb) future; switch due: run `pulumi up` before 2026-12-15 11:30Z",
        ),
        # Scaled to 0 for the end, but the block (and its bill) runs until its end; then it has ended.
        (SECOND_DOWN, "nvl72-1: block 2 of 2 (cr-0bbbbbbbbbbbbbbbb) active"),
        (SECOND + timedelta(days=DAYS), "nvl72-1: block 2 of 2 (cr-0bbbbbbbbbbbbbbbb) ended"),
    ],
)
def test_block_view_names_the_current_block_and_the_next_switch(now: datetime, expected: str) -> None:
    views = {v.group: v for v in block_views(renewal_settings(), now)}
    assert views["nvl72-1"].line() == expected
    assert views["nvl72-2"].reservation_ids == (IDS[views["nvl72-2"].index][1],)


def group_args(**changes: Any) -> GpuNodeGroupArgs:
    """A program's group: settings with the changes (as a program writes them), on a cluster declared elsewhere."""
    core = ClusterCoreData(
        name="gb200",
        endpoint="https://ABC.gr7.us-east-1.eks.amazonaws.com",
        certificate_authority="Y2VydA==",
        service_cidr="10.100.0.0/16",
        security_group_id="sg-0ccccccccccccccc1",
    )
    now = changes.pop("now", FIRST)
    settings = GpuNodeGroupSettings(name="gpu", availability_zone="us-east-1-dfw-2a", **changes)
    return GpuNodeGroupArgs(settings=settings, cluster=core, subnet_ids=["subnet-0aaaaaaaaaaaaaaaa"], now=now)


def block(ids: list[str], start: datetime) -> dict[str, Any]:
    end = start + timedelta(days=DAYS)
    return {"capacityReservationIds": ids, "start": start.isoformat(), "end": end.isoformat()}


BLOCKS = [block([ids[0]], start) for ids, start in zip(IDS, (FIRST, SECOND), strict=True)]


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        (
            {"capacityBlocks": BLOCKS, "capacity_reservation_ids": [IDS[0][0]]},
            "capacityBlocks or capacityReservationIds",
        ),
        (
            {"capacityBlocks": [BLOCKS[1], BLOCKS[0]]},
            r"settings.capacityBlocks\[1\].start: got '2026-12-01T11:30:00\+00:00'",
        ),
        (
            {"capacityBlocks": [BLOCKS[0], block(IDS[1], SECOND)]},
            r"settings.capacityBlocks\[1\].capacityReservationIds: got \['cr-",
        ),
    ],
)
def test_the_component_refuses_unusable_blocks(changes: dict[str, Any], says: str) -> None:
    with pytest.raises(ConfigError, match=says):
        record(lambda: GpuNodeGroup("gpu", group_args(**changes)))


def test_a_resource_group_fleet_renews_on_windows_only() -> None:
    arn = "arn:aws:resource-groups:us-east-1:111122223333:group/fleet"
    windows = [{k: v for k, v in b.items() if k != "capacityReservationIds"} for b in BLOCKS]
    plan = record(
        lambda: GpuNodeGroup(
            "gpu",
            group_args(
                mode="self-managed",
                capacityBlocks=windows,
                capacity_reservation_resource_group_arn=arn,
                ultraserver_count=2,
                now=SECOND + timedelta(days=1),
            ),
        )
    )
    spec = one(plan, TEMPLATE).inputs["capacityReservationSpecification"]
    assert spec["capacityReservationTarget"] == {"capacityReservationResourceGroupArn": arn}
    assert [s.inputs["scheduledActionName"] for s in plan.of_type(SCHEDULE)] == ["capacity-block-20261215T1130Z-end"]
    assert one(plan, "aws:autoscaling/group:Group").inputs["desiredCapacity"] == 36


def test_actions_are_deleted_before_replaced_and_the_current_block_takes_over_the_undated_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Auto Scaling refuses a second action at the same time: a replacement must delete first, and moving a group from
    # reservationWindow to capacityBlocks must replace its two undated actions rather than add dated twins.
    seen: dict[str, tuple[bool, list[str]]] = {}
    register = engine.RecordingMonitor.RegisterResource

    def spy(self: engine.RecordingMonitor, request: Any) -> Any:
        if request.type == SCHEDULE:
            seen[request.name] = (request.deleteBeforeReplace, [a.spec.name for a in request.aliases])
        return register(self, request)

    monkeypatch.setattr(engine.RecordingMonitor, "RegisterResource", spy)
    record(lambda: GpuNodeGroup("gpu", group_args(capacityBlocks=BLOCKS, now=FIRST - timedelta(days=1))))
    assert seen == {
        "gpu-capacity-block-20261201T1130Z-start": (True, ["gpu-capacity-block-start"]),
        "gpu-capacity-block-20261201T1130Z-end": (True, ["gpu-capacity-block-end"]),
        "gpu-capacity-block-20261215T1130Z-start": (True, []),
        "gpu-capacity-block-20261215T1130Z-end": (True, []),
    }
