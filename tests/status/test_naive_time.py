"""A moment without a time zone is refused with a clear error, never a TypeError deep inside a comparison.

EC2's timestamps are aware (botocore parses them to UTC), so a naive ``now`` could not be compared with them.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from helpers.capacity import A_END, A_START, BLOCK_A, DURING_A, A, clients, reservation, two_block_settings
from helpers.cli import run_main
from helpers.preflight import stubbed
from ultraserver.status.aws import read_reservations
from ultraserver.status.extend import pick_group, run_extend
from ultraserver.status.judge import Limits

NAIVE = DURING_A.replace(tzinfo=None)
CLEAR = "without a time zone; allowed: an aware datetime"


def test_status_limits_refuse_a_naive_now() -> None:
    with pytest.raises(ValueError, match=CLEAR):
        Limits(NAIVE)


def test_extend_refuses_a_naive_now() -> None:
    ec2, _ = stubbed("ec2")
    group = pick_group(two_block_settings(), "nvl72")
    with pytest.raises(ValueError, match=CLEAR):
        run_extend(group, clients(ec2), 48, False, NAIVE)


def test_cli_now_without_a_zone_is_a_usage_error() -> None:
    done = run_main("status", "--stack", "gb200-x72", "--now", "2026-12-03T12:00:00")
    assert done.code == 2 and "allowed: ISO 8601 with a zone" in done.stderr


def test_reservation_dates_without_a_zone_are_read_as_utc() -> None:
    ec2, stub = stubbed("ec2")
    naive = reservation(A, "active", A_START.replace(tzinfo=None), A_END.replace(tzinfo=None), BLOCK_A)
    stub.add_response(
        "describe_capacity_reservations", {"CapacityReservations": [naive]}, {"CapacityReservationIds": [A]}
    )
    found = read_reservations([A], ec2, with_blocks=False)
    assert (found[A].start, found[A].end) == (A_START, A_END)
    assert Limits(DURING_A).now - found[A].start > timedelta(0)
