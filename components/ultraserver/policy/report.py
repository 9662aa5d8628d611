"""Text report of policy violations for the offline plan: the shared problem report, mandatory first."""

from __future__ import annotations

from collections.abc import Sequence

from ultraserver.policy.model import ADVISORY, MANDATORY, Violation
from ultraserver.problems import ERROR, WARNING, blocking, format_problems

LABELS = {ERROR: MANDATORY.upper(), WARNING: ADVISORY.upper()}


def blocks(violations: Sequence[Violation]) -> bool:
    """True when a mandatory rule failed (the plan exits 1, as `pulumi preview` would)."""
    return bool(blocking(v.to_problem() for v in violations))


def format_violations(violations: Sequence[Violation], rule_count: int, disabled: int = 0) -> str:
    """A count line, then each violation (rule, resource URN, message), mandatory first; one line when clean.

    ``rule_count`` counts the rules that ran; ``disabled`` those the policy config turned off.
    """
    off = f" ({disabled} disabled by the policy config)" if disabled else ""
    if not rule_count:
        return f"Policies: no rule ran: all {disabled} are disabled by the policy config."
    if not violations:
        return f"Policies: {rule_count} {'rule' if rule_count == 1 else 'rules'} checked{off}, no violations."
    ordered = sorted(violations, key=lambda v: v.level != MANDATORY)
    mandatory = sum(1 for v in violations if v.level == MANDATORY)
    head = (
        f"Policy violations: {mandatory} mandatory, {len(violations) - mandatory} advisory "
        f"({rule_count} rules checked{off}):"
    )
    return "\n".join([head, format_problems((v.to_problem() for v in ordered), LABELS)])
