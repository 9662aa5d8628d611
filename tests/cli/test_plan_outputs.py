"""`ultraserver --version`, and the files `plan` writes: text graphs only, one HTML page."""

from __future__ import annotations

import io
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from helpers.cli import run_main
from helpers.stacks import ROOT
from ultraserver import cli
from ultraserver.cli import parser as cli_parser
from ultraserver.cli.plan import stack_warnings
from ultraserver.problems import format_problems


def test_version_comes_from_the_package_metadata() -> None:
    result = run_main("--version")
    assert result.code == 0
    assert result.stdout.strip() == f"ultraserver {version('ultraserver')}"


def test_only_version_reads_the_package_metadata(monkeypatch: pytest.MonkeyPatch) -> None:
    # The metadata lookup scans every installed distribution (about 15 ms): other commands must not pay for it.
    def unread() -> str:
        raise AssertionError("the package metadata was read")

    monkeypatch.setattr(cli_parser, "package_version", unread)
    assert cli.build_parser().parse_args(["plan", "--stack", "gb200-x72"]).stack == "gb200-x72"


@pytest.mark.parametrize(
    ("flag", "name", "says"),
    [
        ("--graph", "plan.png", "--graph writes Mermaid or DOT text, not an image"),
        ("--graph", "plan.PNG", "--graph writes Mermaid or DOT text, not an image"),
        ("--graph", "plan.svg", "allowed: a file ending in .mmd, .mermaid, .md, .dot, .gv"),
        ("--graph", "plan", "allowed: a file ending in"),
        ("--html", "report.txt", "allowed: a file ending in .html, .htm"),
        ("--html", "report.png", "--html writes one self-contained HTML page"),
    ],
)
def test_unknown_extensions_exit_2_with_one_line_and_write_nothing(
    tmp_path: Path, flag: str, name: str, says: str
) -> None:
    target = tmp_path / name
    result = run_main("plan", "--stack", "gb200-x72", flag, str(target))
    assert result.code == 2
    assert result.stderr.strip().count("\n") == 0 and says in result.stderr
    assert not target.exists() and "GPU node group" not in result.stdout


@pytest.mark.parametrize(("name", "first"), [("g.mmd", "flowchart LR"), ("g.MMD", "flowchart LR"), ("g.gv", "digraph")])
def test_graph_text_formats(tmp_path: Path, name: str, first: str) -> None:
    assert run_main("plan", "--stack", "gb200-x72", "--graph", str(tmp_path / name)).code == 0
    assert (tmp_path / name).read_text().startswith(first)


def test_markdown_graph_is_a_fenced_mermaid_block(tmp_path: Path) -> None:
    assert run_main("plan", "--stack", "gb200-x72", "--graph", str(tmp_path / "g.md")).code == 0
    text = (tmp_path / "g.md").read_text()
    assert text.startswith("```mermaid\nflowchart LR\n") and text.endswith("```\n")


def test_html_report_is_written(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    result = run_main("plan", "--stack", "gb200-x72", "--html", str(target))
    assert result.code == 0 and f"HTML report written to {target}" in result.stdout
    page = target.read_text()
    assert page.startswith("<!DOCTYPE html>") and 'class="graph"' in page and 'class="cards"' in page


def test_plan_prints_the_clock_tables_warnings_then_policies() -> None:
    result = run_main("plan", "--stack", "gb200-x72")
    out = result.stdout
    assert result.code == 0 and out.count("clock: ") == 1 and "(now)" in out
    markers = [
        "GPU node group gb200-x72-nvl72",
        "Warnings:",
        "allowed: your capacity block's cr-... id",  # the example-value warning, rendered by format_problems
        "Policies:",
        "pulumi:pulumi:Stack",
    ]
    assert [out.index(m) for m in markers] == sorted(out.index(m) for m in markers)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_warnings_go_to_stderr_only_when_stdout_is_piped(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = cli.stack_settings(ROOT, "gb200-x72")
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", Terminal())
    found = stack_warnings(settings)
    assert found and err.getvalue() == ""
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert stack_warnings(settings) == found
    assert err.getvalue() == format_problems(found) + "\n"


@pytest.mark.parametrize("example", ["compute-domain-job", "custom-platform"])
def test_examples_plan_as_their_readmes_show(example: str) -> None:
    # Their stacks carry their own project's keys, not the platform's: the plan must not read them as platform settings.
    result = run_main("plan", "--project-dir", str(ROOT / "examples" / example), "--stack", "dev")
    assert result.code == 0, result.stderr
    assert "Invalid settings" not in result.stderr and "Policies:" in result.stdout


def test_piped_plan_keeps_each_value_on_one_line() -> None:
    # A file or grep must see the SSM parameter whole, not folded at a console width.
    result = run_main("plan", "--stack", "gb200-x36")
    (ami,) = [line for line in result.stdout.splitlines() if line.strip().startswith("AMI ")]
    assert "/arm64/nvidia/amazon-eks-node-al2023-arm64-nvidia-1.35-v20260714/image_id -> " in ami, ami


def test_plan_now_shows_the_plan_at_another_moment() -> None:
    # Inside gb200-x72's block (2026-12-01T11:30Z to 2026-12-15T11:30Z): full size now, the start action is past.
    result = run_main("plan", "--stack", "gb200-x72", "--now", "2026-12-02T00:00:00Z")
    assert result.code == 0, result.stderr
    rows = {line.split("  ", 1)[0].strip(): line for line in result.stdout.splitlines() if line.startswith(" ")}
    assert "clock: 2026-12-02T00:00Z (injected)" in result.stdout
    assert rows["min/desired/max now"].endswith("0 / 18 / 18")
    assert "(capacity-block-start)" not in rows["schedule"] and "(capacity-block-end)" in rows["schedule"]
    assert "active: 2026-12-01T11:30Z" in rows["window"]


def test_plan_now_without_a_zone_is_a_usage_error() -> None:
    result = run_main("plan", "--stack", "gb200-x72", "--now", "2026-12-02T00:00:00")
    assert result.code == 2 and "with a zone" in result.stderr
