"""The printed preflight table and the exit code."""

from __future__ import annotations

import pytest
from ultraserver.preflight.report import Check, exit_code, format_checks


def test_format_checks_shows_fixes_for_problems_only() -> None:
    checks = [
        Check("gpu: reservation state", "fail", "cr-1: payment-failed", "fix the payment method"),
        Check("AMI release", "pass", "v20251103", "never shown"),
        Check("zone us-east-1-dfw-2a opted in", "warn", "unknown", "opt in"),
    ]
    text = format_checks(checks)
    lines = text.splitlines()
    assert lines[0].split() == ["STATUS", "CHECK", "DETAIL"]
    assert lines[1].startswith("FAIL    gpu: reservation state")
    assert lines[2].strip() == "fix: fix the payment method"
    assert "never shown" not in text
    assert lines[-2].strip() == "fix: opt in"
    assert lines[-1] == "1 passed, 1 warnings, 1 failed"


@pytest.mark.parametrize(("statuses", "code"), [(["pass", "warn"], 0), (["pass", "fail", "warn"], 1), ([], 0)])
def test_exit_code(statuses: list[str], code: int) -> None:
    assert exit_code([Check("c", s, "") for s in statuses]) == code  # type: ignore[arg-type]
