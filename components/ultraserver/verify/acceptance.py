"""Acceptance at the start of a block, as ``status`` and ``verify`` both show it: block start -> every reserved node
Ready -> every fabric check of the UltraServer passed.

The checks of an UltraServer are every check job the stack deploys whose workers may run on it: its nvbandwidth
job(s), its NCCL job and the EFA job when the EFA check spans its node group. "Passed" needs a run of this block
(a launcher created at or after the block's start) of each, all Succeeded, at the moment the last one finished;
"failed" comes with the first of this block's runs that failed. A check the in-cluster recheck never makes again
(``incluster/recheck.py``: it waits for a block window of every node group the job spans) and whose run is older
than the block is "not checked", with what to run; only a run that will come is "not yet".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ultraserver.facts.capacity.capacity_blocks import NODE_JOIN_GRACE_MINUTES
from ultraserver.facts.kubernetes.scheduling import ULTRASERVER_LABEL
from ultraserver.verify.clients import ClusterError, ClusterReader, Pod
from ultraserver.verify.expect import NodeGroupExpectation, StackExpectation
from ultraserver.verify.fabric import launcher_selector

CHECKS_PASSED, CHECKS_FAILED, CHECKS_NOT_YET, CHECKS_NOT_CHECKED = "passed", "failed", "not yet", "not checked"


@dataclass(frozen=True)
class CheckJob:
    """One check MPIJob that covers an UltraServer."""

    namespace: str
    name: str
    spans: tuple[str, ...]
    """The node groups its workers may run on."""
    unwindowed: tuple[str, ...] = ()
    """Those of them without a Capacity Block window: the in-cluster recheck never makes the job again then."""


Runs = Sequence[tuple[CheckJob, Pod | None]]
"""Each check job with its newest launcher pod (None: none)."""


def ultraserver_checks(expected: StackExpectation, group: str) -> tuple[CheckJob, ...]:
    """The check jobs whose workers may run on node group ``group``."""
    windowed = {g.name for g in expected.groups if g.windows}
    jobs: list[tuple[str, str, tuple[str, ...]]] = []
    for g in expected.groups:
        if g.name == group:
            jobs += [(expected.imex_namespace, job, (group,)) for job in g.nvlink_jobs]
    jobs += [
        (expected.nccl_namespace, job, (group,)) for ultraserver, job in expected.nccl_jobs if ultraserver == group
    ]
    if expected.efa_job and group in expected.efa_node_groups:
        jobs.append((expected.efa_namespace, expected.efa_job, tuple(expected.efa_node_groups)))
    return tuple(
        CheckJob(namespace, name, spans, tuple(g for g in spans if g not in windowed))
        for namespace, name, spans in jobs
    )


def newest_runs(reader: ClusterReader, checks: Sequence[CheckJob]) -> tuple[tuple[CheckJob, Pod | None], ...]:
    """Each job's newest launcher pod; raises ClusterError when the API does not answer."""
    found = []
    for check in checks:
        pods = reader.pods(check.namespace, launcher_selector(check.name))
        found.append((check, max(pods, key=lambda p: p.created) if pods else None))
    return tuple(found)


@dataclass(frozen=True)
class Checks:
    """The checks' verdict for one block."""

    state: str
    finished: datetime | None = None
    """When the last run finished (passed) or the failed one did (failed)."""
    detail: str = ""
    """Which run failed, which are awaited, or why none will come and what to run."""


def _moment(text: str) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


def _of_block(start: datetime, pod: Pod | None) -> Pod | None:
    """The pod when it is a run of the block that started at ``start``."""
    created = _moment(pod.created) if pod else None
    return pod if created is not None and created >= start else None


def checks_verdict(start: datetime | None, runs: Runs) -> Checks:
    """This block's runs of every check job of the UltraServer, judged as one (see the module's docstring)."""
    if not runs:
        return Checks(CHECKS_NOT_CHECKED, detail="the stack deploys no fabric check on this UltraServer")
    if start is None:
        return Checks(CHECKS_NOT_YET, detail="the block's start is unknown")
    ours = [(check, pod) for check, newest in runs if (pod := _of_block(start, newest)) is not None]
    failed = [(check, pod) for check, pod in ours if pod.phase == "Failed"]
    if failed:
        return _failed(failed)
    done = [_moment(pod.finished) for _, pod in ours if pod.phase == "Succeeded"]
    if len(done) == len(runs) and all(done):
        return Checks(CHECKS_PASSED, max(m for m in done if m is not None))
    return _awaited(runs, {check.name for check, _ in ours})


def _failed(failed: Sequence[tuple[CheckJob, Pod]]) -> Checks:
    """Every failed run of this block named; the moment is the first failure's."""
    first = min(pod.finished or pod.created for _, pod in failed)
    named = ", ".join(f"{check.name} failed ({check.namespace}/{pod.name})" for check, pod in failed)
    return Checks(CHECKS_FAILED, _moment(first), named)


