"""The benchmark's generated stacks stay valid settings, so `benchmarks/plan_scale.py` keeps running."""

from __future__ import annotations

from datetime import date

import pytest
from helpers.modules import load_file
from helpers.stacks import ROOT
from ultraserver.config.settings import parse_settings

plan_scale = load_file(ROOT / "benchmarks" / "plan_scale.py", "plan_scale")


@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("ultraservers", [1, 26])
def test_generated_stacks_are_valid(ultraservers: int, grouped: bool) -> None:
    settings = parse_settings(plan_scale.stack_config(ultraservers, grouped)["config"], today=date(2026, 11, 23))
    assert sum(g.ultraservers for g in settings.gpu_node_groups) == ultraservers


@pytest.mark.parametrize("size", ["0", "-3"])
def test_sizes_below_one_are_a_usage_error_not_a_traceback(size: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        plan_scale.main(["--sizes", "2", size])
    assert done.value.code == 2
    assert f"got {size!r}; allowed: a whole number of UltraServers, 1 or more" in capsys.readouterr().err
