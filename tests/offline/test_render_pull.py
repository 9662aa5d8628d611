"""`plan --render` without `--charts`: the real Helm pulls each release's chart at its pin (offline/helm_template.py
``pull_charts``) from a chart mirror on the loopback address (`kubernetes.chartMirror`): a Helm repository indexed
by `helm repo index`, or an OCI registry the charts were pushed to by `helm push` (tests/helpers/chart_servers.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from helpers.chart_servers import chart_repository, helm_home, loopback_authority, oci_registry
from helpers.cli import Run, copy_project, run_main
from helpers.render import helm_and_charts
from ultraserver.rehearse.tls import Authority

STACK = "gb200-x72"
PINNED = {
    "dra-driver-nvidia-gpu": "0.4.1",
    "aws-efa-k8s-device-plugin": "v0.5.30",
    "gpu-operator": "v26.7.0",
    "kueue": "0.19.2",
}
"""The charts of the stack's releases at their pins (a test of the plan keeps these, facts/pins/charts.py)."""


@pytest.fixture
def helm(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[tuple[Path, list[Path], Authority]]:
    """Helm, the stack's packaged charts, and a CA Helm trusts (its own homes in tmp_path)."""
    binary, folder = helm_and_charts()
    authority = loopback_authority()
    helm_home(monkeypatch, tmp_path / "helm", authority)
    yield binary, [folder / f"{name}-{version}.tgz" for name, version in PINNED.items()], authority


def render(tmp_path: Path, kubernetes: str, top: str = "") -> tuple[Run, Path]:
    """`plan --render` of the stack with ``kubernetes`` lines added to its kubernetes section (``top``: to its
    config)."""
    project = copy_project(tmp_path / "project")
    stack_file = project / "stacks" / f"Pulumi.{STACK}.yaml"
    document = yaml.safe_load(stack_file.read_text())
    assert "ultraserver-eks:kubernetes" not in document["config"], "the lines below would make a second section"
    stack_file.write_text(stack_file.read_text() + top + "  ultraserver-eks:kubernetes:\n" + kubernetes)
    out = tmp_path / "out"
    return run_main("plan", "--stack", STACK, "--project-dir", str(project), "--render", str(out)), out


def assert_rendered(run: Run, out: Path) -> None:
    assert run.code == 0, run.stdout[-3000:] + run.stderr
    assert "Rendered manifests: 4 release(s)" in run.stdout
    for name, version in PINNED.items():
        # Helm labels what it rendered with the chart's name and version (helm.sh/chart: <name>-<version>).
        manifests = "".join(p.read_text() for p in out.glob("*.yaml"))
        assert f"helm.sh/chart: {name}-{version}" in manifests or f"# Source: {name}/" in manifests, name


def test_the_charts_are_pulled_at_their_pins_from_a_helm_repository_mirror(
    helm: tuple[Path, list[Path], Authority], tmp_path: Path
) -> None:
    binary, charts, authority = helm
    with chart_repository(binary, charts, authority) as (url, server):
        run, out = render(tmp_path, f"    chartMirror: {url}\n")
    assert_rendered(run, out)
    # Each chart was fetched from the mirror, at its pin, once.
    fetched = sorted(path for method, path in server.seen if method == "GET" and path.endswith(".tgz"))
    assert fetched == sorted(f"/charts/{c.name}" for c in charts)
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{STACK}-k8s-{r}.yaml" for r in ("dra-driver", "efa-device-plugin", "gpu-operator", "kueue")
    )


def test_the_charts_are_pulled_at_their_pins_from_an_oci_registry_mirror(
    helm: tuple[Path, list[Path], Authority], tmp_path: Path
) -> None:
    binary, charts, authority = helm
    with oci_registry(binary, charts, authority) as (url, server):
        run, out = render(tmp_path, f"    chartMirror: {url}\n")
    assert_rendered(run, out)
    # The chart layers pulled are the packaged charts, byte for byte (their sha256 is the layer's digest).
    pulled = {path.rpartition("/")[2] for method, path in server.seen if method == "GET" and "/blobs/" in path}
    assert {f"sha256:{hashlib.sha256(c.read_bytes()).hexdigest()}" for c in charts} <= pulled
    assert {f"/v2/charts/{name}/manifests/{version}" for name, version in PINNED.items()} <= {p for _, p in server.seen}


def assert_refused(run: Run, out: Path, *said: str) -> None:
    """Exit 2 with the Problem, no traceback, and no render folder left behind."""
    assert run.code == 2, run.stdout[-2000:] + run.stderr
    assert "Traceback" not in run.stderr
    assert "--render" in run.stderr and "kubernetes.chartMirror" in run.stderr
    for text in said:
        assert text in run.stderr, run.stderr
    assert not out.exists()


def test_a_version_the_mirror_lacks_exits_2_and_writes_nothing(
    helm: tuple[Path, list[Path], Authority], tmp_path: Path
) -> None:
    binary, charts, authority = helm
    with chart_repository(binary, charts, authority) as (url, _):
        run, out = render(
            tmp_path,
            f"    chartMirror: {url}\n    kueue:\n      version: 0.19.3\n",
            "  ultraserver-eks:acceptUntestedVersions: true\n",
        )
    assert_refused(run, out, "helm pull kueue --repo", "chart kueue 0.19.3")


def test_an_unreachable_mirror_exits_2_and_writes_nothing(
    helm: tuple[Path, list[Path], Authority], tmp_path: Path
) -> None:
    with chart_repository(helm[0], helm[1], helm[2]) as (url, _):
        pass  # the port is closed again: nothing answers there
    run, out = render(tmp_path, f"    chartMirror: {url}\n")
    assert_refused(run, out, "helm pull", "failed")


def test_a_mirror_whose_certificate_helm_does_not_trust_exits_2(
    helm: tuple[Path, list[Path], Authority], tmp_path: Path
) -> None:
    binary, charts, _ = helm
    with oci_registry(binary, charts, helm[2]) as (url, _), pytest.MonkeyPatch.context() as patch:
        helm_home(patch, tmp_path / "other", loopback_authority())  # Helm now trusts another CA only
        run, out = render(tmp_path, f"    chartMirror: {url}\n")
    assert_refused(run, out, "certificate")
