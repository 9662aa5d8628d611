"""The in-cluster scripts' own connection (the pod's service account: KUBERNETES_SERVICE_HOST/PORT, the token and
ca.crt) against the emulated API behind an HTTPS front with a CA of its own (rehearse/tls.py)."""

from __future__ import annotations

import json
import ssl
import urllib.error
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from ultraserver.incluster import drain_main
from ultraserver.incluster import drift as drift_script
from ultraserver.incluster.drain import GROUP_LABEL, RECLAIM_TAINT, Block, run_once
from ultraserver.rehearse.emulator import Emulator
from ultraserver.rehearse.tls import TlsFront, new_authority

GROUP = {"name": "nvl72", "ultraservers": 1, "instances": 18, "nodes": 2, "gpus": 4, "efa": 4}
NOW = datetime(2026, 12, 2, 12, 0, tzinfo=timezone.utc)


def node(name: str, efa: str = "4") -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {GROUP_LABEL: "nvl72", "nvidia.com/gpu.clique": "u.1"},
            "creationTimestamp": "2026-12-01T12:00:00Z",
        },
        "spec": {},
        "status": {
            "allocatable": {"nvidia.com/gpu": "4", "vpc.amazonaws.com/efa": efa},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


@pytest.fixture
def api() -> Iterator[tuple[Emulator, TlsFront]]:
    with Emulator() as emulator, TlsFront(emulator.url) as front:
        yield emulator, front


def drift(folder: Path, env: dict[str, str]) -> int:
    """The drift script's run as its main() does it, with the service account in ``folder``."""
    return drift_script.check([GROUP], NOW, lambda: drift_script.list_nodes(*drift_script.in_cluster(str(folder), env)))


def test_the_drift_script_reads_the_nodes_with_the_token_over_verified_tls(
    api: tuple[Emulator, TlsFront], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    emulator, front = api
    emulator.put([node("a"), node("b")])
    env = front.service_account(tmp_path / "serviceaccount")
    assert drift(tmp_path / "serviceaccount", env) == 0
    assert "no drift: 2 GPU nodes" in capsys.readouterr().out
    assert front.seen == [("GET", "/api/v1/nodes", True)]
    # It does its job through that path: a node that lost EFA devices fails the Job.
    emulator.put([node("b", efa="2")])
    assert drift(tmp_path / "serviceaccount", env) == 1
    assert "DRIFT node b" in capsys.readouterr().out


def test_a_wrong_token_is_refused_by_the_server(api: tuple[Emulator, TlsFront], tmp_path: Path) -> None:
    _, front = api
    env = front.service_account(tmp_path)
    (tmp_path / "token").write_text("someone-else")
    with pytest.raises(urllib.error.HTTPError) as refused:
        drift(tmp_path, env)
    assert refused.value.code == 401
    assert front.seen == [("GET", "/api/v1/nodes", False)]


def test_a_server_certificate_from_another_ca_is_not_trusted(api: tuple[Emulator, TlsFront], tmp_path: Path) -> None:
    _, front = api
    env = front.service_account(tmp_path)
    (tmp_path / "ca.crt").write_bytes(new_authority().ca)
    with pytest.raises(urllib.error.URLError) as refused:
        drift(tmp_path, env)
    assert isinstance(refused.value.reason, ssl.SSLCertVerificationError)
    with pytest.raises(urllib.error.URLError) as refused:
        drain_main.StdlibApi(str(tmp_path), env).get("/api/v1/nodes")
    assert isinstance(refused.value.reason, ssl.SSLCertVerificationError)
    assert front.seen == []  # nothing was sent to a server the pod could not verify


def test_the_drain_cordons_and_taints_through_the_pods_service_account(
    api: tuple[Emulator, TlsFront], tmp_path: Path
) -> None:
    emulator, front = api
    emulator.put([node("a"), node("b")])
    env = front.service_account(tmp_path)
    # A block scaled down 90 minutes before its end, 10 minutes from now: past the cut-off, so its nodes are cordoned
    # and tainted.
    block = Block("nvl72", ("cr-0123456789abcdef0",), NOW - timedelta(days=1), NOW + timedelta(minutes=100), 90)
    actions = run_once(drain_main.StdlibApi(str(tmp_path), env), [block], NOW)
    assert sorted(a["name"] for a in actions if a["kind"] == "cordon") == ["a", "b"]
    stored = emulator.get("v1/nodes", None, "a")
    assert stored["spec"]["unschedulable"] is True
    assert RECLAIM_TAINT in json.dumps(stored["spec"]["taints"])
    assert ("PATCH", "/api/v1/nodes/a", True) in front.seen and all(authorized for *_, authorized in front.seen)
