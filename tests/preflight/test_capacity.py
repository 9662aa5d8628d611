"""Capacity checks of one GPU group against stubbed EC2 and Resource Groups answers."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from botocore.stub import Stubber
from helpers.preflight import (
    LOCAL_ZONE,
    NOW,
    group,
    queue_reservations,
    reservation,
    stubbed,
)
from ultraserver.preflight.capacity import check_reservations, resource_group_reservation_ids
from ultraserver.preflight.report import FAIL, PASS, WARN
from ultraserver.preflight.target import PreflightGroup
from ultraserver.problems import Problem


def reservation_checks(
    reservations: list[dict[str, Any]], the_group: PreflightGroup | None = None, **queue: Any
) -> dict[str, Problem]:
    """Run check_reservations against stubbed answers; results keyed by the part after 'gpu: '."""
    ec2, stub = stubbed("ec2")
    rg, _ = stubbed("resource-groups")
    queue_reservations(stub, reservations, **queue)
    checks = check_reservations(the_group or group(), ec2, rg, NOW, 48)
    stub.assert_no_pending_responses()
    return {c.key.split(": ", 1)[1]: c for c in checks}


def test_reservation_all_pass() -> None:
    checks = reservation_checks([reservation()])
    assert set(checks) == {
        "reservations exist",
        "reservation state",
        "instance type",
        "instance count",
        "reservation zone",
        "reservation window",
        "window matches the reservation",
        "UltraServer type",
        "interconnect",
    }
    assert {c.level for c in checks.values()} == {PASS}
    assert all(c.fix == "" for c in checks.values())


def test_reservation_missing_fails() -> None:
    ec2, stub = stubbed("ec2")
    rg, _ = stubbed("resource-groups")
    stub.add_client_error(
        "describe_capacity_reservations",
        service_error_code="InvalidCapacityReservationId.NotFound",
        expected_params={"CapacityReservationIds": ["cr-0aaaaaaaaaaaaaaa1"]},
    )
    checks = check_reservations(group(), ec2, rg, NOW, 48)
    assert [(c.key, c.level) for c in checks] == [("gpu: reservations exist", FAIL)]
    assert "cr-0aaaaaaaaaaaaaaa1" in checks[0].value
    assert "purchase-capacity-block" in checks[0].fix


def test_group_without_any_reservation_fails() -> None:
    ec2, _ = stubbed("ec2")
    rg, _ = stubbed("resource-groups")
    checks = check_reservations(group(capacity_reservation_ids=[]), ec2, rg, NOW, 48)
    assert [(c.key, c.level) for c in checks] == [("gpu: reservations exist", FAIL)]


@pytest.mark.parametrize("state", ["active", "scheduled"])
def test_usable_states_pass(state: str) -> None:
    assert reservation_checks([reservation(State=state)])["reservation state"].level == PASS


@pytest.mark.parametrize("state", ["payment-pending", "payment-failed", "expired", "cancelled", "pending"])
def test_unusable_states_fail(state: str) -> None:
    check = reservation_checks([reservation(State=state)])["reservation state"]
    assert check.level == FAIL
    assert state in check.value and state in check.fix


def test_wrong_instance_type_fails() -> None:
    check = reservation_checks([reservation(InstanceType="p5.48xlarge")])["instance type"]
    assert check.level == FAIL
    assert "p5.48xlarge" in check.value


def test_instance_type_is_the_groups_own() -> None:
    the_group = group(instance_type="p5.48xlarge")
    matching = reservation_checks([reservation(InstanceType="p5.48xlarge")], the_group)["instance type"]
    assert matching.level == PASS
    other = reservation_checks([reservation()], the_group)["instance type"]
    assert other.level == FAIL
    assert other.fix == "use a Capacity Block for p5.48xlarge; this group only launches that type"


def test_instance_count_mismatch_fails() -> None:
    # An x36 reservation (9 instances) under a group planned as one x72 UltraServer.
    check = reservation_checks([reservation(TotalInstanceCount=9)])["instance count"]
    assert check.level == FAIL
    assert "reserved 9" in check.value and "= 18" in check.value


def test_instance_count_sums_over_ultraservers() -> None:
    two = group(
        ultraserver_type="u-p6e-gb200x36",
        instances_per_ultraserver=9,
        ultraserver_count=2,
        capacity_reservation_ids=["cr-0aaaaaaaaaaaaaaa1", "cr-0aaaaaaaaaaaaaaa2"],
    )
    crs = [
        reservation("cr-0aaaaaaaaaaaaaaa1", TotalInstanceCount=9),
        reservation("cr-0aaaaaaaaaaaaaaa2", TotalInstanceCount=9),
    ]
    checks = reservation_checks(crs, two, ultraserver_type="u-p6e-gb200x36")
    assert checks["instance count"].level == PASS
    assert checks["UltraServer type"].level == PASS


def test_ultraserver_type_mismatch_fails() -> None:
    check = reservation_checks([reservation()], ultraserver_type="u-p6e-gb200x36")["UltraServer type"]
    assert check.level == FAIL
    assert "u-p6e-gb200x36" in check.value and "u-p6e-gb200x72" in check.fix


def test_reservation_outside_capacity_block_fails() -> None:
    crs = [reservation(ReservationType="default", CapacityBlockId=None)]
    checks = reservation_checks(crs)
    assert checks["UltraServer type"].level == FAIL
    assert "not part of a Capacity Block" in checks["UltraServer type"].value
    assert "interconnect" not in checks


def test_reservation_zone_mismatch_fails() -> None:
    check = reservation_checks([reservation(AvailabilityZone="us-east-1a")])["reservation zone"]
    assert check.level == FAIL
    assert "us-east-1a" in check.value and LOCAL_ZONE in check.fix


def test_future_start_warns() -> None:
    later = reservation(State="scheduled", StartDate=NOW + timedelta(days=2))
    check = reservation_checks([later])["reservation window"]
    assert check.level == WARN
    assert "starts 2026-03-04" in check.value


def test_end_within_horizon_warns() -> None:
    check = reservation_checks([reservation(EndDate=NOW + timedelta(hours=47))])["reservation window"]
    assert check.level == WARN
    assert "within 48h" in check.value


def test_end_beyond_horizon_passes() -> None:
    check = reservation_checks([reservation(EndDate=NOW + timedelta(hours=49))])["reservation window"]
    assert check.level == PASS


def test_ended_reservation_fails() -> None:
    check = reservation_checks([reservation(EndDate=NOW - timedelta(hours=1))])["reservation window"]
    assert check.level == FAIL


@pytest.mark.parametrize(("interconnect", "status"), [("ok", PASS), ("insufficient-data", WARN), ("impaired", FAIL)])
def test_interconnect_status(interconnect: str, status: str) -> None:
    check = reservation_checks([reservation()], interconnect=interconnect)["interconnect"]
    assert check.level == status
    assert interconnect in check.value


GROUP_ARN = "arn:aws:resource-groups:us-east-1:123456789012:group/gb200-cb"


def test_resource_group_members_are_checked() -> None:
    ec2, stub = stubbed("ec2")
    rg, rg_stub = stubbed("resource-groups")
    rg_stub.add_response(
        "list_group_resources",
        {
            "ResourceIdentifiers": [
                {
                    "ResourceArn": "arn:aws:ec2:us-east-1:123456789012:capacity-reservation/cr-0aaaaaaaaaaaaaaa1",
                    "ResourceType": "AWS::EC2::CapacityReservation",
                }
            ]
        },
        {"Group": GROUP_ARN},
    )
    queue_reservations(stub, [reservation()])
    grouped = group(capacity_reservation_ids=[], capacity_reservation_resource_group_arn=GROUP_ARN)
    checks = check_reservations(grouped, ec2, rg, NOW, 48)
    stub.assert_no_pending_responses()
    assert {c.level for c in checks} == {PASS}
    assert "cr-0aaaaaaaaaaaaaaa1" in checks[0].value


def test_resource_group_members_are_read_from_resources_not_only_the_deprecated_field() -> None:
    rg, rg_stub = stubbed("resource-groups")
    member = {
        "ResourceArn": "arn:aws:ec2:us-east-1:123456789012:capacity-reservation/cr-0aaaaaaaaaaaaaaa1",
        "ResourceType": "AWS::EC2::CapacityReservation",
    }
    rg_stub.add_response("list_group_resources", {"Resources": [{"Identifier": member}]}, {"Group": GROUP_ARN})
    assert resource_group_reservation_ids(GROUP_ARN, rg) == ["cr-0aaaaaaaaaaaaaaa1"]


def test_empty_resource_group_fails() -> None:
    ec2, _ = stubbed("ec2")
    rg, rg_stub = stubbed("resource-groups")
    rg_stub.add_response("list_group_resources", {"ResourceIdentifiers": []}, {"Group": GROUP_ARN})
    grouped = group(capacity_reservation_ids=[], capacity_reservation_resource_group_arn=GROUP_ARN)
    checks = check_reservations(grouped, ec2, rg, NOW, 48)
    assert [(c.key, c.level) for c in checks] == [("gpu: reservations exist", FAIL)]
    assert "is empty" in checks[0].value


def test_unknown_resource_group_fails() -> None:
    ec2, _ = stubbed("ec2")
    rg, rg_stub = stubbed("resource-groups")
    rg_stub.add_client_error("list_group_resources", service_error_code="NotFoundException", http_status_code=404)
    grouped = group(capacity_reservation_ids=[], capacity_reservation_resource_group_arn=GROUP_ARN)
    checks = check_reservations(grouped, ec2, rg, NOW, 48)
    assert checks[0].level == FAIL
    assert "NotFoundException" in checks[0].value


def one_reservation_answered() -> tuple[Any, Stubber, Any]:
    """EC2 and Resource Groups clients with only the default reservation's description queued."""
    ec2, stub = stubbed("ec2")
    rg, _ = stubbed("resource-groups")
    stub.add_response(
        "describe_capacity_reservations",
        {"CapacityReservations": [reservation()]},
        {"CapacityReservationIds": ["cr-0aaaaaaaaaaaaaaa1"]},
    )
    return ec2, stub, rg


