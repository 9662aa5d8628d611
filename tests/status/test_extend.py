"""`ultraserver extend`: offerings shown, bought only with --yes; bad group or hours exit 2 with what is allowed."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import Any

import boto3
import pytest
from botocore.exceptions import ReadTimeoutError
from botocore.stub import Stubber
from helpers.capacity import A_END, B_END, DURING_A, A, B, clients, reservation, two_block_settings
from helpers.cli import run_main
from helpers.permissions import actions, recorded_operations
from helpers.preflight import LOCAL_ZONE, stubbed
from ultraserver.facts.aws.permissions import COMMAND_ACTIONS
from ultraserver.facts.capacity import capacity_states
from ultraserver.preflight import clients as preflight_clients
from ultraserver.status.extend import ExtendUsageError, check_hours, pick_group, run_extend

SETTINGS = two_block_settings()
OFFER = "cbe-0123456789abcdef0"


def queue_state(stub: Stubber, cr_id: str = A, state: str = "active", end: datetime = A_END) -> None:
    """The reservation as extend reads it first (one DescribeCapacityReservations call)."""
    answer = reservation(cr_id, state, end - timedelta(days=7), end, "cb-0aaaaaaaaaaaaaaa1")
    stub.add_response(
        "describe_capacity_reservations", {"CapacityReservations": [answer]}, {"CapacityReservationIds": [cr_id]}
    )


def queue_offering(
    stub: Stubber, cr_id: str = A, hours: int = 48, offered: bool = True, end: datetime | None = None
) -> None:
    """The reservation's state (active), then its offerings."""
    queue_state(stub, cr_id, end=end or (B_END if cr_id == B else A_END))
    offering = {
        "CapacityBlockExtensionOfferingId": OFFER,
        "InstanceType": "p6e-gb200.36xlarge",
        "InstanceCount": 18,
        "AvailabilityZone": LOCAL_ZONE,
        "StartDate": A_END - timedelta(days=7),
        "CapacityBlockExtensionStartDate": A_END,
        "CapacityBlockExtensionEndDate": A_END + timedelta(hours=hours),
        "CapacityBlockExtensionDurationHours": hours,
        "UpfrontFee": "123456.78",
        "CurrencyCode": "USD",
        "Tenancy": "default",
    }
    stub.add_response(
        "describe_capacity_block_extension_offerings",
        {"CapacityBlockExtensionOfferings": [offering] if offered else []},
        {"CapacityBlockExtensionDurationHours": hours, "CapacityReservationId": cr_id},
    )


def queue_purchase(stub: Stubber, cr_id: str = A) -> None:
    stub.add_response(
        "purchase_capacity_block_extension",
        {
            "CapacityBlockExtensions": [
                {
                    "CapacityReservationId": cr_id,
                    "CapacityBlockExtensionOfferingId": OFFER,
                    "CapacityBlockExtensionDurationHours": 48,
                    "CapacityBlockExtensionStatus": "payment-pending",
                }
            ]
        },
        {"CapacityBlockExtensionOfferingId": OFFER, "CapacityReservationId": cr_id},
    )


def test_offerings_are_shown_and_nothing_is_bought_without_yes() -> None:
    ec2, stub = stubbed("ec2")
    queue_offering(stub)
    with recorded_operations() as seen:
        lines, ok = run_extend(pick_group(SETTINGS, "nvl72"), clients(ec2), 48, False, DURING_A)
    stub.assert_no_pending_responses()  # and no purchase call was made: the Stubber refuses unqueued calls
    assert actions(seen) <= set(COMMAND_ACTIONS["extend"])  # the IAM row of extend without --yes
    text = "\n".join(lines)
    assert ok and OFFER in text and "123456.78 USD" in text and "rerun with --yes" in text


def test_yes_buys_the_offering_of_the_current_block() -> None:
    ec2, stub = stubbed("ec2")
    queue_offering(stub)
    queue_purchase(stub)
    with recorded_operations() as seen:
        lines, ok = run_extend(pick_group(SETTINGS, "nvl72"), clients(ec2), 48, True, DURING_A)
    stub.assert_no_pending_responses()
    assert "ec2:PurchaseCapacityBlockExtension" in actions(seen) <= set(COMMAND_ACTIONS["extend --yes"])
    assert ok and f"bought {OFFER} for {A}: payment-pending" in "\n".join(lines)


def test_the_next_block_is_extended_once_the_group_moved_to_it() -> None:
    ec2, stub = stubbed("ec2")
    queue_offering(stub, cr_id=B)
    run_extend(pick_group(SETTINGS, "nvl72"), clients(ec2), 48, False, A_END)
    stub.assert_no_pending_responses()


def test_no_offering_buys_nothing() -> None:
    ec2, stub = stubbed("ec2")
    queue_offering(stub, offered=False)
    lines, ok = run_extend(pick_group(SETTINGS, "nvl72"), clients(ec2), 48, True, DURING_A)
    assert not ok and "nothing was bought" in lines[-1]


