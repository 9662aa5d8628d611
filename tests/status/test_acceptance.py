"""Acceptance at the start of a block: time to ready in status, and the remediation packet of a failing UltraServer
(its ids, instances, interconnect, evidence and paid GPU-hours lost); terminating its instances is only offered."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from helpers.capacity import A_START, DURING_A, gpu_nodes, launcher, node_object
from ultraserver.rehearse.emulator import Emulator
from ultraserver.status.report import format_status, status_json
from ultraserver.status.run import StatusReport
from ultraserver.verify.clients import connect

from tests.status.test_status import SETTINGS, a_active, b_scheduled, status_at


def test_a_healthy_block_shows_its_time_to_ready_and_no_packet() -> None:
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=A_START + timedelta(minutes=12))
    report = status_at(DURING_A, a_active(), b_scheduled(), cluster)
    data = status_json("gb200-x72", report, DURING_A)["ultraservers"][0]
    assert data["acceptance"]["minutesToReady"] == 12.0 and data["acceptance"]["ready"] == "18/18"
    assert data["remediation"] is None
    assert "all 18 nodes Ready 12.0 min after the block start" in format_status("gb200-x72", report, DURING_A)


def test_one_reserved_node_missing_is_never_all_ready() -> None:
    """17 of 18 Ready: the block is not accepted, however long ago the 17 turned Ready (an off-by-one in the count
    would report "all Ready" here); the 18th turning Ready gives the time of the last one."""
    cluster = gpu_nodes(SETTINGS, ready=17, ready_since=A_START + timedelta(minutes=12))
    report = status_at(DURING_A, a_active(AvailableInstanceCount=1), b_scheduled(), cluster)
    data = status_json("gb200-x72", report, DURING_A)["ultraservers"][0]["acceptance"]
    assert data["ready"] == "17/18" and data["allReadyAt"] is None and data["minutesToReady"] is None
    assert "all 18 nodes Ready" not in format_status("gb200-x72", report, DURING_A)
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=A_START + timedelta(minutes=12))
    data = status_json("gb200-x72", status_at(DURING_A, a_active(), b_scheduled(), cluster), DURING_A)
    assert data["ultraservers"][0]["acceptance"]["minutesToReady"] == 12.0


def test_an_impaired_ultraserver_gets_the_support_case_packet() -> None:
    cluster = gpu_nodes(SETTINGS, ready=16, ready_since=A_START + timedelta(minutes=10))
    report = status_at(DURING_A, a_active(AvailableInstanceCount=2), b_scheduled(), cluster, interconnect="impaired")
    data = status_json("gb200-x72", report, DURING_A)["ultraservers"][0]
    assert data["acceptance"]["minutesToReady"] is None  # 16 of 18: never all Ready
    packet = data["remediation"]
    assert packet["capacityBlockId"] == "cb-0aaaaaaaaaaaaaaa1" and packet["capacityReservationIds"] == [
        "cr-0aaaaaaaaaaaaaaa1"
    ]
    assert packet["interconnectStatus"] == "impaired" and len(packet["instanceIds"]) == 16
    assert packet["instanceIds"][0].startswith("i-0")
    assert any("interconnect" in line for line in packet["evidence"])
    assert packet["paidGpuHoursLost"] > 0
    assert packet["terminateAll"]["optIn"] is True and packet["terminateAll"]["command"].startswith(
        "aws ec2 terminate-instances --instance-ids i-0"
    )
    assert "remediation: the support-case packet is in --json" in format_status("gb200-x72", report, DURING_A)


def test_the_packet_scales_the_group_to_zero_before_it_offers_to_terminate() -> None:
    """While the group's desired size is still 18, Auto Scaling replaces every terminated instance on the same
    impaired block: the packet's first step takes the group (found from one of its instances) to 0."""
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=A_START + timedelta(minutes=10))
    report = status_at(DURING_A, a_active(AvailableInstanceCount=0), b_scheduled(), cluster, interconnect="impaired")
    packet = status_json("gb200-x72", report, DURING_A)["ultraservers"][0]["remediation"]
    steps = packet["steps"]
    assert steps.index("scaleToZero") < steps.index("terminateAll") < steps.index("supportCase")
    scale = packet["scaleToZero"]["command"]
    assert scale.startswith("aws autoscaling update-auto-scaling-group --auto-scaling-group-name ")
    assert "--min-size 0 --desired-capacity 0" in scale
    assert f"--instance-ids {packet['instanceIds'][0]} " in scale  # the group is the one its instances run in
    assert "replacement" in packet["scaleToZero"]["why"]


def test_paid_gpu_hours_lost_count_every_ready_node_on_an_impaired_fabric() -> None:
    """All 18 nodes Ready 10 minutes into the block, on an interconnect EC2 reports impaired: the whole paid time of
    every GPU is lost, not only the 10 minutes with no Ready node."""
    cluster = gpu_nodes(SETTINGS, ready=18, ready_since=A_START + timedelta(minutes=10))
    report = status_at(DURING_A, a_active(AvailableInstanceCount=0), b_scheduled(), cluster, interconnect="impaired")
    data = status_json("gb200-x72", report, DURING_A)["ultraservers"][0]
    paid = 72 * (DURING_A - A_START).total_seconds() / 3600
    assert data["remediation"]["paidGpuHoursLost"] == round(paid, 2)
    assert data["idleGpuHours"] == round(72 * 10 / 60, 2)  # the time with no Ready node alone stays as it was


def _served_status(tmp_path: Path, launchers: list[dict]) -> tuple[StatusReport, dict]:
    nodes = gpu_nodes(SETTINGS, ready=18, ready_since=A_START + timedelta(minutes=12)).node_list
    with Emulator() as emulator:
        emulator.put([node_object(n) for n in nodes] + launchers)
        reader = connect(str(emulator.kubeconfig(tmp_path)))
        report = status_at(DURING_A, a_active(), b_scheduled(), reader)  # type: ignore[arg-type]
    return report, status_json("gb200-x72", report, DURING_A)["ultraservers"][0]["acceptance"]


def test_the_checks_of_this_block_show_when_they_passed_read_over_http(tmp_path: Path) -> None:
    old = launcher(
        "imex-check", "nvbandwidth-nvl72", "Failed", A_START - timedelta(days=1), A_START - timedelta(hours=23)
    )
    run = launcher(
        "imex-check",
        "nvbandwidth-nvl72",
        "Succeeded",
        A_START + timedelta(minutes=13),
        A_START + timedelta(minutes=21, seconds=30),
    )
    report, accepted = _served_status(tmp_path, [old, run])
    assert accepted["minutesToReady"] == 12.0
    assert accepted["checks"] == "passed" and accepted["minutesToChecks"] == 21.5
    assert "checks:  passed at +21.5 min" in format_status("gb200-x72", report, DURING_A)


def test_a_failed_run_and_a_run_of_the_previous_block_are_not_passed(tmp_path: Path) -> None:
    failed = launcher(
        "imex-check", "nvbandwidth-nvl72", "Failed", A_START + timedelta(minutes=13), A_START + timedelta(minutes=15)
    )
    assert _served_status(tmp_path, [failed])[1]["checks"] == "failed"
    old = launcher(
        "imex-check", "nvbandwidth-nvl72", "Succeeded", A_START - timedelta(days=1), A_START - timedelta(hours=23)
    )
    report, accepted = _served_status(tmp_path, [old])
    assert accepted["checks"] == "not yet" and accepted["minutesToChecks"] is None
    assert "checks:  not yet (" in format_status("gb200-x72", report, DURING_A)
