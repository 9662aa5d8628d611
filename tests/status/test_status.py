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
from ultraserver.facts.capacity import capacity_states
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
    assert "cr-0aaaaaaaaaaaaaaa1 (cb-0aaaaaaaaaaaaaaa1) active" in text
    assert "5d 23.0h left before the reclaim at 2026-12-08 10:30 UTC" in text
    assert "18 of 18 nodes Ready" in text and "12.0 GPU-hours" in text
    data = status_json("gb200-x72", report, DURING_A)
    assert data["passed"] is True and data["ultraservers"][0]["reservation"]["interconnect"] == "ok"
    # Time left counts to the reclaim, 60 minutes before the end of an UltraServer block.
    assert data["ultraservers"][0]["secondsLeft"] == (A_END - timedelta(minutes=60) - DURING_A).total_seconds()


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


def test_no_node_after_a_block_switch_names_the_missed_pulumi_up() -> None:
    # Nobody deployed between A's scale-down and B's start: B's scale-up launched against A's reservation.
    ec2, stub = stubbed("ec2")
    queue_current(stub, reservation(B, "active", B_START, B_END, BLOCK_B, AvailableInstanceCount=18))
    queue_other(stub, reservation(A, "expired", A_START, A_END, BLOCK_A))
    report = run_status(SETTINGS, clients(ec2), FakeCluster(), Limits(B_START + timedelta(hours=2)))
    fix = problems(report)["nvl72: nodes Ready"]
    assert "still targets the previous reservation" in fix
    # To 0 outside Pulumi first: a deploy updates a managed group's template version before its size.
    assert fix.index("update-nodegroup-config") < fix.index("gpuNodeGroups[0].scaleToZeroForUpgrade: true")
    # Inside the first block there was no switch to miss.
    cluster = FakeCluster()
    report = status_at(DURING_A, a_active(AvailableInstanceCount=18), b_scheduled(), cluster)
    assert "previous reservation" not in problems(report)["nvl72: nodes Ready"]


def test_no_node_in_a_standby_block_group_names_no_switch() -> None:
    # handover: standby: block B has its own group on its own reservation; there is no switch to have missed.
    settings = two_block_settings(handover="standby")
    ec2, stub = stubbed("ec2")
    queue_current(stub, reservation(B, "active", B_START, B_END, BLOCK_B, AvailableInstanceCount=18))
    queue_other(stub, reservation(A, "expired", A_START, A_END, BLOCK_A))
    report = run_status(settings, clients(ec2), FakeCluster(), Limits(B_START + timedelta(hours=2)))
    fix = problems(report)["nvl72: nodes Ready"]
    assert "previous reservation" not in fix and "describe-nodegroup" in fix


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


def test_the_horizon_counts_to_the_reclaim_not_to_the_end() -> None:
    # 30 minutes beyond the horizon from the end, 30 inside it from the reclaim (60 minutes before the end).
    ended_a = reservation(A, "expired", A_START, A_END, BLOCK_A)
    b_active = reservation(B, "active", B_START, B_END, BLOCK_B)
    ec2, stub = stubbed("ec2")
    queue_current(stub, b_active)
    queue_other(stub, ended_a)
    now = B_END - timedelta(hours=48, minutes=30)
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=B_START)
    report = run_status(SETTINGS, clients(ec2), cluster, Limits(now, horizon=timedelta(hours=48)))
    [block_end] = [p for p in report.ultraservers[0].problems if p.key == "nvl72: block end"]
    assert "is reclaimed from " in str(block_end.value) and "(in 47.5 h;" in str(block_end.value)


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