def test_a_failed_purchase_is_reported() -> None:
    ec2, stub = stubbed("ec2")
    queue_offering(stub)
    stub.add_client_error("purchase_capacity_block_extension", service_error_code="InsufficientCapacity")
    lines, ok = run_extend(pick_group(SETTINGS, "nvl72"), clients(ec2), 48, True, DURING_A)
    assert not ok and "InsufficientCapacity" in lines[-1]


@pytest.mark.parametrize("hours", [24, 336, 504, 4368])
def test_allowed_hours(hours: int) -> None:
    assert check_hours(hours) == hours


@pytest.mark.parametrize("hours", [0, 1, 25, 360, 500, 4369, 4536])
def test_refused_hours(hours: int) -> None:
    with pytest.raises(ExtendUsageError, match=f"--hours: got {hours}; allowed: 24 to 336 in steps of 24"):
        check_hours(hours)


def use_ec2(monkeypatch: pytest.MonkeyPatch, ec2: Any) -> None:
    monkeypatch.setattr(preflight_clients, "make_clients", lambda *_: clients(ec2))


def test_cli_exit_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    ec2, stub = stubbed("ec2")
    use_ec2(monkeypatch, ec2)
    base = ["extend", "--stack", "gb200-x72", "--group", "nvl72", "--now", "2026-12-02T12:00:00Z"]
    shipped = "cr-0123456789abcdef0"  # the shipped stack's one block
    queue_offering(stub, cr_id=shipped)
    done = run_main(*base, "--hours", "48")
    assert done.code == 0 and OFFER in done.stdout
    queue_offering(stub, cr_id=shipped, offered=False)
    assert run_main(*base, "--hours", "48").code == 1
    bad_group = run_main("extend", "--stack", "gb200-x72", "--group", "nvl36", "--hours", "48")
    assert bad_group.code == 2 and "allowed: nvl72" in bad_group.stderr
    bad_hours = run_main(*base, "--hours", "30")
    assert bad_hours.code == 2 and capacity_states.allowed_extension_hours_text() in bad_hours.stderr
    assert run_main(*base, "--hours", "48", "--now", "yesterday").code == 2
    stub.assert_no_pending_responses()


def test_cli_without_credentials_exits_2(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    done = run_main("extend", "--stack", "gb200-x72", "--group", "nvl72", "--hours", "24")
    assert done.code == 2 and done.stderr.startswith("extend: no usable AWS credentials")
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("state", capacity_states.CAPACITY_RESERVATION_STATES)
def test_only_active_or_scheduled_blocks_are_offered_an_extension(state: str) -> None:
    ec2, stub = stubbed("ec2")
    if state in capacity_states.EXTENSION_USABLE_STATES:
        queue_offering(stub)  # its state is active; the case is the same for scheduled
        expected = True
    else:
        queue_state(stub, state=state)
        expected = False
    lines, ok = run_extend(pick_group(SETTINGS, "nvl72"), clients(ec2), 48, False, DURING_A)
    stub.assert_no_pending_responses()
    assert ok == expected
    if not expected:
        assert lines[0] == "cannot extend nvl72; nothing was bought:" and state in lines[1]


@pytest.mark.parametrize(
    ("before_end", "allowed"),
    [
        (timedelta(days=57), False),
        (timedelta(days=56), True),
        (timedelta(hours=1), True),
        (timedelta(minutes=59), False),
    ],
)
def test_extensions_are_bought_from_56_days_to_1_hour_before_the_end(before_end: timedelta, allowed: bool) -> None:
    ec2, stub = stubbed("ec2")
    far_end = DURING_A + before_end
    if allowed:
        queue_offering(stub, offered=False, end=far_end)
    else:
        queue_state(stub, end=far_end)
    lines, _ = run_extend(pick_group(SETTINGS, "nvl72"), clients(ec2), 48, False, DURING_A)
    assert ("cannot extend" in lines[0]) != allowed


def test_a_purchase_without_answer_is_sent_once_and_may_have_gone_through() -> None:
    ec2, stub = stubbed("ec2")
    queue_offering(stub)
    once = boto3.client("ec2", region_name="us-east-1")  # no Stubber: the handler below answers before any request
    sent: list[str] = []

    def timeout(**_: Any) -> None:
        sent.append("purchase")
        raise ReadTimeoutError(endpoint_url="https://ec2.us-east-1.amazonaws.com/")

    once.meta.events.register("before-call.ec2.PurchaseCapacityBlockExtension", timeout)
    lines, ok = run_extend(
        pick_group(SETTINGS, "nvl72"), dataclasses.replace(clients(ec2), ec2_once=once), 48, True, DURING_A
    )
    stub.assert_no_pending_responses()
    assert not ok and sent == ["purchase"]
    assert "it may have gone through" in lines[-1] and f"--capacity-reservation-ids {A}" in lines[-1]


def test_purchases_go_through_a_client_that_does_not_retry() -> None:
    made = preflight_clients.make_clients("us-east-1")
    assert made.ec2_once is not None and made.ec2_once.meta.config.retries["total_max_attempts"] == 1
    assert made.ec2.meta.config.retries["total_max_attempts"] == 3
