"""The stack's window against the real reservation (stubbed DescribeCapacityReservations / DescribeCapacityBlocks)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from helpers.preflight import NOW, WINDOW, group, queue_reservations, reservation, stubbed
from ultraserver.facts.capacity.capacity_blocks import CapacityBlock, ReservationWindow
from ultraserver.preflight.capacity import check_reservations
from ultraserver.preflight.report import FAIL, PASS
from ultraserver.preflight.target import PreflightGroup
from ultraserver.problems import Problem

NAME = "gpu: window matches the reservation"


def window_check(the_group: PreflightGroup, cr: dict[str, Any], block_dates: dict[str, Any] | None = None) -> Problem:
    ec2, stub = stubbed("ec2")
    rg, _ = stubbed("resource-groups")
    queue_reservations(stub, [cr], **(block_dates or {}))
    checks = {c.key: c for c in check_reservations(the_group, ec2, rg, NOW, 48)}
    stub.assert_no_pending_responses()
    return checks[NAME]


def test_the_stack_window_of_the_reservation_passes() -> None:
    check = window_check(group(), reservation())
    assert check.level == PASS and check.fix == ""


def test_a_year_typed_wrong_fails_with_the_real_end() -> None:
    # The stack says 2027 for a block that ends in 2026: it plans cleanly, and the paid block would sit idle.
    typo = ReservationWindow(WINDOW.start, WINDOW.end.replace(year=2027))
    check = window_check(group(blocks=(CapacityBlock(("cr-0aaaaaaaaaaaaaaa1",), typo),)), reservation())
    assert check.level == FAIL
    assert "end 2026-03-09T12:00:00Z (the stack says 2027-03-09T12:00:00Z)" in check.value
    assert check.fix.startswith("set gpuNodeGroups[0].reservationWindow.end to '2026-03-09T12:00:00Z'")


def test_a_start_off_by_a_day_fails_naming_the_capacity_blocks_entry() -> None:
    late = ReservationWindow(WINDOW.start + timedelta(days=1), WINDOW.end)
    blocks = (CapacityBlock(("cr-0aaaaaaaaaaaaaaa1",), late),)
    check = window_check(group(blocks=blocks, successive=True), reservation())
    assert check.level == FAIL
    assert check.fix.startswith("set gpuNodeGroups[0].capacityBlocks[0].start to '2026-03-01T12:00:00Z'")


def test_the_capacity_block_dates_are_the_real_window_when_ec2_describes_the_block() -> None:
    # DescribeCapacityBlocks reports the block extended by a day; the stack still has the old end.
    check = window_check(group(), reservation(), {"EndDate": WINDOW.end + timedelta(days=1)})
    assert check.level == FAIL and "end 2026-03-10T12:00:00Z" in check.value


@pytest.mark.parametrize(("state", "start"), [("active", -1), ("scheduled", 2), ("payment-pending", 5)])
def test_a_group_with_no_window_and_no_blocks_fails_as_soon_as_its_reservations_exist(state: str, start: int) -> None:
    cr = reservation(State=state, StartDate=NOW + timedelta(days=start))
    check = window_check(group(blocks=(CapacityBlock(("cr-0aaaaaaaaaaaaaaa1",), None),)), cr)
    assert check.level == FAIL
    assert check.value.startswith("no reservationWindow and no capacityBlocks")
    real = (NOW + timedelta(days=start)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert check.fix.startswith(f"add gpuNodeGroups[0].reservationWindow with start '{real}' and end '")


def test_a_renewal_typed_a_year_late_fails_with_aws_s_dates() -> None:
    """Every listed block is compared with AWS, not only the current one: the renewal's year typed wrong would plan
    cleanly and its group would never scale up for the block that was paid for."""
    later = ReservationWindow(WINDOW.end, WINDOW.end + timedelta(days=14))
    typed = ReservationWindow(later.start + timedelta(days=365), later.end + timedelta(days=365))
    the_group = group(
        blocks=(CapacityBlock(("cr-0aaaaaaaaaaaaaaa1",), WINDOW), CapacityBlock(("cr-0aaaaaaaaaaaaaaa2",), typed)),
        successive=True,
    )
    ec2, stub = stubbed("ec2")
    rg, _ = stubbed("resource-groups")
    queue_reservations(stub, [reservation()])
    renewal = reservation("cr-0aaaaaaaaaaaaaaa2", State="scheduled", StartDate=later.start, EndDate=later.end)
    stub.add_response(
        "describe_capacity_reservations",
        {"CapacityReservations": [renewal]},
        {"CapacityReservationIds": [renewal["CapacityReservationId"]]},
    )
    checks = {c.key: c for c in check_reservations(the_group, ec2, rg, NOW, 48)}
    stub.assert_no_pending_responses()
    check = checks["gpu: capacityBlocks[1] window matches the reservation"]
    assert check.level == FAIL
    assert check.fix.startswith(
        f"set gpuNodeGroups[0].capacityBlocks[1].start to '{later.start:%Y-%m-%dT%H:%M:%SZ}'; "
        f"set gpuNodeGroups[0].capacityBlocks[1].end to '{later.end:%Y-%m-%dT%H:%M:%SZ}'"
    )
    assert checks["gpu: window matches the reservation"].level == PASS
