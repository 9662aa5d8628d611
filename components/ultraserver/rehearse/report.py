"""A rehearsal as text: what was served and broken, each stage's own output, then what passed, what failed and
whether each injected fault was named by the checks."""

from __future__ import annotations

from typing import Any

from ultraserver.rehearse.run import RESPONSES, Rehearsal


def _passed(rehearsal: Rehearsal) -> list[str]:
    """Each passed verdict, and each judged stage without verdicts of its own that exited 0."""
    found = [f"{v.ultraserver} {v.check}" for s in rehearsal.stages for v in s.verdicts if v.passed]
    return found + [s.name for s in rehearsal.stages if s.judged and not s.verdicts and not s.code]


def _first_failure(output: str) -> str:
    """A failed stage's line that says what failed (its FAILED or DRIFT line), else its first line."""
    lines = output.splitlines()
    found = next((line for line in lines if line.startswith(("FAILED ", "DRIFT "))), lines[0] if lines else "")
    return found.removeprefix("FAILED ")


def _summary(rehearsal: Rehearsal) -> list[str]:
    passed = _passed(rehearsal)
    lines = [f"Passed ({len(passed)}): " + (", ".join(passed) or "none")]
    failed = [v for s in rehearsal.stages for v in s.verdicts if not v.passed]
    lines += [f"FAILED {v.ultraserver} {v.check}: {p}" for v in failed for p in v.problems]
    lines += [f"FAILED {s.name}: {_first_failure(s.output)}" for s in rehearsal.stages if not s.verdicts and s.code]
    return lines


def format_rehearsal(rehearsal: Rehearsal) -> str:
    """The whole report."""
    lines = [
        f"Rehearsal of {rehearsal.stack} at {rehearsal.at:%Y-%m-%dT%H:%M:%SZ} on "
        f"{rehearsal.api.describe if rehearsal.api else 'an emulated Kubernetes API at ' + rehearsal.url} "
        "(no AWS, no hardware)",
        *(rehearsal.api.notes if rehearsal.api else []),
        "Served: " + "; ".join(rehearsal.served),
    ]
    if rehearsal.in_cluster:
        tokened = sum(1 for *_, authorized in rehearsal.in_cluster if authorized)
        lines.append(
            f"In-cluster scripts (drift check, drain): {len(rehearsal.in_cluster)} request(s) to "
            f"{rehearsal.in_cluster_url}, its certificate verified against the service account's ca.crt, "
            f"{tokened} with its token"
        )
    lines += [f"Injected {i.fault}: {i.what}" for i in rehearsal.injected]
    for stage in rehearsal.stages:
        lines += ["", f"== {stage.name} (exit {stage.code})", stage.output]
    lines += ["", *_summary(rehearsal)]
    for injected in rehearsal.injected:
        lines.append(f"Fault {injected.fault} on {injected.subject}: {_verdict(rehearsal, injected)}")
    lines += [f"FAILED {s.name} names no injected fault: something else went wrong" for s in rehearsal.unexplained]
    return "\n".join(lines)


def _verdict(rehearsal: Rehearsal, injected: Any) -> str:
    """Whether the toolkit responded to a fault as it must, in the words of its kind."""
    handled = injected.fault in RESPONSES or injected.fault == "node-fails"
    if rehearsal.detected(injected):
        return "handled (its response passed)" if handled else "named by the checks above"
    return "NOT HANDLED (its response failed)" if handled else "NOT DETECTED by the day-2 checks"


def exit_reason(rehearsal: Rehearsal) -> str:
    """The last line's reason: the first failure, or the fault nobody named."""
    missed = [i for i in rehearsal.injected if not rehearsal.detected(i)]
    if missed:
        return f"fault {', '.join(i.fault for i in missed)}: {_verdict(rehearsal, missed[0])}"
    if rehearsal.injected:
        unexplained = rehearsal.unexplained
        if unexplained:
            return f"{unexplained[0].name} failed, naming no injected fault"
        return "every injected fault named by the checks or handled by the toolkit"
    failed = [line for line in _summary(rehearsal) if line.startswith("FAILED ")]
    return failed[0].removeprefix("FAILED ") if failed else ""


REHEARSAL_JSON_KEYS = ("stack", "at", "api", "stages")
"""The keys every ``rehearse --json`` document has (an earlier output is recognised by them)."""


def rehearsal_json(rehearsal: Rehearsal) -> dict[str, Any]:
    """The rehearsal as ``--json`` writes it: the API it ran on (a real API server's /version), what it refused,
    each stage's exit code and output, each injected fault and whether the checks named it, with real scheduling
    each workload Kueue saw (admitted or not, its nodes, its pods and their nodes, in DRA mode their devices), the
    exit code."""
    api = rehearsal.api
    return {
        "stack": rehearsal.stack,
        "at": f"{rehearsal.at:%Y-%m-%dT%H:%M:%SZ}",
        "api": {
            "kind": api.kind if api else "emulated",
            "url": rehearsal.url,
            "version": api.version if api else {},
            "notes": api.notes if api else [],
            "refused": [str(r) for r in api.refusals()] if api else [],
        },
        "served": rehearsal.served,
        "stages": [{"name": s.name, "exit": s.code, "output": s.output} for s in rehearsal.stages],
        "faults": [
            {"fault": i.fault, "subject": i.subject, "detected": rehearsal.detected(i)} for i in rehearsal.injected
        ],
        "workloads": [p.to_json() for p in rehearsal.placements],
        "exit": rehearsal.code,
        **({"deploy": rehearsal.deployment.to_json()} if rehearsal.deployment is not None else {}),
    }
