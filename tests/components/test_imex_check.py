"""IMEX check inputs and reading the verdict back from the launcher pod."""

from __future__ import annotations

import sys
import types
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from helpers.nvbandwidth_samples import matrix_values, nvbandwidth_log
from ultraserver.components.imex_check import ImexCheckArgs, job_args
from ultraserver.config.views import ImexTarget
from ultraserver.problems import ConfigError
from ultraserver.verify.imex import CheckError, core_api, launcher_log, validate, validate_with
from ultraserver.verify.nvbandwidth import BandwidthOutputError


def pod(name: str, phase: str, minute: int) -> SimpleNamespace:
    """A V1Pod look-alike with the fields the reader uses."""
    return SimpleNamespace(
        metadata=SimpleNamespace(name=name, creation_timestamp=datetime(2025, 1, 1, 0, minute, tzinfo=timezone.utc)),
        status=SimpleNamespace(phase=phase),
    )


class FakeCoreApi:
    """CoreV1Api stand-in serving fixed pods and logs, remembering the selector it was asked for."""

    def __init__(self, pods: list[SimpleNamespace], logs: dict[str, str]) -> None:
        self.pods = pods
        self.logs = logs
        self.selectors: list[tuple[str, str]] = []

    def list_namespaced_pod(self, namespace: str, label_selector: str = "") -> Any:
        self.selectors.append((namespace, label_selector))
        return SimpleNamespace(items=self.pods)

    def read_namespaced_pod_log(self, name: str, namespace: str) -> str:
        return self.logs[name]


def test_job_args_one_job_per_ultraserver() -> None:
    args = ImexCheckArgs(
        targets=[ImexTarget("us0", {"us": "0"}, 9), ImexTarget("us1", {"us": "1"}, 18)],
        nodes=4,
        launcher_node_selector={"role": "system"},
    )
    jobs = job_args(args)
    assert [(j.name, j.max_nodes, dict(j.worker_node_selector)) for j in jobs] == [
        ("nvbandwidth-us0", 9, {"us": "0"}),
        ("nvbandwidth-us1", 18, {"us": "1"}),
    ]
    assert all(j.nodes == 4 and j.namespace == "imex-check" for j in jobs)
    assert all(dict(j.launcher_node_selector) == {"role": "system"} for j in jobs)


def test_job_args_reports_every_problem() -> None:
    args = ImexCheckArgs(
        targets=[ImexTarget("US_0", {}), ImexTarget("a", {}), ImexTarget("a", {})],
        namespace="Bad",
        threshold_gbps=-1,
    )
    with pytest.raises(ConfigError) as err:
        job_args(args)
    text = str(err.value)
    assert "imex_check.namespace: 'Bad'" in text
    assert "UltraServer name 'US_0'" in text
    assert "names a appear more than once" in text
    assert "imex_check.threshold_gbps: -1" in text


def test_launcher_log_reads_the_newest_finished_launcher() -> None:
    api = FakeCoreApi(
        [pod("old", "Failed", 1), pod("new", "Succeeded", 5)],
        {"old": "first try", "new": "second try"},
    )
    assert launcher_log(api, "imex-check", "nvbandwidth-us0") == "second try"
    assert api.selectors == [("imex-check", "job-name=nvbandwidth-us0-launcher")]


def test_launcher_log_missing_pod_is_a_clear_error() -> None:
    with pytest.raises(
        CheckError, match="no launcher pod for MPIJob 'nvbandwidth-us0'.*kubectl -n imex-check get mpijob"
    ):
        launcher_log(FakeCoreApi([], {}), "imex-check", "nvbandwidth-us0")


def test_launcher_still_running_is_a_clear_error() -> None:
    with pytest.raises(CheckError, match="is Running; the check has not finished"):
        launcher_log(FakeCoreApi([pod("l", "Running", 1)], {}), "imex-check", "job")


def test_validate_with_judges_the_log() -> None:
    good = FakeCoreApi([pod("l", "Succeeded", 1)], {"l": nvbandwidth_log(matrix_values())})
    assert validate_with(good, "imex-check", "job").passed
    slow = FakeCoreApi([pod("l", "Succeeded", 1)], {"l": nvbandwidth_log(matrix_values(cross=500.0))})
    result = validate_with(slow, "imex-check", "job", threshold_gbps=700.0)
    assert not result.passed and len(result.failures) == 32
    assert validate_with(slow, "imex-check", "job", threshold_gbps=400.0).passed


def test_validate_with_garbage_log_is_a_parse_error() -> None:
    api = FakeCoreApi([pod("l", "Failed", 1)], {"l": "mpirun: connection refused\n"})
    with pytest.raises(BandwidthOutputError, match="connection refused"):
        validate_with(api, "imex-check", "job")


def test_missing_kubernetes_client_names_the_requirement(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "kubernetes", None)
    with pytest.raises(CheckError, match="pip install 'kubernetes>=31,<36'"):
        validate("/nonexistent", "imex-check", "job", 700.0)


@pytest.fixture
def fake_kubernetes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    """A stand-in `kubernetes` package recording how the client was built."""
    calls: list[tuple[str, Any]] = []

    def from_file(config_file: str) -> str:
        calls.append(("file", config_file))
        return "client"

    def from_dict(document: dict) -> str:
        calls.append(("dict", document))
        return "client"

    module = types.ModuleType("kubernetes")
    module.config = SimpleNamespace(  # type: ignore[attr-defined]
        new_client_from_config=from_file, new_client_from_config_dict=from_dict
    )
    module.client = SimpleNamespace(CoreV1Api=lambda client: ("api", client))  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "kubernetes", module)
    return calls


def test_core_api_accepts_a_kubeconfig_file(tmp_path: Path, fake_kubernetes: list) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text("clusters: []\n")
    assert core_api(str(path)) == ("api", "client")
    assert fake_kubernetes == [("file", str(path))]


def test_core_api_accepts_a_kubeconfig_document(fake_kubernetes: list) -> None:
    core_api('{"apiVersion": "v1", "clusters": [], "users": []}')
    assert fake_kubernetes == [("dict", {"apiVersion": "v1", "clusters": [], "users": []})]


def test_core_api_rejects_something_else(fake_kubernetes: list) -> None:
    with pytest.raises(CheckError, match="neither an existing file nor a kubeconfig document"):
        core_api("/no/such/file")
