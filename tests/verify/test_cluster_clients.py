"""The real ClusterReader over the Kubernetes client: plain records, one-line errors, kubeconfig handling."""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from ultraserver.verify.clients import ClusterError, KubeconfigError, KubernetesReader, connect


class ApiException(Exception):
    """Shaped like kubernetes.client.ApiException: status and reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(f"({status})\nReason: {reason}\n")
        self.status, self.reason = status, reason


READY_SINCE = datetime(2026, 3, 2, 12, 5, tzinfo=timezone.utc)


def conditions(ready: str) -> list[SimpleNamespace]:
    return [
        SimpleNamespace(type="MemoryPressure", status="False", last_transition_time=None),
        SimpleNamespace(type="Ready", status=ready, last_transition_time=READY_SINCE),
    ]


class FakeCore:
    def list_node(self, **kwargs: Any) -> Any:
        node = SimpleNamespace(
            metadata=SimpleNamespace(name="n1", labels={"a": "b"}, annotations=None),
            spec=SimpleNamespace(provider_id="aws:///us-east-1-dfw-2a/i-0123456789abcdef0"),
            status=SimpleNamespace(allocatable={"nvidia.com/gpu": "4"}, conditions=conditions("True")),
        )
        return SimpleNamespace(items=[node])

    def list_namespaced_pod(self, namespace: str, label_selector: str = "", **kwargs: Any) -> Any:
        pod = SimpleNamespace(
            metadata=SimpleNamespace(
                name="p", namespace=namespace, labels=None, creation_timestamp=datetime(2026, 1, 1, tzinfo=timezone.utc)
            ),
            spec=SimpleNamespace(node_name="n1"),
            status=SimpleNamespace(phase="Succeeded", conditions=None, container_statuses=None),
        )
        return SimpleNamespace(items=[pod])

    def read_namespaced_pod_log(self, name: str, namespace: str, **kwargs: Any) -> str:
        raise ApiException(403, "Forbidden")


class FakeCustom:
    def __init__(self) -> None:
        self.versions: list[str] = []

    def list_cluster_custom_object(self, group: str, version: str, plural: str, **kwargs: Any) -> Any:
        self.versions.append(version)
        if version != "v1beta1":
            raise ApiException(404, "Not Found")
        return {"items": [{"metadata": {"name": "compute-domain-daemon.nvidia.com"}}]}


def test_reader_returns_plain_records_and_falls_back_to_the_served_deviceclass_version() -> None:
    custom = FakeCustom()
    reader = KubernetesReader(FakeCore(), custom, "kubeconfig k")
    (node,) = reader.nodes()
    assert (node.name, dict(node.allocatable), node.ready) == ("n1", {"nvidia.com/gpu": "4"}, True)
    assert node.ready_changed == READY_SINCE  # the Ready condition's lastTransitionTime (status reads it)
    assert node.provider_id == "aws:///us-east-1-dfw-2a/i-0123456789abcdef0"  # the remediation packet's instance
    (pod,) = reader.pods("ns", "x=y")
    assert (pod.node_name, pod.phase, pod.ready, pod.created) == ("n1", "Succeeded", False, "2026-01-01T00:00:00+00:00")
    assert reader.device_classes() == ["compute-domain-daemon.nvidia.com"]
    assert custom.versions == ["v1", "v1beta2", "v1beta1"]


def test_api_errors_become_one_line_cluster_errors() -> None:
    reader = KubernetesReader(FakeCore(), FakeCustom(), "kubeconfig k")
    with pytest.raises(
        ClusterError, match=r"^reading the log of pod ns/p through kubeconfig k failed: HTTP 403 Forbidden$"
    ):
        reader.pod_log("ns", "p")


def test_connect_needs_the_kubernetes_client(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "kubernetes", None)
    with pytest.raises(KubeconfigError, match="pip install 'kubernetes>=31,<36'"):
        connect("/nonexistent")


def test_connect_rejects_a_malformed_kubeconfig_file(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_text("clusters: [\n")
    with pytest.raises(KubeconfigError, match=f"--kubeconfig '{path}': got text that is not valid YAML"):
        connect(str(path))


def test_connect_reads_a_kubeconfig_file_bounded_and_strictly(tmp_path: Path) -> None:
    path = tmp_path / "kubeconfig"
    path.write_bytes(b"clusters: []\nusers: [caf\xe9]\n")
    with pytest.raises(KubeconfigError, match=f"--kubeconfig '{path}': got text that is not UTF-8 at byte 24"):
        connect(str(path))
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(KubeconfigError, match="got aliases that expand this value to more than 100,000 YAML nodes"):
        connect(str(path))


def test_connect_accepts_a_kubeconfig_document() -> None:
    document = (
        '{"apiVersion": "v1", "kind": "Config", "current-context": "c", '
        '"clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:9"}}], '
        '"users": [{"name": "u", "user": {"token": "t"}}], '
        '"contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}'
    )
    assert isinstance(connect(document), KubernetesReader)


HANGING_PLUGIN = """apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:9"}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
users:
- name: u
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: sleep
      args: ["30"]
"""


@pytest.mark.parametrize("command", ["verify", "status"])
def test_an_exec_plugin_that_never_answers_ends_the_command_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    """`aws eks get-token` waiting for an SSO login hung verify and status with no output (the client waits without
    a limit)."""
    from datetime import timedelta

    from helpers.capacity import clients, queue_current, reservation
    from helpers.cli import run_main
    from helpers.preflight import stubbed
    from ultraserver.preflight import clients as preflight_clients
    from ultraserver.verify import exec_plugin

    start = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)  # the shipped gb200-x72 block
    ec2, stub = stubbed("ec2")
    queue_current(stub, reservation("cr-0123456789abcdef0", "active", start, start + timedelta(days=14), "cb-0"))
    monkeypatch.setattr(preflight_clients, "make_clients", lambda *_: clients(ec2))
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(HANGING_PLUGIN)
    monkeypatch.setattr(exec_plugin, "EXEC_PLUGIN_SECONDS", 1)
    now = ["--now", "2026-12-03T12:00:00Z"] if command == "status" else []
    run = run_main(command, "--stack", "gb200-x72", "--kubeconfig", str(kubeconfig), *now)
    said = run.stdout + run.stderr
    assert run.code in (2, 4), said
    assert "the exec plugin of user 'u' (`sleep 30`) gave no credentials within 1 s" in said
    assert "aws sso login" in said and "internal error" not in said


def test_the_exec_plugin_of_a_merged_kubeconfig_list_is_the_current_contexts(tmp_path: Path) -> None:
    import yaml
    from ultraserver.verify.exec_plugin import check_exec_plugin, merged

    first = {"current-context": "x", "contexts": [], "users": []}
    second = yaml.safe_load(HANGING_PLUGIN)
    second["users"][0]["user"]["exec"]["command"] = "true"
    document = merged([first, second])
    assert document["current-context"] == "x" and check_exec_plugin(document, "kubeconfig") is None
    assert check_exec_plugin({"users": [{"name": "u", "user": {"token": "t"}}]}, "kubeconfig") is None
