"""How verify reports: a table of verdicts with evidence, problems, fixes and log tails, and the JSON document."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

from ultraserver.problems import ERROR, WARNING, format_problems
from ultraserver.verify.acceptance import acceptance_line
from ultraserver.verify.checks import Verdict
from ultraserver.verify.expect import StackExpectation

MARKS = {ERROR: "-", WARNING: "~"}
"""How the report marks a problem: an error fails its check, a warning does not."""


def not_checked(expected: StackExpectation) -> list[str]:
    """Checks the stack does not deploy, named so their absence is never read as a pass."""
    notes = []
    if not expected.imex_namespace:
        notes.append("nvlink: not checked, the stack deploys no IMEX check (imexCheck.enabled: false)")
    if not expected.efa_job:
        notes.append(
            "efa: not checked, the stack deploys no EFA check (efaCheck.enabled: false, or fewer than two "
            "UltraServers share one EFA layout)"
        )
    return notes


def format_verdicts(
    verdicts: Sequence[Verdict], notes: Sequence[str] = (), accepted: Mapping[str, Any] | None = None
) -> str:
    """One line per UltraServer and check, then the failures' problems, fixes and log tails, the block-start
    acceptance (``verify.acceptance.stack_acceptance``), then `notes`."""
    width_u = max([len("ULTRASERVER")] + [len(v.ultraserver) for v in verdicts])
    width_c = max([len("CHECK")] + [len(v.check) for v in verdicts])
    lines = [f"{'ULTRASERVER':<{width_u}}  {'CHECK':<{width_c}}  VERDICT  EVIDENCE"]
    for v in verdicts:
        state = "PASSED" if v.passed else "FAILED"
        lines.append(f"{v.ultraserver:<{width_u}}  {v.check:<{width_c}}  {state:<7}  {v.evidence}")
    failed = [v for v in verdicts if not v.passed]
    lines += _failure_lines(failed)
    for v in verdicts:
        if v.passed and v.problems:
            lines += ["", f"{v.ultraserver} {v.check} passed with warnings:"]
            lines += textwrap.indent(format_problems(v.problems, MARKS), "  ").splitlines()
    passed = sum(v.passed for v in verdicts)
    lines += ["", f"{passed} of {len(verdicts)} checks passed" + ("" if not failed else f", {len(failed)} FAILED")]
    if accepted is not None:
        lines += ["", *acceptance_lines(accepted)]
    lines += [f"note: {note}" for note in notes]
    return "\n".join(lines)


def _failure_lines(failed: Sequence[Verdict]) -> list[str]:
    """Each failed check's problems, fixes and log tail (a repeat of the previous problems said once)."""
    lines: list[str] = []
    previous: tuple[object, ...] = ()
    for v in failed:
        lines += ["", f"{v.ultraserver} {v.check} FAILED:"]
        if v.problems == previous and not v.log_tail:
            lines.append("  - the same problem as above")
            continue
        previous = v.problems
        lines += textwrap.indent(format_problems(v.problems, MARKS), "  ").splitlines()
        if v.log_tail:
            lines.append("  log tail:")
            lines += [f"    | {line}" for line in v.log_tail]
    return lines


VERDICTS_JSON_KEYS = ("stack", "passed", "checks", "notChecked")
"""The keys every ``verdicts_json`` document has: a file holding them is an earlier ``verify --json``."""


def verdicts_json(
    stack: str, verdicts: Sequence[Verdict], notes: Sequence[str] = (), accepted: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The machine-readable report (--json)."""
    return {
        "stack": stack,
        "passed": all(v.passed for v in verdicts),
        "checks": [v.to_json() for v in verdicts],
        "notChecked": list(notes),
        "acceptance": accepted,
    }


def acceptance_lines(accepted: Mapping[str, Any]) -> list[str]:
    """The block-start acceptance per UltraServer: block start -> all nodes Ready -> checks passed."""
    at = datetime.fromisoformat(accepted["at"]).astimezone(timezone.utc)
    lines = [f"acceptance at {at:%Y-%m-%d %H:%M} UTC, block start from {accepted['blockStartFrom']}:"]
    if accepted.get("unread"):
        return [
            *lines,
            "  not read: the Kubernetes API did not answer (the error is in the checks above and in --json)",
        ]
    return [*lines, *(f"  {acceptance_line(row)}" for row in accepted["ultraservers"])]
