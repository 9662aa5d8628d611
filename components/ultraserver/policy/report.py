"""Text report of policy violations for the offline plan: grouped by enforcement level, mandatory first."""

from __future__ import annotations

from collections.abc import Sequence

from ultraserver.policy.model import ADVISORY, MANDATORY, Violation


def blocks(violations: Sequence[Violation]) -> bool:
    """True when a mandatory rule failed (the plan exits 1, as `pulumi preview` would)."""
    return any(v.level == MANDATORY for v in violations)


def format_violations(violations: Sequence[Violation], rule_count: int) -> str:
    """Violations grouped by level, each with its rule, resource URN and fix; one line when there are none."""
    if not violations:
        return f"Policies: {rule_count} rules checked, no violations."
    lines = []
    for level in (MANDATORY, ADVISORY):
        group = [v for v in violations if v.level == level]
        if not group:
            continue
        lines.append(f"{level.capitalize()} policy violations ({len(group)}):")
        for violation in group:
            lines.append(f"  [{violation.policy}] {violation.urn or '(stack)'}")
            lines.extend(f"      {line}" for line in violation.message.splitlines())
    return "\n".join(lines)
