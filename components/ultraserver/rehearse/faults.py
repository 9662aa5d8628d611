"""The catalogue of faults a rehearsal can inject, each as it would show in the cluster's API objects and logs.

A fault changes what the cluster serves, never the day-2 code: the verdict a user reads comes from ``verify``, the
drift check and ``status`` as they would judge a real cluster in that state. A fault that cannot show in a stack
(no IMEX check to starve, no NCCL run to fall back to sockets) is refused with what the stack lacks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from ultraserver.problems import Problem
from ultraserver.rehearse import node_failure
from ultraserver.rehearse.catalogue import FAULT_SUMMARIES
from ultraserver.rehearse.cluster import Cluster, GpuNode
from ultraserver.rehearse.jobs import RunFaults, place
from ultraserver.rehearse.reclaim import JOB, drain_inputs, notice


@dataclass(frozen=True)
class Injected:
    """What a fault did: one line naming the node or job, and how the check runs go wrong."""

    fault: str
    what: str
    subject: str
    """The node the fault hits (for a node that never joined, its UltraServer): a verdict must name it."""
    runs: RunFaults = RunFaults()
    group: str = ""
    """The node group (UltraServer) or job the fault is in; naming it alone does not count as naming the fault."""


def _first(cluster: Cluster, wanted: Callable[[GpuNode], bool] = lambda n: True) -> GpuNode:
    return next(n for n in cluster.gpu_nodes if wanted(n))


def _notready(cluster: Cluster, runs: RunFaults) -> Injected:
    node = _first(cluster)
    node.ready = False
    return Injected("notready", f"node {node.name} stopped posting status (Ready Unknown)", node.name, runs)


def _efa(cluster: Cluster, runs: RunFaults) -> Injected:
    node = _first(cluster)
    node.efa_devices = 0
    found_by = "DRANET" if node.group.mode.dra else "its EFA device plugin"
    return Injected("efa", f"node {node.name} shows 0 EFA devices ({found_by} found none)", node.name, runs)


def _clique(cluster: Cluster, runs: RunFaults) -> Injected:
    first = _first(cluster)
    members = [n for n in cluster.gpu_nodes if n.clique == first.clique]
    moved = members[len(members) // 2 :]
    uuid, _, clique_id = first.clique.rpartition(".")
    other = f"{uuid[:-1]}{'f' if uuid[-1] != 'f' else 'e'}.{clique_id}"
    for node in moved:
        node.clique = other
    what = f"{len(moved)} nodes of {first.group.name} from {moved[0].name} on report NVLink domain {other}"
    return Injected("clique", what, moved[0].name, runs, first.group.name)


def _imex(cluster: Cluster, runs: RunFaults) -> Injected:
    node = _first(cluster, lambda n: bool(n.group.nvlink_jobs))
    what = f"the IMEX daemon of node {node.name} never becomes ready (its ComputeDomain stays not Ready)"
    return Injected("imex", what, node.name, dataclasses.replace(runs, no_imex=runs.no_imex | {node.name}))


def _socket(cluster: Cluster, runs: RunFaults) -> Injected:
    job = cluster.expected.efa_job
    spec = next(o["spec"] for o in cluster.objects if o["kind"] == "MPIJob" and o["metadata"]["name"] == job)
    node = place(cluster, spec, set())[0]  # a node the EFA check's workers run on
    what = f"the NCCL ranks on node {node.name} fall back to TCP sockets ('Using network Socket') in MPIJob {job}"
    changed = dataclasses.replace(runs, socket_nodes=runs.socket_nodes | {node.name})
    return Injected("socket", what, node.name, changed, job)


JOB_NODES = 4
"""Nodes the interrupted job runs on (one worker each)."""


def _reclaim(cluster: Cluster, runs: RunFaults) -> Injected:
    inputs = drain_inputs(cluster.objects)
    assert inputs is not None, "needs: the plan's drain CronJob"
    ultraservers = {b.ultraserver for b in inputs.blocks}
    first = _first(cluster, lambda n: n.group.name in ultraservers and n.ready)
    block = next(b for b in inputs.blocks if b.ultraserver == first.group.name)
    cluster.running_job = [n for n in cluster.gpu_nodes if n.clique == first.clique][:JOB_NODES]
    cluster.notices.append(notice(block, cluster.at))
    what = (
        f"EC2's notice that {first.group.name}'s block ({block.reservations[0]}) is cut short arrives while job "
        f"{JOB} runs on {len(cluster.running_job)} of its nodes: the reclaim comes in 15 minutes"
    )
    return Injected("reclaim", what, first.name, runs, first.group.name)


def _missing(cluster: Cluster, runs: RunFaults) -> Injected:
    node = cluster.gpu_nodes[-1]
    cluster.gpu_nodes.remove(node)
    what = f"node {node.name} of {node.group.name} never joined"
    # A node that never registered has no name in the cluster: what a verdict can name is its UltraServer, the
    # group's name, or in a fleet group the clique its peers carry (verify's fleet/<clique> row).
    ultraserver = f"{node.group.name}/{node.clique}" if node.group.fleet else node.group.name
    return Injected("missing-node", what, ultraserver, runs, node.group.name)


def _node_fails(cluster: Cluster, runs: RunFaults) -> Injected:
    group = cluster.gpu_nodes[0].group.name
    what = f"a node of job train on {group} goes NotReady while the job runs (replayed by the node failure stage)"
    return Injected("node-fails", what, group, runs, group)


@dataclass(frozen=True)
class Fault:
    """One entry of the catalogue."""

    name: str
    """Its name in ``catalogue.FAULT_SUMMARIES``."""
    inject: Callable[[Cluster, RunFaults], Injected]
    needs: Callable[[Cluster], str] = lambda cluster: ""
    """Why the stack cannot show the fault ('' when it can)."""

    @property
    def summary(self) -> str:
        """The line ``--help`` shows for it."""
        return FAULT_SUMMARIES[self.name]


def _needs_imex(cluster: Cluster) -> str:
    return "" if cluster.expected.imex_namespace else "the stack runs no IMEX check (imexCheck.enabled)"


def _needs_drain(cluster: Cluster) -> str:
    if drain_inputs(cluster.objects) is None:
        return "the stack deploys no reclaim drain (no GPU node group has a Capacity Block window)"
    return ""


def _needs_efa(cluster: Cluster) -> str:
    # Within one UltraServer NCCL's traffic travels NVLink (MNNVL): a fallback to sockets shows where EFA carries it.
    if cluster.expected.efa_job:
        return ""
    return "the stack runs no EFA check (it needs two UltraServers of one EFA layout; efaCheck.enabled)"


CATALOGUE: tuple[Fault, ...] = (
    Fault("notready", _notready),
    Fault("efa", _efa),
    Fault("clique", _clique),
    Fault("imex", _imex, _needs_imex),
    Fault("socket", _socket, _needs_efa),
    Fault("missing-node", _missing),
    Fault("reclaim", _reclaim, _needs_drain),
    Fault("node-fails", _node_fails, lambda cluster: node_failure.needs(cluster.objects)),
)
assert [f.name for f in CATALOGUE] == list(FAULT_SUMMARIES)
FAULTS = {fault.name: fault for fault in CATALOGUE}


def fault_problem(name: str) -> Problem:
    """--break names a fault outside the catalogue."""
    return Problem("--break", name, f"one of {', '.join(FAULTS)}", "pick a fault from the catalogue (--help lists it)")


def inject(cluster: Cluster, names: list[str]) -> tuple[list[Injected], list[Problem]]:
    """Apply the named faults in order; the problems say which the stack cannot show and why."""
    done: list[Injected] = []
    problems: list[Problem] = []
    runs = RunFaults()
    if not cluster.gpu_nodes and names:
        why = "no GPU node runs at this moment (pick --at inside a Capacity Block)"
        return [], [Problem("--break", n, "a fault on a running GPU node", why) for n in names]
    for name in names:
        fault = FAULTS.get(name)
        if fault is None:
            problems.append(fault_problem(name))
            continue
        lacking = fault.needs(cluster)
        if lacking:
            problems.append(Problem("--break", name, f"a fault this stack can show: {lacking}", "pick another fault"))
            continue
        injected = fault.inject(cluster, runs)
        runs = injected.runs
        done.append(injected)
    return done, problems
