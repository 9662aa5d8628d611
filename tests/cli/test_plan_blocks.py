"""`ultraserver plan` names, per GPU node group with a window, the Capacity Block it runs on now."""

from __future__ import annotations

from helpers.cli import run_main


def test_plan_prints_each_groups_current_block() -> None:
    result = run_main("plan", "--stack", "gb200-x72")
    assert result.code == 0, result.stderr
    (row,) = [line for line in result.stdout.splitlines() if line.strip().startswith("capacity block ")]
    # The state (future, active, ended) depends on the day the test runs; the block and reservation do not.
    assert row.split("capacity block", 1)[1].strip().startswith("block 1 of 1 (cr-0123456789abcdef0) ")
