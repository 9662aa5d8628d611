"""The installed script runs main() with the collector tuned for one short run; main() itself leaves it alone."""

from __future__ import annotations

import gc
import tomllib
from pathlib import Path

import pytest
import ultraserver.cli as cli

ROOT = Path(__file__).resolve().parents[2]


def test_the_script_and_python_dash_m_run_the_console_entry() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    # ultraserver.__main__.run imports the CLI under a Ctrl-C guard, then runs console() (tests/cli/test_interrupt.py).
    assert scripts["ultraserver"] == "ultraserver.__main__:run"
    main = (ROOT / "components" / "ultraserver" / "__main__.py").read_text()
    assert "return console()" in main and "raise SystemExit(run())" in main


def test_console_raises_the_thresholds_before_main_and_freezes_after(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[object, ...]] = []
    monkeypatch.setattr(gc, "set_threshold", lambda *limits: calls.append(("threshold", *limits)))
    monkeypatch.setattr(gc, "freeze", lambda: calls.append(("freeze",)))
    monkeypatch.setattr(cli, "main", lambda: calls.append(("main",)) or 4)
    assert cli.console() == 4
    assert calls == [("threshold", *cli.SHORT_RUN_GC_THRESHOLDS), ("main",), ("freeze",)]
    assert cli.SHORT_RUN_GC_THRESHOLDS[0] > 700  # above Python's default, or the entry changes nothing


def test_main_leaves_the_collector_of_its_caller_alone() -> None:
    before = gc.get_threshold()
    assert cli.main(["versions", "--help"]) == 0
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
