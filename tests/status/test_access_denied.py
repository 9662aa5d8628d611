"""A call the caller's IAM policy denies names the IAM action to grant; never 'not found' or a traceback."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.capacity import clients
from helpers.cli import run_main
from helpers.fake_cluster import FakeCluster
from helpers.preflight import stubbed
from helpers.stacks import ROOT
from ultraserver.preflight import clients as preflight_clients
from ultraserver.verify import clients as verify_clients

SHIPPED = "cr-0123456789abcdef0"  # the reservation of the shipped gb200-x72 stack
# What EC2 answers a caller without ec2:DescribeCapacityReservations (HTTP 403).
EC2_DENIED = {"service_error_code": "UnauthorizedOperation", "http_status_code": 403}


def denied_ec2() -> Any:
    ec2, stub = stubbed("ec2")
    stub.add_client_error(
        "describe_capacity_reservations",
        service_message="You are not authorized to perform this operation. Encoded authorization failure message: x",
        expected_params={"CapacityReservationIds": [SHIPPED]},
        **EC2_DENIED,
    )
    return ec2


@pytest.mark.parametrize("command", ["status", "extend"])
def test_denied_ec2_call_names_the_action_in_one_line_and_exits_1(
    monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    ec2 = denied_ec2()
    monkeypatch.setattr(preflight_clients, "make_clients", lambda *_: clients(ec2))
    monkeypatch.setattr(verify_clients, "connect", lambda kubeconfig: FakeCluster())
    extra = ("--group", "nvl72", "--hours", "24") if command == "extend" else ()
    done = run_main(
        command, "--stack", "gb200-x72", "--project-dir", str(ROOT), "--now", "2026-12-03T12:00:00Z", *extra
    )
    out = done.stdout + done.stderr
    assert done.code == 1, out
    assert "Traceback" not in out and "not found" not in out and "not-found" not in out
    failed = [
        line for line in out.splitlines() if "ec2:DescribeCapacityReservations failed (UnauthorizedOperation)" in line
    ]
    assert len(failed) == 1 and "grant ec2:DescribeCapacityReservations to the caller's IAM policy" in out
