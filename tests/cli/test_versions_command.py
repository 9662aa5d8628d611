"""`ultraserver versions`: the tested version set with each entry's support status on the given date."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run_main
from ultraserver.facts.pins import ami, charts
from ultraserver.facts.pins import version_set as vs


def test_prints_every_kind_with_its_status_on_the_date(tmp_path: Path) -> None:
    out = tmp_path / "versions.json"
    result = run_main("versions", "--now", "2026-11-25T00:00:00Z", "--json", str(out))
    assert result.code == 0, result.stderr
    assert "support status on 2026-11-25" in result.stdout
    for kind in ("kubernetes", "ami", "chart", "addon", "image", "manifest"):
        assert f"\n{kind}\n" in result.stdout
    document = json.loads(out.read_text())
    rows = {(r["kind"], r["name"], r["minor"]): r for r in document["entries"]}
    image = rows[("ami", f"{ami.AMI_TYPE} (driver {ami.NVIDIA_DRIVER})", "1.35")]
    assert image["version"] == ami.RELEASE_VERSIONS["1.35"]
    gpu_operator = rows[("chart", charts.GPU_OPERATOR, "")]
    assert gpu_operator["status"] == vs.chart_support(charts.GPU_OPERATOR, charts.pinned(charts.GPU_OPERATOR).version)
    assert document["problems"] == []


def test_the_date_moves_a_minor_into_extended_support() -> None:
    before = run_main("versions", "--now", "2026-12-01T00:00:00Z").stdout
    after = run_main("versions", "--now", "2026-12-02T00:00:00Z").stdout
    line = next(x for x in before.splitlines() if x.strip().startswith("Kubernetes") and " 1.34 " in x)
    assert "supported" in line and "extended" not in line
    line = next(x for x in after.splitlines() if x.strip().startswith("Kubernetes") and " 1.34 " in x)
    assert "paid extended support" in line


def test_a_minor_a_chart_excludes_fails_with_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vs, "chart_kube_versions", lambda: {"old-chart": "<1.35.0-0"})
    result = run_main("versions")
    assert result.code == 1
    assert "FAIL  chart old-chart kubeVersion  <1.35.0-0\n" in result.stdout
    assert "allowed: a constraint that admits Kubernetes 1.35" in result.stdout


@pytest.mark.parametrize("args", [["--kubernetes-version", "latest"], ["--now", "tomorrow"]])
def test_bad_arguments_exit_2(args: list[str]) -> None:
    result = run_main("versions", *args)
    assert result.code == 2 and "Traceback" not in result.stderr


def test_the_plan_names_the_stack_minor_and_what_is_not_supported(tmp_path: Path) -> None:
    out = tmp_path / "plan.json"
    result = run_main("plan", "--stack", "gb200-x72", "--now", "2026-12-02T00:00:00Z", "--json", str(out))
    assert result.code == 0, result.stderr
    note = next(x for x in result.stdout.splitlines() if x.startswith("Version set on 2026-12-02"))
    assert "Kubernetes 1.35 supported" in note
    statuses = {(r["kind"], r["name"]): r["status"] for r in json.loads(out.read_text())["versions"]}
    assert statuses[("kubernetes", "Kubernetes (default)")].startswith(vs.SUPPORTED)
    late = [f"{name} " for (kind, name), s in statuses.items() if s.startswith((vs.DEPRECATED, vs.END_OF_SUPPORT))]
    assert all(name in note for name in late)
    assert {kind for kind, _ in statuses} == {"kubernetes", "ami", "chart", "addon", "image", "manifest"}


def test_a_newer_release_found_upstream_is_listed_with_why_the_pin_stays(tmp_path: Path) -> None:
    out = tmp_path / "versions.json"
    result = run_main("versions", "--json", str(out))
    rows = {r["name"].removesuffix(" (default)"): r for r in json.loads(out.read_text())["entries"] if "newest" in r}
    assert set(rows) == set(vs.NEWEST_FOUND)
    for name, found in vs.NEWEST_FOUND.items():
        row = rows[name]
        assert (row["newestSource"], row["pinKeptBecause"]) == (found.source, found.pin_kept_because)
        assert row["newest"] == (found.newer or row["version"])
        shown = f"newer upstream: {found.newer} (not adopted: {found.pin_kept_because})"
        assert (shown in " ".join(result.stdout.split())) is bool(found.newer)  # wrapped below its row
    rows = [line for line in result.stdout.splitlines() if line.startswith("  ") and not line.startswith("    ")]
    assert rows and " ".join(result.stdout.split()).count("upstream: ") == len(rows)  # every pin says what upstream has


def test_the_table_keeps_its_columns_when_piped() -> None:
    """Each kind's rows share their columns (an AMI row was 340 characters wide piped); sources and notes wrap
    below their row."""
    lines = run_main("versions").stdout.splitlines()
    assert max(map(len, lines)) <= 160
    ami = [line for line in lines if line.startswith("  AL2023_ARM_64_NVIDIA")]
    assert ami and len({line.index(" 1.3") for line in ami}) == 1


def test_supported_never_stands_bare_beside_an_unverified_source(tmp_path: Path) -> None:
    out = tmp_path / "versions.json"
    assert run_main("versions", "--json", str(out)).code in (0, 1)
    entries = json.loads(out.read_text())["entries"]
    doubtful = [r for r in entries if "unverified" in r["source"].lower() and r["status"].startswith(vs.SUPPORTED)]
    assert doubtful, "the set has unverified sources to check"
    bare = [f"{r['name']} {r['minor']}: {r['status']}" for r in doubtful if r["status"] == vs.SUPPORTED]
    assert bare == []
    assert all("unverified" in r["status"] for r in doubtful)
    verified = [r for r in entries if r["kind"] == "kubernetes" and "unverified" not in r["source"].lower()]
    assert verified and all("unverified" not in r["status"] for r in verified)
