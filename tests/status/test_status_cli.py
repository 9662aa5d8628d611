"""`ultraserver status` through cli.main: exit 0 healthy, 1 failing, 2 no credentials, 4 no cluster; --json."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from helpers.capacity import clients, gpu_nodes, queue_current, reservation
from helpers.cli import run_main
from helpers.fake_cluster import FakeCluster
from helpers.permissions import actions, recorded_operations
from helpers.preflight import stubbed
from helpers.stacks import ROOT
from ultraserver.cli import stack_settings
from ultraserver.facts.aws.permissions import COMMAND_ACTIONS
from ultraserver.preflight import clients as preflight_clients
from ultraserver.verify import clients as verify_clients

# The shipped gb200-x72 stack: one block, cr-0123456789abcdef0, 2026-12-01 11:30 to 2026-12-15 11:30 UTC.
SHIPPED = "cr-0123456789abcdef0"
START = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
END = datetime(2026, 12, 15, 11, 30, tzinfo=timezone.utc)
NOW = "2026-12-03T12:00:00Z"


def wire(monkeypatch: pytest.MonkeyPatch, cluster: FakeCluster, interconnect: str = "ok") -> Any:
    ec2, stub = stubbed("ec2")
    queue_current(stub, reservation(SHIPPED, "active", START, END, "cb-0123456789abcdef0"), interconnect)
    monkeypatch.setattr(preflight_clients, "make_clients", lambda *_: clients(ec2))
    monkeypatch.setattr(verify_clients, "connect", lambda kubeconfig: cluster)
    return stub


def status(*extra: str) -> Any:
    return run_main("status", "--stack", "gb200-x72", "--project-dir", str(ROOT), "--now", NOW, *extra)


def healthy() -> FakeCluster:
    return gpu_nodes(stack_settings(ROOT, "gb200-x72"), ready=18, ready_since=START + timedelta(minutes=15))


def test_healthy_exits_0_and_writes_json(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    stub = wire(monkeypatch, healthy())
    out = tmp_path / "status.json"
    with recorded_operations() as seen:
        done = status("--json", str(out))
    stub.assert_no_pending_responses()
    assert actions(seen) <= set(COMMAND_ACTIONS["status"])  # the IAM row of status
    assert done.code == 0, done.stdout + done.stderr
    assert "nvl72" in done.stdout and "1 UltraServer(s), 0 failing" in done.stdout
    data = json.loads(out.read_text())
    assert data["passed"] is True
    assert data["ultraservers"][0]["idleGpuHours"] == 18.0  # 18 nodes x 4 GPUs x 15 minutes


def test_impaired_interconnect_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    wire(monkeypatch, healthy(), interconnect="impaired")
    done = status()
    assert done.code == 1 and "FAIL  nvl72: interconnect  " in done.stdout


def test_the_horizon_and_grace_are_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    # 11.5 days left: a 300-hour horizon fails the lone block.
    wire(monkeypatch, healthy())
    done = status("--horizon-hours", "300")
    assert done.code == 1 and "ultraserver extend --stack gb200-x72 --group nvl72 --hours 24" in done.stdout
    # No node yet 20 minutes into the block: inside a 30-minute grace, outside a 10-minute one.
    for grace, code in (("30", 0), ("10", 1)):
        wire(monkeypatch, FakeCluster())
        done = run_main("status", "--stack", "gb200-x72", "--now", "2026-12-01T11:50:00Z", "--grace-minutes", grace)
        assert done.code == code, done.stdout


def test_unreachable_cluster_shows_the_aws_side_and_exits_4(monkeypatch: pytest.MonkeyPatch) -> None:
    stub = wire(monkeypatch, FakeCluster(down=True))
    done = status()
    stub.assert_no_pending_responses()
    assert done.code == 4, done.stdout + done.stderr
    assert f"AWS:     {SHIPPED} (cb-0123456789abcdef0) active" in done.stdout
    assert "cluster: NOT READ" in done.stdout and "cost:    unknown" in done.stdout
    assert "AWS side only: the Kubernetes API could not be read" in done.stdout
    assert "why: listing nodes" in done.stdout
    assert done.stderr.startswith("status: cluster API unreachable (exit 4)")


def test_no_kubeconfig_still_reports_what_aws_knows(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    wire(monkeypatch, healthy())

    def no_kubeconfig(kubeconfig: str) -> Any:
        raise verify_clients.KubeconfigError(f"kubeconfig {kubeconfig!r} is neither an existing file nor a document")

    monkeypatch.setattr(verify_clients, "connect", no_kubeconfig)
    out = tmp_path / "status.json"
    done = status("--json", str(out))
    assert done.code == 4 and "1 UltraServer(s), 0 failing" in done.stdout
    assert "neither an existing file" in done.stdout
    data = json.loads(out.read_text())
    assert data["clusterRead"] is False and "neither an existing file" in data["clusterUnread"]
    [row] = data["ultraservers"]
    assert row["cluster"] is None and row["idleGpuHours"] is None and row["reservation"]["id"] == SHIPPED


def test_an_aws_side_failure_without_the_cluster_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    wire(monkeypatch, FakeCluster(down=True), interconnect="impaired")
    done = status()
    assert done.code == 1 and "FAIL  nvl72: interconnect  " in done.stdout and "AWS side only" in done.stdout


def test_no_credentials_exits_2_in_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setattr(verify_clients, "connect", lambda kubeconfig: healthy())
    done = status()
    assert done.code == 2 and done.stderr.startswith("status: no usable AWS credentials")
    assert len(done.stderr.strip().splitlines()) == 1


def test_bad_flags_are_usage_errors() -> None:
    assert status("--now", "2026-12-03T12:00:00").code == 2  # no zone
    assert status("--grace-minutes", "-5").code == 2
    assert status("--horizon-hours", "-1").code == 2
