"""The catalogue of faults a rehearsal can inject, each as it would show in the cluster's API objects and logs.

A fault changes what the cluster serves, never the day-2 code: the verdict a user reads comes from ``verify``, the
drift check and ``status`` as they would judge a real cluster in that state. A fault that cannot show in a stack
(no IMEX check to starve, no NCCL run to fall back to sockets) is refused with what the stack lacks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from ultraserver.facts.kubernetes.kueue import API_VERSION as KUEUE_API_VERSION
from ultraserver.incluster.drain import Block
from ultraserver.problems import Problem
from ultraserver.rehearse import node_failure
from ultraserver.rehearse.catalogue import FAULT_SUMMARIES
from ultraserver.rehearse.cluster import Cluster, GpuNode, cronjob_env, iso
from ultraserver.rehearse.extension import extended_block
from ultraserver.rehearse.jobs import RunFaults, place
from ultraserver.rehearse.reboot import first_rebootable_node
from ultraserver.rehearse.reclaim import JOB, drain_inputs, drain_role, notice


@dataclass(frozen=True)
class Injected:
    """What a fault did: one line naming the node or job, and how the check runs go wrong."""

    fault: str
    what: str
    subject: str
    """The node the fault hits (for a node that never joined, its UltraServer): a verdict must name it."""
    runs: RunFaults = RunFaults()
    group: str = ""
    """The node group (UltraServer) or job the fault is in; naming it alone does not count as naming the fault, but a
    failing stage that names it (the UltraServer's acceptance short of a node) is explained by the fault."""


def _first(cluster: Cluster, wanted: Callable[[GpuNode], bool] = lambda n: True) -> GpuNode:
    return next(n for n in cluster.gpu_nodes if wanted(n))


def _notready(cluster: Cluster, runs: RunFaults) -> Injected:
    node = _first(cluster)
    node.ready = False
    what = f"node {node.name} stopped posting status (Ready Unknown)"
    return Injected("notready", what, node.name, runs, node.group.name)


def _efa(cluster: Cluster, runs: RunFaults) -> Injected:
    node = _first(cluster)
    node.efa_devices = 0
    found_by = "DRANET" if node.group.mode.dra else "its EFA device plugin"
    what = f"node {node.name} shows 0 EFA devices ({found_by} found none)"
    return Injected("efa", what, node.name, runs, node.group.name)


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
    changed = dataclasses.replace(runs, no_imex=runs.no_imex | {node.name})
    return Injected("imex", what, node.name, changed, node.group.name)


def _socket(cluster: Cluster, runs: RunFaults) -> Injected:
    job = cluster.expected.efa_job
    spec = next(o["spec"] for o in cluster.objects if o["kind"] == "MPIJob" and o["metadata"]["name"] == job)
    node = place(cluster, spec, set())[0]  # a node the EFA check's workers run on
    what = f"the NCCL ranks on node {node.name} fall back to TCP sockets ('Using network Socket') in MPIJob {job}"
    changed = dataclasses.replace(runs, socket_nodes=runs.socket_nodes | {node.name})
    return Injected("socket", what, node.name, changed, job)


JOB_NODES = 4
"""Nodes the interrupted job runs on (one worker each)."""


def _job_on_a_block(cluster: Cluster) -> tuple[GpuNode, Block]:
    """Put the user's job on the first Ready node's UltraServer that has a block; that node and block."""
    inputs = drain_inputs(cluster.objects)
    assert inputs is not None, "needs: the plan's drain CronJob"
    ultraservers = {b.ultraserver for b in inputs.blocks}
    first = _first(cluster, lambda n: n.group.name in ultraservers and n.ready)
    block = next(b for b in inputs.blocks if b.ultraserver == first.group.name)
    cluster.running_job = [n for n in cluster.gpu_nodes if n.clique == first.clique][:JOB_NODES]
    return first, block


def _reclaim(cluster: Cluster, runs: RunFaults) -> Injected:
    first, block = _job_on_a_block(cluster)
    cluster.notices.append(notice(block, cluster.at))
    what = (
        f"EC2's notice that {first.group.name}'s block ({block.reservations[0]}) is cut short arrives while job "
        f"{JOB} runs on {len(cluster.running_job)} of its nodes: the reclaim comes in 15 minutes"
    )
    return Injected("reclaim", what, first.name, runs, first.group.name)


def _drain_forbidden(cluster: Cluster, runs: RunFaults) -> Injected:
    """EC2 reclaims every block it can name, and the drain's role lacks a verb it needs then: the ClusterQueue's hold
    when every GB200 node is ending (each active block has a reservation EC2 can warn about), else the notice on the
    job's Workload."""
    first, _ = _job_on_a_block(cluster)
    inputs = drain_inputs(cluster.objects)
    assert inputs is not None
    active = [b for b in inputs.blocks if b.start <= cluster.at < b.end]
    cluster.notices += [notice(b, cluster.at) for b in active if b.reservations]
    resource = "clusterqueues" if all(b.reservations for b in active) else "workloads"
    role = drain_role(cluster.objects, resource)
    for rule in role["rules"]:
        if resource in rule["resources"]:
            rule["verbs"] = [v for v in rule["verbs"] if v != "patch"]
    cluster.forbidden.append(("PATCH", f"{KUEUE_API_VERSION}/{resource}"))
    what = (
        f"EC2's notice of the reclaim of every block arrives while job {JOB} runs on {first.group.name}, and the "
        f"drain's ClusterRole {role['metadata']['name']} lacks patch on {resource}: the API server answers 403"
    )
    return Injected("drain-forbidden", what, first.name, runs, first.group.name)


def _no_nodes(cluster: Cluster, runs: RunFaults) -> Injected:
    inputs = drain_inputs(cluster.objects)
    assert inputs is not None
    active = {b.ultraserver for b in inputs.blocks if b.start <= cluster.at < b.end}
    group = _first(cluster, lambda n: n.group.name in active).group.name
    gone = [n for n in cluster.gpu_nodes if n.group.name == group]
    cluster.gpu_nodes = [n for n in cluster.gpu_nodes if n.group.name != group]
    what = f"none of the {len(gone)} nodes of {group} joined in its paid block (its group launched nothing)"
    return Injected("no-nodes", what, group, runs, group)


def _extend_late(cluster: Cluster, runs: RunFaults) -> Injected:
    found = extended_block(cluster)
    assert found is not None
    block, group = found
    what = (
        f"EC2 confirms a one-day extension of {block.ultraserver}'s block ({block.reservations[0]}, ending "
        f"{iso(block.end)}) 35 minutes before its end, after the drain cut it off and Auto Scaling scaled "
        f"{group.name} down; nobody runs extend or pulumi up (walked minute by minute)"
    )
    return Injected("extend-late", what, block.ultraserver, runs, block.ultraserver)


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


def _gpu_fails(cluster: Cluster, runs: RunFaults) -> Injected:
    node = first_rebootable_node(cluster)
    assert node is not None
    what = f"node {node.name} of {node.group.name} reports its GPUs failed (replayed by the drain's repair walk)"
    return Injected("gpu-fails", what, node.name, runs, node.group.name)


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


def _needs_alerts(cluster: Cluster) -> str:
    env = cronjob_env(cluster.objects, "BLOCKS") or {}
    return _needs_drain(cluster) or ("" if env.get("ALERT_TOPIC_ARN") else "the drain publishes to no alert topic")


def _needs_active_block(cluster: Cluster) -> str:
    inputs = drain_inputs(cluster.objects)
    lacking = _needs_alerts(cluster)
    if lacking or inputs is None:
        return lacking
    active = {b.ultraserver for b in inputs.blocks if b.start <= cluster.at < b.end}
    return "" if any(n.group.name in active for n in cluster.gpu_nodes) else "no block is active at this moment"


def _needs_forbidden(cluster: Cluster) -> str:
    lacking = _needs_active_block(cluster)
    if lacking:
        return lacking
    if not (cronjob_env(cluster.objects, "BLOCKS") or {}).get("CLUSTER_QUEUE"):
        return "the drain holds no Kueue ClusterQueue (kueue.enabled)"
    return ""


def _needs_reboot(cluster: Cluster) -> str:
    lacking = _needs_alerts(cluster)
    if lacking:
        return lacking
    return "" if first_rebootable_node(cluster) else "no self-managed GB200 group: EKS repairs a managed group's nodes"


def _needs_extension(cluster: Cluster) -> str:
    lacking = _needs_alerts(cluster)
    if lacking or extended_block(cluster) is not None:
        return lacking
    return "no block active at this moment has an Auto Scaling group of its own with the plan's scale-down"


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
    Fault("extend-late", _extend_late, _needs_extension),
    Fault("drain-forbidden", _drain_forbidden, _needs_forbidden),
    Fault("no-nodes", _no_nodes, _needs_active_block),
    Fault("gpu-fails", _gpu_fails, _needs_reboot),
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
