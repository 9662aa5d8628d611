"""'Checks passed' in status counts every check job of the UltraServer (nvbandwidth, its NCCL run, the EFA run that
spans it), each with a run of this block; a check no run of this block will ever come for is 'not checked', with
what to run. Read over HTTP through the official client from the emulated API server."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from helpers.capacity import A_START, DURING_A, clients, gpu_nodes, launcher, node_object, queue_current, queue_other
from helpers.preflight import stubbed
from helpers.stacks import stack_config
from ultraserver.config.settings import Settings, parse_settings
from ultraserver.rehearse.emulator import Emulator
from ultraserver.status.judge import Limits
from ultraserver.status.report import format_status, status_json
from ultraserver.status.run import run_status
from ultraserver.verify.clients import connect

from tests.status.test_status import SETTINGS, a_active, b_scheduled


def _with_nccl() -> Settings:
    config = stack_config("gb200-x72")
    [group] = config["ultraserver-eks:gpuNodeGroups"]
    group.pop("capacityReservationIds"), group.pop("reservationWindow")
    group["handover"] = "standby"
    group["capacityBlocks"] = [
        {"start": b.window.start.isoformat(), "end": b.window.end.isoformat(), "capacityReservationIds": list(ids)}
        for b, ids in ((b, b.reservation_ids) for b in SETTINGS.gpu_node_groups[0].blocks)
    ]
    config["ultraserver-eks:ncclCheck"] = {"enabled": True}
    return parse_settings(config, stack="gb200-x72")


def _without_window() -> Settings:
    config = stack_config("gb200-x72")
    [group] = config["ultraserver-eks:gpuNodeGroups"]
    group.pop("reservationWindow")
    group["capacityReservationIds"] = [SETTINGS.gpu_node_groups[0].blocks[0].reservation_ids[0]]
    return parse_settings(config, stack="gb200-x72")


def served(tmp_path: Path, settings: Settings, launchers: list[dict], other: bool = True) -> tuple[str, dict]:
    """status during block A over the emulated API: the text and the UltraServer's acceptance JSON."""
    nodes = gpu_nodes(settings, ready=18, ready_since=A_START + timedelta(minutes=12)).node_list
    ec2, stub = stubbed("ec2")
    queue_current(stub, a_active())
    if other:
        queue_other(stub, b_scheduled())
    with Emulator() as emulator:
        emulator.put([node_object(n) for n in nodes] + launchers)
        reader = connect(str(emulator.kubeconfig(tmp_path)))
        report = run_status(settings, clients(ec2), reader, Limits(DURING_A))
    stub.assert_no_pending_responses()
    return format_status("gb200-x72", report, DURING_A), status_json("gb200-x72", report, DURING_A)["ultraservers"][0][
        "acceptance"
    ]


def _at(minutes: float) -> datetime:
    return A_START + timedelta(minutes=minutes)


def test_checks_pass_only_when_the_nccl_run_of_this_block_passed_too(tmp_path: Path) -> None:
    nvbandwidth = launcher("imex-check", "nvbandwidth-nvl72", "Succeeded", _at(13), _at(20))
    text, accepted = served(tmp_path, _with_nccl(), [nvbandwidth])
    assert accepted["checks"] == "not yet" and accepted["checkJobs"] == ["nvbandwidth-nvl72", "nccl-nvl72"]
    assert "checks:  not yet (waiting for nccl-nvl72)" in text
    nccl = launcher("nccl-check", "nccl-nvl72", "Succeeded", _at(20), _at(31.5))
    text, accepted = served(tmp_path, _with_nccl(), [nvbandwidth, nccl])
    assert accepted["checks"] == "passed" and accepted["minutesToChecks"] == 31.5  # when the last one finished
    assert "checks:  passed at +31.5 min (nvbandwidth-nvl72, nccl-nvl72: this block's runs)" in text


def test_a_failed_nccl_run_fails_the_checks_and_is_named(tmp_path: Path) -> None:
    nvbandwidth = launcher("imex-check", "nvbandwidth-nvl72", "Succeeded", _at(13), _at(20))
    nccl = launcher("nccl-check", "nccl-nvl72", "Failed", _at(13), _at(16))
    text, accepted = served(tmp_path, _with_nccl(), [nvbandwidth, nccl])
    assert accepted["checks"] == "failed" and accepted["minutesToChecks"] == 16.0
    assert accepted["checksDetail"].startswith("nccl-nvl72 failed (nccl-check/nccl-nvl72-launcher-")
    assert "checks:  failed at +16.0 min (nccl-nvl72 failed" in text


def test_a_check_no_run_will_come_for_is_not_checked_with_what_to_run(tmp_path: Path) -> None:
    # No window: the in-cluster recheck has no block to wait for; the deploy's run predates this block.
    deployed = launcher("imex-check", "nvbandwidth-nvl72", "Succeeded", _at(-3000), _at(-2990))
    text, accepted = served(tmp_path, _without_window(), [deployed], other=False)
    assert accepted["checks"] == "not checked"
    assert "kubectl -n imex-check delete mpijob nvbandwidth-nvl72" in accepted["checksDetail"]
    assert "ultraserver verify" in accepted["checksDetail"] and "no Capacity Block window" in text
    # With a window the recheck makes it at the join: not yet.
    assert served(tmp_path, SETTINGS, [deployed])[1]["checks"] == "not yet"


def test_a_failed_check_run_fails_status_and_is_the_packets_evidence(tmp_path: Path) -> None:
    nccl = launcher("nccl-check", "nccl-nvl72", "Failed", _at(13), _at(16))
    settings = _with_nccl()
    nodes = gpu_nodes(settings, ready=18, ready_since=_at(12)).node_list
    ec2, stub = stubbed("ec2")
    queue_current(stub, a_active())
    queue_other(stub, b_scheduled())
    with Emulator() as emulator:
        emulator.put([*(node_object(n) for n in nodes), nccl])
        report = run_status(settings, clients(ec2), connect(str(emulator.kubeconfig(tmp_path))), Limits(DURING_A))
    assert report.failed
    packet = status_json("gb200-x72", report, DURING_A)["ultraservers"][0]["remediation"]
    assert any(e.startswith("nvl72: fabric checks: got 'nccl-nvl72 failed (nccl-check/") for e in packet["evidence"])
    # Every Ready node's time after the failed run finished is on a fabric known to be impaired: it is lost too.
    since_failed = 18 * 4 * (DURING_A - _at(16)).total_seconds() / 3600
    before_ready = 18 * 4 * 12 / 60
    assert packet["paidGpuHoursLost"] == round(since_failed + before_ready, 2)