def test_every_ultraserver_of_the_multi_stack_and_the_fleet_as_one() -> None:
    """gb200-multi: four one-UltraServer groups (nvl72-1..4), and a fleet of eight over a resource group."""
    from helpers.stacks import ROOT
    from ultraserver.cli import stack_settings
    from ultraserver.facts.kubernetes.scheduling import ULTRASERVER_LABEL
    from ultraserver.preflight.clients import PreflightClients
    from ultraserver.verify.clients import Node

    settings = stack_settings(ROOT, "gb200-multi")
    ec2, stub = stubbed("ec2")
    rg, rg_stub = stubbed("resource-groups")
    ids = [f"cr-0{c}00000000000000{c}" for c in "abcd"]
    blocks = [f"cb-0{n}000000000000000" for n in range(4)]
    for cr_id, block in zip(ids, blocks, strict=True):
        queue_other(stub, reservation(cr_id, "active", A_START, A_END, block))
    stub.add_response(
        "describe_capacity_blocks",
        {"CapacityBlocks": [{"CapacityBlockId": b, "State": "active"} for b in blocks]},
        {"CapacityBlockIds": blocks},
    )
    stub.add_response(
        "describe_capacity_block_status",
        {"CapacityBlockStatuses": [{"CapacityBlockId": b, "InterconnectStatus": "ok"} for b in blocks]},
        {"CapacityBlockIds": blocks},
    )
    fleet = [f"cr-0f{n:015x}" for n in range(8)]
    arn = "arn:aws:resource-groups:us-east-1:111122223333:group/gb200-fleet"
    rg_stub.add_response(
        "list_group_resources",
        {
            "ResourceIdentifiers": [
                {
                    "ResourceArn": f"arn:aws:ec2:us-east-1:111122223333:capacity-reservation/{i}",
                    "ResourceType": "AWS::EC2::CapacityReservation",
                }
                for i in fleet
            ]
        },
        {"Group": arn},
    )
    for cr_id in fleet:
        stub.add_response(
            "describe_capacity_reservations",
            {"CapacityReservations": [reservation(cr_id, "active", A_START, A_END, "cb-0f0000000000000ff")]},
            {"CapacityReservationIds": [cr_id]},
        )
    for call, key, item in (
        ("describe_capacity_blocks", "CapacityBlocks", {"State": "active"}),
        ("describe_capacity_block_status", "CapacityBlockStatuses", {"InterconnectStatus": "impaired"}),
    ):
        stub.add_response(
            call,
            {key: [{"CapacityBlockId": "cb-0f0000000000000ff", **item}]},
            {"CapacityBlockIds": ["cb-0f0000000000000ff"]},
        )
    nodes = [
        Node(
            f"n-{group}-{n}",
            {ULTRASERVER_LABEL: group},
            {"nvidia.com/gpu": "4", "vpc.amazonaws.com/efa": "17"},
            True,
            A_START,
        )
        for group in ("nvl72-1", "nvl72-2", "nvl72-3", "nvl72-4", "fleet")
        for n in range(18 if group != "fleet" else 144)
    ]
    base = clients(ec2)
    both = PreflightClients(base.ec2, base.ssm, base.eks, base.service_quotas, rg, base.sts)
    report = run_status(settings, both, FakeCluster(node_list=nodes), Limits(DURING_A))
    stub.assert_no_pending_responses()
    rows = {u.node_group: u for u in report.ultraservers}
    assert list(rows) == ["nvl72-1", "nvl72-2", "nvl72-3", "nvl72-4", "fleet"]
    assert [rows[f"nvl72-{n}"].reservation.id for n in range(1, 5)] == ids
    assert (rows["fleet"].reservation.total, rows["fleet"].cluster.ready) == (144, 144)
    assert set(problems(report)) == {"fleet: interconnect"}


def test_a_single_block_group_names_its_reservation_window() -> None:
    from helpers.stacks import ROOT
    from ultraserver.cli import stack_settings

    settings = stack_settings(ROOT, "gb200-x72")
    start, end = (
        datetime.fromisoformat("2026-12-01T11:30:00+00:00"),
        datetime.fromisoformat("2026-12-15T11:30:00+00:00"),
    )
    ec2, stub = stubbed("ec2")
    queue_current(stub, reservation("cr-0123456789abcdef0", "active", start, end + timedelta(days=2), BLOCK_A))
    cluster = gpu_nodes(settings, ready=18, ready_since=start)
    report = run_status(settings, clients(ec2), cluster, Limits(start + timedelta(days=1)))
    fix = problems(report, WARNING)["nvl72: block end"]
    assert fix.startswith("set gpuNodeGroups[0].reservationWindow.end to 2026-12-17T11:30:00+00:00")