def test_unanswered_block_lookup_fails_type_but_keeps_other_checks() -> None:
    ec2, stub, rg = one_reservation_answered()
    stub.add_client_error("describe_capacity_blocks", service_error_code="UnauthorizedOperation", http_status_code=403)
    checks = {c.key: c for c in check_reservations(group(), ec2, rg, NOW, 48)}
    assert checks["gpu: UltraServer type"].level == FAIL
    assert checks["gpu: UltraServer type"].fix.startswith("grant ec2:DescribeCapacityBlocks to the caller's IAM policy")
    assert checks["gpu: reservation state"].level == PASS
    assert "gpu: interconnect" not in checks


def test_unanswered_interconnect_status_warns() -> None:
    ec2, stub, rg = one_reservation_answered()
    stub.add_response(
        "describe_capacity_blocks",
        {"CapacityBlocks": [{"CapacityBlockId": "cb-0bbbbbbbbbbbbbbb1", "UltraserverType": "u-p6e-gb200x72"}]},
        {"CapacityBlockIds": ["cb-0bbbbbbbbbbbbbbb1"]},
    )
    stub.add_client_error("describe_capacity_block_status", service_error_code="InternalError", http_status_code=500)
    checks = {c.key: c for c in check_reservations(group(), ec2, rg, NOW, 48)}
    assert checks["gpu: UltraServer type"].level == PASS
    assert checks["gpu: interconnect"].level == WARN
    assert "InternalError" in checks["gpu: interconnect"].value


