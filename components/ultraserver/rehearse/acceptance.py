"""The block-start acceptance's cluster side against the emulated cluster: per UltraServer in a block at the
rehearsal's moment, the minutes from the block start to every reserved node Ready and to every check run of this
block passing, judged by the ``acceptance`` that ``status`` and ``verify`` show. The EC2 side (the reservation's
counts and state, the interconnect status, the remediation packet) needs EC2 and is not rehearsed: the reservation
stands in as the stack declares it.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from ultraserver.facts.capacity.capacity_blocks import NODE_JOIN_GRACE_MINUTES
from ultraserver.problems import Problem
from ultraserver.rehearse.stage import Stage
from ultraserver.status.cluster import ClusterSide, read_cluster
from ultraserver.verify.acceptance import CHECKS_FAILED, acceptance, block_start, checks_text, ultraserver_checks
from ultraserver.verify.clients import connect
from ultraserver.verify.expect import NodeGroupExpectation, StackExpectation
from ultraserver.verify.verdict import Verdict

ACCEPTANCE = "acceptance"


def judge_acceptance(group: NodeGroupExpectation, side: ClusterSide, start: datetime) -> Verdict:
    """One UltraServer's acceptance: every reserved node Ready, and its check run of this block not failed."""
    accepted = acceptance(start, group.nodes, side.ready_since, side.check_runs)
    ready, checks = accepted["minutesToReady"], accepted["checks"]
    evidence = f"block start {start:%Y-%m-%dT%H:%MZ}; "
    evidence += f"all {group.nodes} nodes Ready at +{ready} min" if ready is not None else f"{accepted['ready']} Ready"
    evidence += f"; checks {checks_text(accepted)}"
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
            Problem(
                f"UltraServer {group.name}",
                accepted["checksDetail"],
                "every check run of this block passed",
                "ultraserver verify (the failed run's log)",
            )
        )
    return Verdict(group.name, ACCEPTANCE, evidence, tuple(problems))


def acceptance_stage(kubeconfig: Path, expected: StackExpectation, at: datetime) -> Stage | None:
    """The acceptance of each UltraServer in a block at ``at``; None when none is (no block window holds it)."""
    # Nodes join during the grace after the block's start: acceptance is judged once the full-size window opens.
    grace = timedelta(minutes=NODE_JOIN_GRACE_MINUTES)
    starts = {g.name: s for g in expected.groups if (s := block_start(g, at)) is not None and at >= s + grace}
    groups = [g for g in expected.groups if g.name in starts]
    if not groups:
        return None
    checks = {g.name: ultraserver_checks(expected, g.name) for g in groups}
    sides, unread = read_cluster(connect(str(kubeconfig)), groups, checks)
    if sides is None:
        return Stage("acceptance (cluster side)", 1, f"acceptance: cluster API unreachable: {unread}")
    verdicts = [judge_acceptance(g, sides[g.name], starts[g.name]) for g in groups]
    lines = [f"{v.ultraserver}: {v.evidence}" + "".join(f"\n  {p}" for p in v.problems) for v in verdicts]
    return Stage(
        "acceptance (cluster side)", int(any(not v.passed for v in verdicts)), "\n".join(lines), tuple(verdicts)
    )
