"""``ultraserver versions --check``: stubbed AWS (botocore Stubber), and the chart registries' answers served by a
local HTTP server through the real urllib client (the OCI token challenge included); no network."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from datetime import date, datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run_main
from helpers.preflight import stubbed
from ultraserver.facts.pins import addons, ami
from ultraserver.preflight import clients as preflight_clients
from ultraserver.preflight import drift, registries

ANSWERS = Path(__file__).resolve().parent.parent / "fixtures" / "registries"
ON = date(2026, 11, 28)
TOKEN = "anonymous-token"
# What each registry path answers (the host first, as the rewritten URL carries it).
ROUTES = {
    "/helm.ngc.nvidia.com/nvidia/index.yaml": "helm.ngc.nvidia.com_nvidia_index.yaml",
    "/aws.github.io/eks-charts/index.yaml": "aws.github.io_eks-charts_index.yaml",
    "/prometheus-community.github.io/helm-charts/index.yaml": "prometheus-community.github.io_helm-charts_index.yaml",
    "/registry.k8s.io/v2/kueue/charts/kueue/tags/list": "registry.k8s.io_kueue_tags.json",
    "/registry.k8s.io/v2/dra-driver-nvidia/charts/dra-driver-nvidia-gpu/tags/list": (
        "registry.k8s.io_dra-driver_tags.json"
    ),
    "/public.ecr.aws/v2/aws-ec2/helm/aws-node-termination-handler/tags/list": "public.ecr.aws_nth_tags.json",
}
TOKEN_PATH = "/public.ecr.aws/token/"


class _Registry(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the http.server hook's name
        path, _, query = self.path.partition("?")
        if path == TOKEN_PATH:
            assert "scope=repository%3Aaws-ec2%2Fhelm%2Faws-node-termination-handler%3Apull" in query, query
            return self._send(200, json.dumps({"token": TOKEN}).encode())
        if path.startswith("/public.ecr.aws/") and self.headers.get("Authorization") != f"Bearer {TOKEN}":
            challenge = (
                'Bearer realm="https://public.ecr.aws/token/",service="public.ecr.aws",'
                'scope="repository:aws-ec2/helm/aws-node-termination-handler:pull"'
            )
            return self._send(401, b"{}", {"WWW-Authenticate": challenge})
        if path not in ROUTES:
            return self._send(404, b"not found")
        return self._send(200, (ANSWERS / ROUTES[path]).read_bytes())

    def _send(self, code: int, body: bytes, headers: Mapping[str, str] | None = None) -> None:
        self.send_response(code)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def fetch() -> Iterator[registries.Fetch]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Registry)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    get = registries.http_get  # the real client, kept before a test puts this fetch in its place
    yield lambda url, headers: get(url.replace("https://", base), headers)
    server.shutdown()
    server.server_close()


def _day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


CLUSTER_VERSIONS = {
    "clusterVersions": [
        {"clusterVersion": "1.34", "endOfStandardSupportDate": _day("2026-12-02")},
        {"clusterVersion": "1.35", "endOfStandardSupportDate": _day("2027-03-27")},
        {"clusterVersion": "1.36"},
        {"clusterVersion": "1.37"},
    ]
}


def eks_stub(minor: str, offered: Mapping[str, list[str]] | None = None) -> Any:
    """EKS answering DescribeClusterVersions, then DescribeAddonVersions for each add-on pinned on the minor."""
    eks, stub = stubbed("eks")
    stub.add_response("describe_cluster_versions", CLUSTER_VERSIONS, {"includeAll": True})
    for addon in sorted(addons.ADDON_VERSIONS):
        pin = addons.pinned_version(addon, minor)
        if pin:
            versions = (offered or {}).get(addon, [pin])
            answer = {"addons": [{"addonName": addon, "addonVersions": [{"addonVersion": v} for v in versions]}]}
            stub.add_response("describe_addon_versions", answer, {"addonName": addon, "kubernetesVersion": minor})
    return eks


def ssm_stub(minor: str, release: str) -> Any:
    ssm, stub = stubbed("ssm")
    name = f"/aws/service/eks/optimized-ami/{minor}/amazon-linux-2023/arm64/nvidia/recommended/release_version"
    stub.add_response("get_parameter", {"Parameter": {"Name": name, "Value": release}}, {"Name": name})
    return ssm


def by_name(found: list[drift.Drift]) -> dict[str, drift.Drift]:
    return {d.name: d for d in found}


def test_the_recommended_ami_parameter_is_the_ssm_public_path() -> None:
    assert drift.recommended_parameter("1.35") == (
        "/aws/service/eks/optimized-ami/1.35/amazon-linux-2023/arm64/nvidia/recommended/release_version"
    )


def test_each_pin_gets_the_newest_upstream_release_and_a_verdict(fetch: registries.Fetch) -> None:
    found = drift.check(ssm_stub("1.35", "1.35.8-20261012"), eks_stub("1.35"), fetch, "1.35", ON, 90)
    rows = by_name(found)
    assert (rows["Kubernetes"].newest, rows["Kubernetes"].verdict) == ("1.37", drift.NEWER)
    assert "2027-03-27" in rows["Kubernetes"].detail
    assert (rows[ami.AMI_TYPE].newest, rows[ami.AMI_TYPE].verdict) == ("1.35.8-20261012", drift.NEWER)
    charts_found = {d.name: (d.newest, d.verdict) for d in found if d.kind == "chart"}
    assert charts_found == {
        "aws-dranet": ("1.0.0", drift.CURRENT),
        "aws-efa-k8s-device-plugin": ("v0.5.30", drift.CURRENT),
        "aws-node-termination-handler": ("0.27.6", drift.CURRENT),
        "dra-driver-nvidia-gpu": ("0.5.1", drift.NEWER),
        "gpu-operator": ("v26.7.2", drift.NEWER),
        "kube-prometheus-stack": ("93.9.0", drift.NEWER),
        "kueue": ("0.20.5", drift.NEWER),  # 0.21.0-rc.3 is a pre-release
    }
    assert all(d.verdict == drift.CURRENT for d in found if d.kind == "addon")
    assert not drift.failed(found)


def test_support_ending_within_the_window_fails_with_days_and_price(fetch: registries.Fetch) -> None:
    found = drift.check(ssm_stub("1.34", "1.34.9-20260714"), eks_stub("1.34"), fetch, "1.34", ON, 90)
    row = by_name(found)["Kubernetes"]
    assert row.failing and row.verdict == "end of support in 4 days"
    assert "$0.60 per cluster-hour" in row.detail and drift.failed(found)


def test_a_known_bad_recommended_release_is_newer_but_not_to_adopt(fetch: registries.Fetch) -> None:
    row = drift.ami_drift(ssm_stub("1.35", "1.35.7-20261003"), "1.35")
    assert row.verdict == drift.NEWER and not row.failing
    assert "known bad" in row.detail and "keep the pin" in row.detail


def test_a_pin_that_became_known_bad_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    # A toolkit release that pinned v20261003 before #2845 was known.
    monkeypatch.setitem(ami.RELEASE_VERSIONS, "1.35", "1.35.7-20261003")
    row = drift.ami_drift(ssm_stub("1.35", "1.35.8-20261012"), "1.35")
    assert (row.verdict, row.failing) == (drift.KNOWN_BAD, True) and "#2845" in row.detail


def test_an_addon_pin_eks_no_longer_offers_fails(fetch: registries.Fetch) -> None:
    addon = next(a for a in sorted(addons.ADDON_VERSIONS) if addons.pinned_version(a, "1.35"))
    eks = eks_stub("1.35", {addon: ["v9.9.9-eksbuild.1", "v9.10.0-eksbuild.2"]})
    found = [d for d in drift.check(ssm_stub("1.35", "1.35.6-20260714"), eks, fetch, "1.35", ON, 90) if d.name == addon]
    assert found[0].verdict == drift.NOT_OFFERED and found[0].newest == "v9.10.0-eksbuild.2" and found[0].failing


def test_an_unreachable_registry_is_no_answer_not_a_crash() -> None:
    def refuse(url: str, headers: Mapping[str, str]) -> bytes:
        raise OSError("connection refused")

    assert {d.verdict for d in drift.chart_drift(refuse)} == {drift.NO_ANSWER}


def test_the_command_prints_verdicts_and_exits_1_on_failing_support(
    fetch: registries.Fetch, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(registries, "http_get", fetch)
    clients = preflight_clients.PreflightClients(
        ec2=None, ssm=ssm_stub("1.34", "1.34.9-20260714"), eks=eks_stub("1.34"), service_quotas=None,
        resource_groups=None, sts=None,
    )  # fmt: skip
    monkeypatch.setattr(preflight_clients, "make_clients", lambda *_: clients)
    out = tmp_path / "check.json"
    result = run_main(
        "versions", "--check", "--kubernetes-version", "1.34", "--region", "us-east-1",
        "--now", "2026-11-28T00:00:00Z", "--json", str(out),
    )  # fmt: skip
    assert result.code == 1, result.stderr
    assert "FAIL kubernetes" in result.stdout and "end of support in 4 days" in result.stdout
    assert "gpu-operator" in result.stdout and "newest v26.7.2" in result.stdout
    assert json.loads(out.read_text())["problems"] == ["Kubernetes"]
