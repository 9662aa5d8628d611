"""Text report of policy violations for the offline plan: the shared problem report, mandatory first."""

from __future__ import annotations

from collections.abc import Sequence

from ultraserver.policy.model import ADVISORY, MANDATORY, Violation
from ultraserver.problems import ERROR, WARNING, blocking, format_problems

LABELS = {ERROR: MANDATORY.upper(), WARNING: ADVISORY.upper()}


def blocks(violations: Sequence[Violation]) -> bool:
    """True when a mandatory rule failed (the plan exits 1, as `pulumi preview` would)."""
    return bool(blocking(v.to_problem() for v in violations))


def format_violations(violations: Sequence[Violation], rule_count: int) -> str:
    """A count line, then each violation (rule, resource URN, message), mandatory first; one line when clean."""
    if not violations:
        return f"Policies: {rule_count} rules checked, no violations."
    ordered = sorted(violations, key=lambda v: v.level != MANDATORY)
    mandatory = sum(1 for v in violations if v.level == MANDATORY)
    head = (
        f"Policy violations: {mandatory} mandatory, {len(violations) - mandatory} advisory "
        f"({rule_count} rules checked):"
    )
    return "\n".join([head, format_problems((v.to_problem() for v in ordered), LABELS)])
