"""The block-start acceptance's cluster side against the emulated cluster: per UltraServer in a block at the
rehearsal's moment, the minutes from the block start to every reserved node Ready and to this block's check run
passing, judged by ``status``'s own ``acceptance``. The EC2 side (the reservation's counts and state, the interconnect
status, the remediation packet) needs EC2 and is not rehearsed: the reservation stands in as the stack declares it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from ultraserver.facts.capacity.capacity_blocks import NODE_JOIN_GRACE_MINUTES
from ultraserver.problems import Problem
from ultraserver.rehearse.stage import Stage
from ultraserver.status.acceptance import CHECKS_FAILED, acceptance
from ultraserver.status.aws import Reservation
from ultraserver.status.cluster import ClusterSide, read_cluster
from ultraserver.verify.clients import connect
from ultraserver.verify.expect import NodeGroupExpectation, StackExpectation
from ultraserver.verify.verdict import Verdict

ACCEPTANCE = "acceptance"


def block_start(group: NodeGroupExpectation, at: datetime) -> datetime | None:
    """The start of the group's block whose full-size window holds ``at`` (a window opens at the block's start plus
    the join grace); None outside every window."""
    for start, until in group.windows:
        opens = datetime.fromisoformat(start.replace("Z", "+00:00"))
        if opens <= at < datetime.fromisoformat(until.replace("Z", "+00:00")):
            return opens - timedelta(minutes=NODE_JOIN_GRACE_MINUTES)
    return None


def judge_acceptance(group: NodeGroupExpectation, side: ClusterSide, start: datetime) -> Verdict:
    """One UltraServer's acceptance: every reserved node Ready, and its check run of this block not failed."""
    accepted = acceptance(Reservation(group.name, "active", start=start, total=group.nodes), side)
    ready, checks = accepted["minutesToReady"], accepted["checks"]
    at = "" if accepted["minutesToChecks"] is None else f" at +{accepted['minutesToChecks']} min"
    evidence = f"block start {start:%Y-%m-%dT%H:%MZ}; "
    evidence += f"all {group.nodes} nodes Ready at +{ready} min" if ready is not None else f"{accepted['ready']} Ready"
    evidence += f"; checks {checks}{at}"
    problems = []
    if side.nodes < group.nodes:
        missing = group.nodes - side.nodes
        problems.append(
            Problem(
                f"UltraServer {group.name}",
                f"{missing} node(s) missing, {side.nodes} of {group.nodes} joined",
                f"all {group.nodes} reserved nodes Ready after the block start",
                "`ultraserver status` for the reservation's running count; the remediation packet if EC2 runs fewer",
            )
        )
    elif ready is None:
        problems.append(
            Problem(f"UltraServer {group.name}", f"{accepted['ready']} Ready", f"{group.nodes} Ready", "verify")
        )
    if checks == CHECKS_FAILED:
        problems.append(
            Problem(f"UltraServer {group.name}", "check run failed", "this block's check run passed", "verify")
        )
    return Verdict(group.name, ACCEPTANCE, evidence, tuple(problems))


def acceptance_stage(kubeconfig: Path, expected: StackExpectation, at: datetime) -> Stage | None:
    """The acceptance of each UltraServer in a block at ``at``; None when none is (no block window holds it)."""
    starts = {g.name: start for g in expected.groups if (start := block_start(g, at)) is not None}
    groups = [g for g in expected.groups if g.name in starts]
    if not groups:
        return None
    sides, unread = read_cluster(connect(str(kubeconfig)), groups, expected.imex_namespace)
    if sides is None:
        return Stage("acceptance (cluster side)", 1, f"acceptance: cluster API unreachable: {unread}")
    verdicts = [judge_acceptance(g, sides[g.name], starts[g.name]) for g in groups]
    lines = [f"{v.ultraserver}: {v.evidence}" + "".join(f"\n  {p}" for p in v.problems) for v in verdicts]
    return Stage(
        "acceptance (cluster side)", int(any(not v.passed for v in verdicts)), "\n".join(lines), tuple(verdicts)
    )
