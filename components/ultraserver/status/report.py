"""How ``ultraserver status`` reports: a few lines per UltraServer (AWS, cluster, cost, problems) and the JSON."""

from __future__ import annotations

import textwrap
from datetime import datetime, timezone
from typing import Any

from ultraserver.facts.capacity.capacity_blocks import reclaim_at
from ultraserver.problems import ERROR, WARNING, Problem, format_problems
from ultraserver.status.acceptance import remediation_packet
from ultraserver.status.judge import UltraServerStatus
from ultraserver.status.run import StatusReport
from ultraserver.verify.acceptance import checks_text

MARKS = {ERROR: "FAIL", WARNING: "WARN"}


def _utc(moment: datetime | None) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if moment else "unknown"


def _left(end: datetime | None, now: datetime) -> str:
    """Time left to the reclaim (EC2 terminates an UltraServer block's instances 60 minutes before its end)."""
    if end is None:
        return "no end"
    if end <= now:
        return "ended"
    reclaim = reclaim_at(end)
    seconds = (reclaim - now).total_seconds()
    if seconds <= 0:
        return f"reclaimed since {_utc(reclaim)}"
    days, rest = divmod(int(seconds), 86400)
    left = f"{days}d {rest / 3600:.1f}h" if days else f"{rest / 3600:.1f}h"
    return f"{left} left before the reclaim at {_utc(reclaim)}"


def _problem_lines(problems: tuple[Problem, ...] | list[Problem]) -> list[str]:
    return textwrap.indent(format_problems(problems, MARKS), "  ").splitlines()


def _ultraserver_lines(u: UltraServerStatus, now: datetime) -> list[str]:
    r, c = u.reservation, u.cluster
    block = f" (block {u.block + 1} of {u.blocks})" if u.blocks > 1 else ""
    aws = (
        f"  AWS:     {r.id} ({r.block_id or 'no Capacity Block'}) {r.state}, {_utc(r.start)} -> {_utc(r.end)}, "
        f"{_left(r.end, now)}; interconnect {r.interconnect}; {r.running} of {r.total} instances running"
    )
    if c is None:
        cluster = "  cluster: NOT READ (nodes, GPUs, EFA and cliques unknown; see the note at the end)"
        cost = "  cost:    unknown without the cluster (idle GPU-hours need the nodes' Ready times)"
    else:
        cluster = (
            f"  cluster: {c.ready} of {r.total} nodes Ready ({c.nodes} joined); GPUs {c.gpus}/"
            f"{r.total * c.gpus_per_node}; EFA {c.efa}/{r.total * c.efa_per_node}; cliques: "
            f"{', '.join(c.cliques) or 'none'}"
        )
        cost = (
            f"  cost:    {u.idle_gpu_hours or 0.0:.1f} GPU-hours paid since the block started with nodes not Ready "
            "(estimate)"
        )
    lines = [f"{u.node_group}{block}", aws, cluster, cost]
    accepted = u.acceptance
    if accepted["minutesToReady"] is not None:
        lines.append(f"  ready:   all {r.total} nodes Ready {accepted['minutesToReady']} min after the block start")
    if c is not None:
        lines.append(f"  checks:  {checks_text(accepted)}")
    if c is not None and c.spares is not None:
        lines += ["  spares:", *(f"  {line}" for line in c.spares.lines())]
    if remediation_packet(r, c, u.problems, now):
        lines.append(
            "  remediation: the support-case packet is in --json (remediation); scaling the group to 0 first, then "
            "terminating every instance of the block, is your call (docs/capacity-blocks.md, Acceptance)"
        )
    return [*lines, *_problem_lines(u.problems)]


def format_status(stack: str, report: StatusReport, now: datetime) -> str:
    """The text report."""
    lines = [f"Capacity Blocks of {stack} at {_utc(now)}", ""]
    for u in report.ultraservers:
        lines += [*_ultraserver_lines(u, now), ""]
    if report.problems:
        lines += ["groups", *_problem_lines(report.problems), ""]
    failed = sum(1 for u in report.ultraservers if any(p.level == ERROR for p in u.problems))
    errors = sum(1 for p in report.problems if p.level == ERROR)
    summary = f"{len(report.ultraservers)} UltraServer(s), {failed} failing"
    lines.append(summary + (f", {errors} group problem(s)" if errors else ""))
    if report.cluster_unread:
        lines += [
            "",
            "AWS side only: the Kubernetes API could not be read, so node readiness, GPUs, EFA devices, cliques and "
            "idle cost were NOT checked.",
            f"  why: {report.cluster_unread}",
            "  fix: run status where the API is reachable (x72 and multi have private endpoints: from inside the VPC) "
            "with --kubeconfig, or accept the AWS-side view",
        ]
    return "\n".join(lines)


STATUS_JSON_KEYS = ("stack", "now", "passed", "ultraservers", "problems")
"""The keys every ``status_json`` document has: a file holding them is an earlier ``status --json``."""


def status_json(stack: str, report: StatusReport, now: datetime) -> dict[str, Any]:
    """The machine-readable report (--json)."""
    return {
        "stack": stack,
        "now": now.isoformat(),
        "passed": not report.failed,
        "clusterRead": not report.cluster_unread,
        "clusterUnread": report.cluster_unread or None,
        "ultraservers": [u.to_json(now) for u in report.ultraservers],
        "problems": [
            {"key": p.key, "value": p.value, "allowed": p.allowed, "fix": p.fix, "level": p.level}
            for p in report.problems
        ],
    }