def two_blocks(first: str = "cr-0aaaaaaaaaaaaaaa1", second: str = "cr-0aaaaaaaaaaaaaaa2") -> PreflightGroup:
    """A group on two successive blocks: the first ended a day before NOW, the second runs through NOW."""
    from ultraserver.facts.capacity.capacity_blocks import CapacityBlock, ReservationWindow

    past = ReservationWindow(NOW - timedelta(days=8), NOW - timedelta(days=1))
    current = ReservationWindow(NOW - timedelta(days=1), NOW + timedelta(days=7))
    return group(
        capacity_reservation_ids=[first],
        blocks=(CapacityBlock((first,), past), CapacityBlock((second,), current)),
        settings_key="gpuNodeGroups[0]",
    )


def blocks_checks(old_state: str) -> dict[str, Problem]:
    """check_reservations on two_blocks(): the current block's answers first, then the other block's."""
    ec2, stub = stubbed("ec2")
    rg, _ = stubbed("resource-groups")
    queue_reservations(stub, [reservation("cr-0aaaaaaaaaaaaaaa2")])
    stub.add_response(
        "describe_capacity_reservations",
        {"CapacityReservations": [reservation(State=old_state, EndDate=NOW - timedelta(days=1))]},
        {"CapacityReservationIds": ["cr-0aaaaaaaaaaaaaaa1"]},
    )
    checks = check_reservations(two_blocks(), ec2, rg, NOW, 48)
    stub.assert_no_pending_responses()
    return {c.key.split(": ", 1)[1]: c for c in checks}


