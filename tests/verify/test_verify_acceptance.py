"""`ultraserver verify` shows the block-start acceptance too (block start from the stack's window -> all nodes Ready ->
every check of the UltraServer passed), in text and --json, read over HTTP through the official client."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers.capacity import gpu_nodes, launcher, node_object
from helpers.stacks import ROOT
from ultraserver import cli
from ultraserver.rehearse.emulator import Emulator
from ultraserver.verify import clients

START = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
"""The shipped x72 stacks' reservationWindow start."""


def _at(minutes: float) -> datetime:
    return START + timedelta(minutes=minutes)


def verify(tmp_path: Path, stack: str, launchers: list[dict], now: datetime, capsys: pytest.CaptureFixture) -> tuple:
    """verify --now against the emulated API: the text and the JSON's acceptance."""
    nodes = gpu_nodes(cli.stack_settings(ROOT, stack), ready=18, ready_since=_at(12)).node_list
    out = tmp_path / "v.json"
    with Emulator() as emulator:
        emulator.put([node_object(n) for n in nodes] + launchers)
        kubeconfig = str(emulator.kubeconfig(tmp_path))
        args = ["verify", "--stack", stack, "--project-dir", str(ROOT), "--kubeconfig", kubeconfig]
        cli.main([*args, "--now", now.isoformat(), "--json", str(out)])
    return capsys.readouterr().out, json.loads(out.read_text())["acceptance"]


def test_verify_shows_time_to_ready_and_when_the_checks_of_this_block_passed(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    old = launcher("imex-check", "nvbandwidth-nvl72", "Failed", _at(-3000), _at(-2990))
    run = launcher("imex-check", "nvbandwidth-nvl72", "Succeeded", _at(13), _at(21.5))
    text, accepted = verify(tmp_path, "gb200-x72", [old, run], _at(60), capsys)
    assert "acceptance at 2026-12-01 12:30 UTC, block start from the stack's window" in text
    assert (
        "  nvl72: block start 2026-12-01 11:30 UTC; all 18 nodes Ready at +12.0 min; checks passed at +21.5 min "
        "(nvbandwidth-nvl72: this block's runs)" in text
    )
    [row] = accepted["ultraservers"]
    assert accepted["blockStartFrom"].startswith("the stack's window (verify reads no EC2")
    assert (row["ultraserver"], row["blockStart"], row["minutesToReady"]) == ("nvl72", START.isoformat(), 12.0)
    assert (row["checks"], row["minutesToChecks"]) == ("passed", 21.5)


def test_verify_names_the_failed_nccl_run_of_the_block(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    nvbandwidth = launcher("imex-check", "nvbandwidth-nvl72", "Succeeded", _at(13), _at(20))
    nccl = launcher("nccl-check", "nccl-nvl72", "Failed", _at(13), _at(17))
    text, accepted = verify(tmp_path, "gb200-x72-dra", [nvbandwidth, nccl], _at(60), capsys)
    assert "checks failed at +17.0 min (nccl-nvl72 failed (nccl-check/nccl-nvl72-launcher-" in text
    assert accepted["ultraservers"][0]["checkJobs"] == ["nvbandwidth-nvl72", "nccl-nvl72"]


def test_outside_every_window_verify_says_there_is_no_block(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    text, accepted = verify(tmp_path, "gb200-x72", [], START - timedelta(days=2), capsys)
    assert "nvl72: not in a block (no block of the stack's window holds this moment" in text
    assert accepted["ultraservers"] == [
        {"ultraserver": "nvl72", "blockStart": None, "why": "no block of the stack's window holds this moment"}
    ]


def test_verify_lists_nodes_and_each_launchers_pods_once_for_checks_and_acceptance(
    tmp_path: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    lists: list[tuple[str, ...]] = []
    real_connect = clients.connect

    def counted(kubeconfig: str | None) -> clients.KubernetesReader:
        reader = real_connect(kubeconfig)
        nodes, pods = reader.nodes, reader.pods
        monkeypatch.setattr(reader, "nodes", lambda: lists.append(("nodes",)) or nodes())
        monkeypatch.setattr(reader, "pods", lambda ns, sel: lists.append((ns, sel)) or pods(ns, sel))
        return reader

    monkeypatch.setattr(clients, "connect", counted)
    nvbandwidth = launcher("imex-check", "nvbandwidth-nvl72", "Succeeded", _at(13), _at(20))
    nccl = launcher("nccl-check", "nccl-nvl72", "Succeeded", _at(13), _at(17))
    verify(tmp_path, "gb200-x72-dra", [nvbandwidth, nccl], _at(60), capsys)
    assert ("nodes",) in lists
    assert ("imex-check", "job-name=nvbandwidth-nvl72-launcher") in lists
    assert sorted(set(lists)) == sorted(lists)