def _awaited(runs: Runs, started: set[str]) -> Checks:
    """Some runs of this block are not finished: 'not yet' when each will come, else 'not checked' and what to run."""
    waiting = [check for check, pod in runs if check.name not in started or pod is None or pod.phase != "Succeeded"]
    never = [check for check in waiting if check.name not in started and check.unwindowed]
    if not never:
        return Checks(CHECKS_NOT_YET, detail="waiting for " + ", ".join(c.name for c in waiting))
    check = never[0]
    more = f" (and {len(never) - 1} more)" if len(never) > 1 else ""
    return Checks(
        CHECKS_NOT_CHECKED,
        detail=f"{check.name}{more} has no run of this block and none will come: {', '.join(check.unwindowed)} has "
        "no Capacity Block window, so the in-cluster recheck cannot tell when its block starts; run it again: "
        f"kubectl -n {check.namespace} delete mpijob {check.name}, then pulumi up (makes it again), then "
        "ultraserver verify",
    )


def all_ready_at(total: int, ready_since: Sequence[datetime | None]) -> datetime | None:
    """When the last of ``total`` reserved nodes turned Ready; None until all are (or a time is unknown)."""
    if total <= 0 or len(ready_since) < total or not all(ready_since):
        return None
    return max(t for t in ready_since if t is not None)


def minutes(start: datetime | None, at: datetime | None) -> float | None:
    """Minutes from ``start`` to ``at``, to a tenth; None when either is unknown."""
    return round((at - start).total_seconds() / 60, 1) if at and start else None


def acceptance(
    start: datetime | None, total: int, ready_since: Sequence[datetime | None], runs: Runs
) -> dict[str, Any]:
    """Block start, when the last reserved node turned Ready and the minutes between (None until all are Ready),
    and the checks' verdict with the minutes from the start to it."""
    last = all_ready_at(total, ready_since)
    checks = checks_verdict(start, runs)
    return {
        "blockStart": start.isoformat() if start else None,
        "allReadyAt": last.isoformat() if last else None,
        "minutesToReady": minutes(start, last),
        "ready": f"{len(ready_since)}/{total}",
        "checks": checks.state,
        "checksDetail": checks.detail or None,
        "checksFinishedAt": checks.finished.isoformat() if checks.finished else None,
        "minutesToChecks": minutes(start, checks.finished),
        "checkJobs": [check.name for check, _ in runs],
    }


def block_start(group: NodeGroupExpectation, at: datetime) -> datetime | None:
    """The start of the group's block that holds ``at`` (from the stack's window: its full-size window opens at the
    block's start plus the join grace and closes at its scale-down); None outside every window."""
    grace = timedelta(minutes=NODE_JOIN_GRACE_MINUTES)
    for opens, until in group.windows:
        start = datetime.fromisoformat(opens.replace("Z", "+00:00")) - grace
        if start <= at < datetime.fromisoformat(until.replace("Z", "+00:00")):
            return start
    return None


def checks_text(accepted: dict[str, Any]) -> str:
    """The checks' verdict in words: 'passed at +21.5 min (nvbandwidth-a, nccl-a: this block's runs)'."""
    at = "" if accepted["minutesToChecks"] is None else f" at +{accepted['minutesToChecks']} min"
    if accepted["checksDetail"]:
        return f"{accepted['checks']}{at} ({accepted['checksDetail']})"
    jobs = ", ".join(accepted["checkJobs"])
    return f"{accepted['checks']}{at} ({jobs}: this block's runs)" if jobs else accepted["checks"]


BLOCK_START_FROM = "the stack's window (verify reads no EC2; `ultraserver status` has the reservation's own start)"


def stack_acceptance(reader: ClusterReader, expected: StackExpectation, at: datetime) -> dict[str, Any]:
    """Per UltraServer node group, its acceptance in the block of the stack's window that holds ``at`` (or why there
    is none); ``unread`` says why nothing was read when the API does not answer."""
    report: dict[str, Any] = {"at": at.isoformat(), "blockStartFrom": BLOCK_START_FROM, "ultraservers": []}
    try:
        nodes = reader.nodes()
        for group in expected.groups:
            start = block_start(group, at)
            if start is None:
                why = (
                    "no block of the stack's window holds this moment" if group.windows else "the stack sets no window"
                )
                report["ultraservers"].append({"ultraserver": group.name, "blockStart": None, "why": why})
                continue
            ready = [n.ready_changed for n in nodes if n.labels.get(ULTRASERVER_LABEL) == group.name and n.ready]
            runs = newest_runs(reader, ultraserver_checks(expected, group.name))
            report["ultraservers"].append({"ultraserver": group.name, **acceptance(start, group.nodes, ready, runs)})
    except ClusterError as err:
        return {**report, "ultraservers": [], "unread": str(err)}
    return report


def acceptance_line(row: dict[str, Any]) -> str:
    """One UltraServer's acceptance in words."""
    if row["blockStart"] is None:
        return f"{row['ultraserver']}: not in a block ({row['why']}; `ultraserver status` reads the block from EC2)"
    total = row["ready"].split("/")[1]
    ready = (
        f"all {total} nodes Ready at +{row['minutesToReady']} min"
        if row["minutesToReady"] is not None
        else f"{row['ready']} nodes Ready"
    )
    start = datetime.fromisoformat(row["blockStart"])
    return f"{row['ultraserver']}: block start {start:%Y-%m-%d %H:%M} UTC; {ready}; checks {checks_text(row)}"
