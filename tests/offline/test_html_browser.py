"""The shipped gb200-x72 HTML report in a real browser: it loads offline, quietly, and shows its pictures.

Skipped only when Chromium is absent locally; .ci/run installs Debian's ``chromium`` and sets
ULTRASERVER_REQUIRE_BROWSER=1, which turns that skip into a failure.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.browser import chromium, render
from helpers.cli import run_main
from helpers.stacks import ROOT

REQUIRED = os.environ.get("ULTRASERVER_REQUIRE_BROWSER") == "1"


@pytest.fixture(scope="module")
def browser() -> None:
    if chromium() is None:
        if REQUIRED:
            pytest.fail("ULTRASERVER_REQUIRE_BROWSER=1 but chromium is not installed (apt-get install chromium)")
        pytest.skip("chromium is not installed (apt-get install -y --no-install-recommends chromium to run this)")


def test_gb200_x72_report_renders_without_console_errors(browser: None, tmp_path: Path) -> None:
    report = tmp_path / "report.html"
    assert run_main("plan", "--stack", "gb200-x72", "--html", str(report)).code == 0
    shown = render(report)
    assert shown.problems == []
    probe = shown.probe
    assert probe["title"].startswith("Offline plan of ultraserver-eks/gb200-x72")
    (graph,) = probe["graphs"]
    assert graph["width"] > 0 and graph["height"] > 0 and graph["nodes"] > 10 and graph["edges"] > 10
    (cards,) = probe["cardPictures"]
    assert cards["width"] > 0 and cards["height"] > 0 and cards["cards"] == 17
    assert probe["groupTables"] == 1
    # Self-contained: the page fetched nothing (no CSS, font, image or script from anywhere).
    assert probe["requests"] == []


def test_a_page_error_is_caught(browser: None, tmp_path: Path) -> None:
    """The probe itself works: a broken page reports its console error and the missing image."""
    page = tmp_path / "broken.html"
    page.write_text('<!DOCTYPE html><title>x</title><img src="missing.png"><script>console.error("boom")</script>')
    problems = render(page).problems
    assert any("boom" in p for p in problems) and any("missing.png" in p for p in problems)


def test_ci_installs_chromium_and_requires_the_browser_test() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert "apt-get install -y -qq --no-install-recommends chromium" in script
    assert "export ULTRASERVER_REQUIRE_BROWSER=1" in script
    assert script.index("ULTRASERVER_REQUIRE_BROWSER=1") < script.index("python -m pytest")


def test_readme_shows_the_shipped_report_screenshot() -> None:
    picture = ROOT / "docs" / "plan-report-gb200-x72.png"
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    readme = (ROOT / "README.md").read_text()
    assert "](docs/plan-report-gb200-x72.png)" in readme and "scripts/screenshot_report.py" in readme


def test_the_readme_screenshot_command_runs_from_any_folder_without_pythonpath(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text()
    assert "`python scripts/screenshot_report.py`" in readme
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}  # no chromium on this PATH: the run stops after its imports
    script = str(ROOT / "scripts" / "screenshot_report.py")
    ready = subprocess.run([sys.executable, script], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert ready.returncode == 1 and ready.stderr.strip().startswith("chromium is not installed"), ready.stderr
    # A Python without the project's dependencies (no site-packages) is told how to get them, not shown a traceback.
    bare = subprocess.run(
        [sys.executable, "-I", "-S", script], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120
    )
    assert bare.returncode == 1 and "Traceback" not in bare.stderr
    assert "needs the project's dependencies" in bare.stderr and ".venv/bin/python scripts/screenshot_report.py" in (
        bare.stderr
    )
