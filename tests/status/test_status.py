"""`ultraserver status` judged against stubbed EC2 answers (the real ec2 model) and a fake Kubernetes API.

Time is pinned: before block A, during A, during B (its last day), after B.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from helpers.capacity import (
    A_END,
    A_START,
    AFTER,
    B_END,
    B_START,
    BEFORE,
    BLOCK_A,
    BLOCK_B,
    CLIQUE,
    DURING_A,
    DURING_B,
    A,
    B,
    clients,
    gpu_nodes,
    queue_current,
    queue_other,
    reservation,
    two_block_settings,
)
from helpers.fake_cluster import FakeCluster
from helpers.preflight import stubbed
from ultraserver.facts import capacity_states
from ultraserver.problems import ERROR, WARNING
from ultraserver.status.judge import Limits
from ultraserver.status.report import format_status, status_json
from ultraserver.status.run import StatusReport, run_status

SETTINGS = two_block_settings()


def status_at(
    now: datetime,
    current: dict,
    other: dict,
    cluster: FakeCluster,
    interconnect: str = "ok",
    block_state: str | None = None,
) -> StatusReport:
    ec2, stub = stubbed("ec2")
    queue_current(stub, current, interconnect, block_state)
    queue_other(stub, other)
    report = run_status(SETTINGS, clients(ec2), cluster, Limits(now))
    stub.assert_no_pending_responses()
    return report


def a_active(**changes: object) -> dict:
    return reservation(A, "active", A_START, A_END, BLOCK_A, **changes)


def b_scheduled() -> dict:
    return reservation(B, "scheduled", B_START, B_END, BLOCK_B, AvailableInstanceCount=18)


def problems(report: StatusReport, level: str = ERROR) -> dict[str, str]:
    found = [*report.problems, *(p for u in report.ultraservers for p in u.problems)]
    return {p.key: p.fix for p in found if p.level == level}


def test_during_a_healthy_block_nothing_fails_and_the_idle_time_is_counted() -> None:
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=A_START + timedelta(minutes=10))
    report = status_at(DURING_A, a_active(), b_scheduled(), cluster)
    assert not report.failed and problems(report, WARNING) == {}
    [u] = report.ultraservers
    assert (u.node_group, u.block, u.blocks, u.reservation.running) == ("nvl72", 0, 2, 18)
    assert (u.cluster.ready, u.cluster.gpus, u.cluster.cliques) == (18, 72, (CLIQUE,))
    # 18 nodes x 4 GPUs x 10 minutes from the block start to Ready.
    assert u.idle_gpu_hours == pytest.approx(18 * 4 * 10 / 60)
    text = format_status("gb200-x72", report, DURING_A)
    assert "cr-0aaaaaaaaaaaaaaa1 (cb-0aaaaaaaaaaaaaaa1) active" in text and "6d 0.0h left" in text
    assert "18 of 18 nodes Ready" in text and "12.0 GPU-hours" in text
    data = status_json("gb200-x72", report, DURING_A)
    assert data["passed"] is True and data["ultraservers"][0]["reservation"]["interconnect"] == "ok"


def test_missing_nodes_fail_after_the_grace_period_and_count_as_idle() -> None:
    cluster = gpu_nodes(SETTINGS, ready=16, ready_since=A_START + timedelta(minutes=10))
    report = status_at(DURING_A, a_active(AvailableInstanceCount=2), b_scheduled(), cluster)
    assert "nvl72: nodes Ready" in problems(report)
    [u] = report.ultraservers
    assert u.idle_gpu_hours == pytest.approx(16 * 4 * 10 / 60 + 2 * 4 * 24)
    assert "16 of 18 reserved" in str(next(p.value for p in u.problems if p.key == "nvl72: nodes Ready"))


def test_missing_nodes_inside_the_grace_period_pass() -> None:
    cluster = gpu_nodes(SETTINGS, ready=0, ready_since=None)
    report = status_at(A_START + timedelta(minutes=20), a_active(), b_scheduled(), cluster)
    assert "nvl72: nodes Ready" not in problems(report)


def test_a_node_gone_not_ready_counts_from_its_transition() -> None:
    recently = DURING_A - timedelta(minutes=5)
    cluster = gpu_nodes(SETTINGS, ready=17, ready_since=recently, not_ready=1)
    assert not status_at(DURING_A, a_active(), b_scheduled(), cluster).failed
    long_ago = DURING_A - timedelta(hours=2)
    cluster = gpu_nodes(SETTINGS, ready=17, ready_since=long_ago, not_ready=1)
    assert "nvl72: nodes Ready" in problems(status_at(DURING_A, a_active(), b_scheduled(), cluster))


def test_after_the_scale_down_nodes_are_not_expected() -> None:
    ec2, stub = stubbed("ec2")
    queue_current(stub, reservation(B, "active", B_START, B_END, BLOCK_B))
    queue_other(stub, reservation(A, "expired", A_START, A_END, BLOCK_A))
    report = run_status(SETTINGS, clients(ec2), FakeCluster(), Limits(B_END - timedelta(minutes=30)))
    assert "nvl72: nodes Ready" not in problems(report)
    # Block A's slot passed: the group moved to B at A's scale-down time.
    assert report.ultraservers[0].block == 1


def test_impaired_interconnect_fails_and_insufficient_data_warns() -> None:
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=A_START)
    impaired = status_at(DURING_A, a_active(), b_scheduled(), cluster, interconnect="impaired")
    assert "AWS Support" in problems(impaired)["nvl72: interconnect"]
    unsure = status_at(DURING_A, a_active(), b_scheduled(), cluster, interconnect="insufficient-data")
    assert not unsure.failed and "nvl72: interconnect" in problems(unsure, WARNING)


@pytest.mark.parametrize("status", capacity_states.INTERCONNECT_STATUSES)
def test_every_interconnect_status_has_a_verdict(status: str) -> None:
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=A_START)
    report = status_at(DURING_A, a_active(), b_scheduled(), cluster, interconnect=status)
    assert report.failed == (status == "impaired")


def test_fewer_efa_devices_than_the_layout_fail() -> None:
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=A_START, efa=1)
    fix = problems(status_at(DURING_A, a_active(), b_scheduled(), cluster))["nvl72: EFA devices"]
    assert "EFA device plugin" in fix


def test_before_the_block_nothing_is_expected() -> None:
    current = reservation(A, "scheduled", A_START, A_END, BLOCK_A, AvailableInstanceCount=18)
    report = status_at(BEFORE, current, b_scheduled(), FakeCluster(), interconnect="insufficient-data")
    assert not report.failed and problems(report, WARNING) == {}
    assert report.ultraservers[0].idle_gpu_hours == 0.0


def test_a_block_ending_within_the_horizon_fails_only_without_a_successor() -> None:
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=A_START)
    late_a = A_END - timedelta(hours=24)
    assert "nvl72: block end" not in problems(status_at(late_a, a_active(), b_scheduled(), cluster))
    ended_a = reservation(A, "expired", A_START, A_END, BLOCK_A)
    b_active = reservation(B, "active", B_START, B_END, BLOCK_B)
    ec2, stub = stubbed("ec2")
    queue_current(stub, b_active)
    queue_other(stub, ended_a)
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=B_START)
    report = run_status(SETTINGS, clients(ec2), cluster, Limits(DURING_B))
    found = problems(report)
    assert "ultraserver extend" in found["nvl72: block end"]
    # Block A has ended but the stack still names it: stale, with the fix.
    assert found["nvl72: gpuNodeGroups[0].capacityBlocks[0]"].startswith("remove gpuNodeGroups[0].capacityBlocks[0]")


def test_after_the_last_block_its_reservation_is_stale() -> None:
    ec2, stub = stubbed("ec2")
    queue_current(stub, reservation(B, "expired", B_START, B_END, BLOCK_B))
    queue_other(stub, reservation(A, "expired", A_START, A_END, BLOCK_A))
    report = run_status(SETTINGS, clients(ec2), FakeCluster(), Limits(AFTER))
    found = problems(report)
    assert found["nvl72: reservation"].startswith("gpuNodeGroups[0].capacityBlocks[1] will never launch (expired)")
    assert "nvl72: block end" not in found and "nvl72: nodes Ready" not in found


@pytest.mark.parametrize("state", capacity_states.CAPACITY_RESERVATION_STATES)
def test_every_reservation_state_of_the_current_block(state: str) -> None:
    current = reservation(A, state, A_START, A_END, BLOCK_A)
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=A_START)
    report = status_at(DURING_A, current, b_scheduled(), cluster, block_state="active")
    kind = capacity_states.state_kind(state)
    assert ("nvl72: reservation" in problems(report)) == (kind == "ended")
    assert ("nvl72: reservation" in problems(report, WARNING)) == (kind == "pending")


@pytest.mark.parametrize("state", capacity_states.CAPACITY_BLOCK_STATES)
def test_every_capacity_block_state(state: str) -> None:
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=A_START)
    report = status_at(DURING_A, a_active(), b_scheduled(), cluster, block_state=state)
    assert report.ultraservers[0].reservation.block_state == state
    assert ("nvl72: reservation" in problems(report)) == (state in capacity_states.ENDED)


@pytest.mark.parametrize("state", capacity_states.CAPACITY_RESERVATION_STATES)
def test_every_state_of_the_next_block(state: str) -> None:
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=A_START)
    report = status_at(DURING_A, a_active(), reservation(B, state, B_START, B_END, BLOCK_B), cluster)
    fixes = problems(report)
    assert ("nvl72: gpuNodeGroups[0].capacityBlocks[1]" in fixes) == (state in capacity_states.ENDED)
    if state in capacity_states.ENDED:
        assert fixes["nvl72: gpuNodeGroups[0].capacityBlocks[1]"].startswith("gpuNodeGroups[0].capacityBlocks[1] will")


def test_an_unknown_reservation_fails() -> None:
    ec2, stub = stubbed("ec2")
    stub.add_client_error(
        "describe_capacity_reservations",
        service_error_code="InvalidCapacityReservationId.NotFound",
        expected_params={"CapacityReservationIds": [A]},
    )
    queue_other(stub, b_scheduled())
    report = run_status(SETTINGS, clients(ec2), FakeCluster(), Limits(DURING_A))
    assert "correct the reservation id" in problems(report)["nvl72: reservation"]


def test_an_extended_block_warns_to_update_the_stack_file() -> None:
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=A_START)
    report = status_at(DURING_A, a_active(EndDate=A_END + timedelta(days=1)), b_scheduled(), cluster)
    assert problems(report, WARNING)["nvl72: block end"].startswith("set gpuNodeGroups[0].capacityBlocks[0].end to")
