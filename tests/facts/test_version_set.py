"""The tested version set: complete, consistent with each chart's kubeVersion, and each version pinned once."""

from __future__ import annotations

import ast
import re
from datetime import date
from pathlib import Path

import pytest
from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.pins import addons, ami, charts, manifests
from ultraserver.facts.pins import version_set as vs
from ultraserver.facts.pins.charts import version_tuple

PACKAGE = Path(vs.__file__).resolve().parents[2]


def test_the_set_lists_every_pin_of_every_home() -> None:
    entries = vs.version_set()
    by_kind = {kind: {(e.name, e.version, e.minor) for e in entries if e.kind == kind} for kind in {"chart", "addon"}}
    assert {e.version for e in entries if e.kind == "kubernetes"} == set(ami.RELEASE_VERSIONS)
    assert {e.version for e in entries if e.kind == "ami"} == set(ami.RELEASE_VERSIONS.values())
    assert by_kind["chart"] == {(name, c.version, "") for name, c in charts.catalog().items()}
    assert by_kind["addon"] == {
        (addon, pin.version, minor) for addon, pins in addons.ADDON_VERSIONS.items() for minor, pin in pins.items()
    }
    artifacts = {f"{e.name}:{e.version}" for e in entries if e.kind == "image"}
    assert artifacts == set(manifests.IMAGE_SOURCES)
    assert any(e.kind == "manifest" and e.version == manifests.MPI_OPERATOR_VERSION for e in entries)
    assert all(e.source and e.checked and e.home for e in entries)


def test_every_add_on_has_a_row_for_every_minor_the_toolkit_allows() -> None:
    for addon in (addons.VPC_CNI, addons.KUBE_PROXY, addons.COREDNS, addons.POD_IDENTITY_AGENT):
        assert set(addons.ADDON_VERSIONS[addon]) == set(ami.RELEASE_VERSIONS), addon
    assert set(addons.ADDON_VERSIONS[addons.NODE_MONITORING_AGENT]) == set(ami.RELEASE_VERSIONS)
    for pins in addons.ADDON_VERSIONS.values():
        for pin in pins.values():
            assert pin.verified or "UNVERIFIED" in pin.source


@pytest.mark.parametrize("minor", sorted(ami.RELEASE_VERSIONS))
def test_every_chart_of_the_set_admits_every_allowed_minor(minor: str) -> None:
    assert vs.kube_version_problems(minor) == []


def test_a_chart_whose_kube_version_excludes_the_default_fails_the_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vs, "chart_kube_versions", lambda: {"old-chart": ">=1.25.0-0 <1.35.0-0"})
    assert [str(p) for p in vs.kube_version_problems(eks_versions.DEFAULT_TEXT)] == [
        "chart old-chart kubeVersion: got '>=1.25.0-0 <1.35.0-0'; allowed: a constraint that admits Kubernetes "
        f"{eks_versions.DEFAULT_TEXT}; fix: pin a chart version that supports this minor, or use a minor the chart "
        "admits"
    ]
    assert vs.kube_version_problems("1.34") == []


@pytest.mark.parametrize(
    ("constraint", "minor", "allowed"),
    [
        (None, "1.35", True),
        (">= 1.16.0-0", "1.35", True),
        (">=1.32.0-0", "1.31", False),
        (">=1.25.0 <1.35.0", "1.35", False),
        ("<=1.35.0", "1.35", False),  # the cluster runs the pinned kubelet patch, 1.35.6
        ("~1.35.0-0", "1.35", True),
        ("~1.34.0-0", "1.35", False),
        ("^1.30.0-0", "1.36", True),
        (">=1.30.0-0 <1.33.0-0 || >=1.35.0-0", "1.34", False),
        (">=1.30.0-0 <1.33.0-0 || >=1.35.0-0", "1.36", True),
        # EKS reports v1.35.6-eks-<hash>, a pre-release: an alternative with no pre-release comparator never admits it.
        (">= 1.25.0", "1.35", False),
        ("~1.35", "1.35", False),
        (">=1.30 <1.33 || >=1.35.0-0", "1.36", True),
    ],
)
def test_kube_version_constraints(constraint: str | None, minor: str, allowed: bool) -> None:
    assert vs.kube_version_allows(constraint, minor) is allowed


@pytest.mark.parametrize(
    ("version", "status"),
    [
        ("v26.7.0", vs.SUPPORTED),
        ("26.3.1", vs.DEPRECATED),
        ("v25.10.0", vs.END_OF_SUPPORT),
        ("v25.3.4", vs.END_OF_SUPPORT),
        ("v27.1.0", vs.NO_POLICY),
    ],
)
def test_gpu_operator_support_follows_nvidias_matrix(version: str, status: str) -> None:
    assert vs.chart_support(charts.GPU_OPERATOR, version) == status