def test_the_current_block_is_checked_and_an_ended_earlier_block_is_stale() -> None:
    checks = blocks_checks("expired")
    assert checks["reservations exist"].value == "1 found: cr-0aaaaaaaaaaaaaaa2"
    other = checks["other blocks"]
    assert other.level == FAIL
    assert "gpuNodeGroups[0].capacityBlocks[0]: expired" in other.value
    assert other.fix.startswith("remove gpuNodeGroups[0].capacityBlocks[0] from the stack file")


@pytest.mark.parametrize("state", ["scheduled", "active", "payment-pending"])
def test_other_blocks_that_have_not_ended_pass(state: str) -> None:
    assert blocks_checks(state)["other blocks"].level == PASS


@pytest.mark.parametrize("state", ["expired", "cancelled", "failed", "payment-failed", "unsupported", "cancelling"])
def test_every_ended_state_of_another_block_fails(state: str) -> None:
    other = blocks_checks(state)["other blocks"]
    assert other.level == FAIL and state in other.value and other.fix


def test_a_cancelled_future_block_must_be_replaced() -> None:
    from ultraserver.facts.capacity.capacity_blocks import CapacityBlock, ReservationWindow

    now_block = ReservationWindow(NOW - timedelta(days=1), NOW + timedelta(days=7))
    later = ReservationWindow(NOW + timedelta(days=7), NOW + timedelta(days=14))
    the_group = group(
        blocks=(CapacityBlock(("cr-0aaaaaaaaaaaaaaa1",), now_block), CapacityBlock(("cr-0aaaaaaaaaaaaaaa2",), later)),
        settings_key="gpuNodeGroups[1]",
    )
    ec2, stub = stubbed("ec2")
    rg, _ = stubbed("resource-groups")
    queue_reservations(stub, [reservation()])
    stub.add_response(
        "describe_capacity_reservations",
        {"CapacityReservations": [reservation("cr-0aaaaaaaaaaaaaaa2", State="cancelled")]},
        {"CapacityReservationIds": ["cr-0aaaaaaaaaaaaaaa2"]},
    )
    checks = {c.key: c for c in check_reservations(the_group, ec2, rg, NOW, 48)}
    other = checks["gpu: other blocks"]
    assert other.level == FAIL
    assert other.fix.startswith("gpuNodeGroups[1].capacityBlocks[1] will never launch (cancelled): purchase a new")


def test_more_instances_reserved_than_the_group_needs_fails() -> None:
    """Over-reserved blocks are paid for and idle: 36 reserved under a group of one x72 UltraServer (18)."""
    check = reservation_checks([reservation(TotalInstanceCount=36)])["instance count"]
    assert check.level == FAIL
    assert "reserved 36" in check.value and "= 18" in check.value
    assert reservation_checks([reservation(TotalInstanceCount=18)])["instance count"].level == PASS
