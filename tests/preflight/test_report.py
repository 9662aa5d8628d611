"""The printed preflight table and the exit code."""

from __future__ import annotations

import pytest
from ultraserver.preflight.report import FAIL, PASS, WARN, check, exit_code, format_checks, worst
from ultraserver.problems import ERROR, INFO, WARNING


def test_checks_are_problems_at_their_level() -> None:
    assert (PASS, WARN, FAIL) == (INFO, WARNING, ERROR)
    result = check("AMI release", FAIL, "v20250901 is older than 20251103", "use a newer AMI")
    assert (result.key, result.value, result.fix, result.level) == (
        "AMI release",
        "v20250901 is older than 20251103",
        "use a newer AMI",
        ERROR,
    )


def test_format_checks_shows_fixes_for_problems_only() -> None:
    checks = [
        check("gpu: reservation state", FAIL, "cr-1: payment-failed", "fix the payment method"),
        check("AMI release", PASS, "v20251103", "never shown"),
        check("zone us-east-1-dfw-2a opted in", WARN, "unknown", "opt in"),
    ]
    assert format_checks(checks).splitlines() == [
        "FAIL  gpu: reservation state          cr-1: payment-failed",
        "                                      fix: fix the payment method",
        "PASS  AMI release                     v20251103",
        "WARN  zone us-east-1-dfw-2a opted in  unknown",
        "                                      fix: opt in",
        "1 passed, 1 warnings, 1 failed",
    ]


def test_format_no_checks_is_the_summary() -> None:
    assert format_checks([]) == "0 passed, 0 warnings, 0 failed"


@pytest.mark.parametrize(
    ("statuses", "most"), [([PASS, WARN], WARN), ([PASS, FAIL, WARN], FAIL), ([PASS], PASS), ([], PASS)]
)
def test_worst(statuses: list[str], most: str) -> None:
    assert worst(statuses) == most


@pytest.mark.parametrize(("statuses", "code"), [([PASS, WARN], 0), ([PASS, FAIL, WARN], 1), ([], 0)])
def test_exit_code(statuses: list[str], code: int) -> None:
    assert exit_code([check("c", s, "") for s in statuses]) == code