def test_status_follows_the_date() -> None:
    entry = next(e for e in vs.version_set() if e.kind == "kubernetes" and e.version == "1.34")
    assert vs.status(entry, date(2026, 12, 1)) == vs.SUPPORTED
    assert vs.status(entry, date(2026, 12, 2)).startswith(vs.DEPRECATED)
    assert vs.status(entry, date(2027, 12, 2)) == vs.END_OF_SUPPORT
    unpinned = next(e for e in vs.version_set() if e.kind == "addon" and not e.version)
    assert vs.status(unpinned, date(2026, 12, 1)) == vs.UNPINNED


def _literals(path: Path) -> list[tuple[int, str]]:
    """String constants of a module that are not docstrings (comments are not parsed)."""
    tree = ast.parse(path.read_text())
    docstrings = {
        id(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


# Literals that equal a pin today but are other facts (reviewed; each says what it is instead).
NOT_PINS = {
    ("facts/pins/charts.py", "1.35"): "the Kubernetes libraries the pinned Helm binary is built with, not the default",
    **{
        ("facts/pins/control_plane.py", minor): "a minor the rehearsal's real control plane is built for (its Go "
        "module table), not a pinned minor"
        for minor in ("1.34", "1.35", "1.36")
    },
    ("facts/pins/control_plane.py", "v0.8.0"): "kwok's own release (the rehearsal's kubelets), which shares its "
    "number with the MPI Operator's pin by chance",
    (
        "facts/pins/known_bad.py",
        "1.35",
    ): "last minor the v20261003 kernel panic affects (its release notes), not the default minor",
    (
        "facts/hardware/devices.py",
        "1.35",
    ): "DRA mode's minimum Kubernetes (the aws-dranet chart README), not the default minor",
    (
        "facts/hardware/devices.py",
        "1.36",
    ): "first minor serving extended resources through DRA DeviceClasses, not a pinned minor",
}


def _pinned_twice(entries: tuple[vs.VersionEntry, ...], package: Path = PACKAGE) -> list[str]:
    # Per-minor tables (AMI releases, add-ons) are keyed by the minors they allow: keys, not pins.
    minor_tables = {"facts/kubernetes/eks_versions.py", *(e.home for e in entries if e.minor)}
    found = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        for line, text in _literals(path):
            for e in entries:
                home = minor_tables if e.kind == "kubernetes" else {e.home}
                if relative in home or not e.version or (relative, e.version) in NOT_PINS:
                    continue
                whole = e.kind == "kubernetes" and text == e.version
                inside = e.kind != "kubernetes" and re.search(rf"(?<![\w.]){re.escape(e.version)}(?![\w.])", text)
                if whole or inside:
                    found.append(f"{relative}:{line} repeats {e.kind} {e.name} {e.version} (home: {e.home})")
    return found


def test_no_pinned_version_is_written_outside_its_home() -> None:
    assert _pinned_twice(vs.version_set()) == []


def test_the_scan_finds_a_version_written_twice(tmp_path: Path) -> None:
    copy = tmp_path / "ultraserver"
    (copy / "facts" / "pins").mkdir(parents=True)
    (copy / "facts" / "pins" / "ami.py").write_text('PIN = "1.35.6-20260714"\n')
    (copy / "builders.py").write_text('"""Docstrings may cite 1.35.6-20260714."""\nEXAMPLE = "use 1.35.6-20260714"\n')
    entry = vs.VersionEntry("ami", "x", "1.35.6-20260714", "s", date(2026, 11, 25), "facts/pins/ami.py", "1.35")
    default = vs.VersionEntry(
        "kubernetes", "Kubernetes", "1.35", "s", date(2026, 11, 25), "facts/kubernetes/eks_versions.py"
    )
    (copy / "cluster.py").write_text('VERSION = "1.35"\nNOTE = "1.35 or newer"\n')
    repeated = "cluster.py:1 repeats kubernetes Kubernetes 1.35 (home: facts/kubernetes/eks_versions.py)"
    assert _pinned_twice((default,), copy) == [repeated]
    assert _pinned_twice((entry,), copy) == ["builders.py:2 repeats ami x 1.35.6-20260714 (home: facts/pins/ami.py)"]


def test_the_newest_release_of_the_other_charts_was_rechecked_with_its_source() -> None:
    entries = {e.name: e for e in vs.version_set()}
    for name in (charts.NODE_TERMINATION_HANDLER, vs.MPI_OPERATOR):
        found = entries[name].newest
        assert found is not None and not found.newer, name
        assert found.checked >= date(2026, 11, 25) and "UNVERIFIED" in found.source, name
    assert set(vs.NEWEST_FOUND) <= set(entries)


@pytest.mark.parametrize("entry", [e for e in vs.version_set() if e.newest], ids=lambda e: e.name)
def test_a_newer_release_comes_with_why_the_pin_stays(entry: vs.VersionEntry) -> None:
    assert entry.newest is not None
    if entry.newest.newer:
        assert entry.newest.pin_kept_because
        if entry.kind == "ami":
            assert (ami.release_date_in(entry.newest.newer) or "") > (ami.release_date_in(entry.version) or "")
        elif not entry.newest.newer.startswith("app "):  # an app version stands in where the chart's was not read
            assert (version_tuple(entry.newest.newer) or ()) > (version_tuple(entry.version) or ()), entry.name
    else:
        assert entry.newest.pin_kept_because == ""
