"""The check jobs' runs: what mpi-operator, the scheduler and the kubelet would leave of each MPIJob of the plan.

The emulator runs nothing, so the rehearsal places each MPIJob's workers as its spec asks (the worker template's
node selector and node affinity, one clique when its pod affinity's topology key is ``nvidia.com/gpu.clique``, else
spread over the cliques), on Ready GPU nodes only, and leaves a finished launcher pod (labelled
``job-name=<mpijob>-launcher``, as the Job controller labels the pods of mpi-operator v2's launcher Job) with a log
generated for that run: the node report, then the tool's output for the job's ranks, sizes and nodes. A job whose
workers find too few nodes gets no launcher (``launcherCreationPolicy: WaitForWorkersReady``), nor does a job with a
worker on a node whose IMEX daemon never became ready: the DRA driver (v0.4.1, as issue 44 describes it: UNVERIFIED,
its kubelet plugin was not read) prepares no channel of a ComputeDomain that is not ready, so every worker waits in
ContainerCreating.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL
from ultraserver.rehearse import logs
from ultraserver.rehearse.cluster import Cluster, GpuNode, iso, pod
from ultraserver.rehearse.selectors import matches
from ultraserver.verify.fabric import launcher_labels

_NP = re.compile(r"-np\s+([0-9]+)")
_SIZE = re.compile(r"-(b|e|f)\s+([0-9]+)([KMG]?)")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
HEALTHY_MARGIN = 1.25
"""A healthy rehearsed run reaches this multiple of the job's bus-bandwidth threshold (the rehearsal proves the
judging code paths, not the hardware's bandwidth)."""
RUN_TAKES = timedelta(minutes=6)
"""How long a rehearsed check run takes, from its launcher's creation to its end (canned, not measured)."""


@dataclass(frozen=True)
class RunFaults:
    """How the check runs go wrong in a rehearsal."""

    socket_nodes: frozenset[str] = field(default_factory=frozenset)
    """Nodes whose ranks fall back to TCP sockets in NCCL runs (no EFA provider there)."""
    no_imex: frozenset[str] = field(default_factory=frozenset)
    """Nodes whose IMEX daemon never became ready: a job with a worker there gets no IMEX channel."""


@dataclass(frozen=True)
class Run:
    """One MPIJob's finished run: its launcher pod and log, or no launcher when its workers found no nodes."""

    namespace: str
    job: str
    nodes: tuple[str, ...]
    launcher: dict[str, Any] | None
    log: str
    stuck_workers: tuple[dict[str, Any], ...] = ()
    """Worker pods that never started (their IMEX channel was never prepared); their job has no launcher."""


def _worker(spec: Mapping[str, Any]) -> tuple[int, Mapping[str, Any]]:
    worker = spec["mpiReplicaSpecs"]["Worker"]
    return int(worker.get("replicas", 1)), worker["template"].get("spec") or {}


def _eligible(node: GpuNode, pod_spec: Mapping[str, Any]) -> bool:
    labels = node.to_api()["metadata"]["labels"]
    if not node.ready or not all(labels.get(k) == v for k, v in (pod_spec.get("nodeSelector") or {}).items()):
        return False
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or []:
        selector = ",".join(_requirement(e) for e in term.get("matchExpressions") or [])
        if not matches(selector, labels):
            return False
    return True


def _requirement(expression: Mapping[str, Any]) -> str:
    """A node selector requirement (In, NotIn, Exists, DoesNotExist) in label-selector syntax."""
    key, operator = expression["key"], expression["operator"]
    if operator in ("Exists", "DoesNotExist"):
        return key if operator == "Exists" else f"!{key}"
    return f"{key} {operator.lower()} ({','.join(expression.get('values') or [])})"


def _same_clique(pod_spec: Mapping[str, Any]) -> bool:
    terms = ((pod_spec.get("affinity") or {}).get("podAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or []
    return any(t.get("topologyKey") == CLIQUE_LABEL for t in terms)


def place(cluster: Cluster, spec: Mapping[str, Any], taken: set[str]) -> list[GpuNode]:
    """The nodes an MPIJob's workers land on (one per worker); [] when there are not enough."""
    replicas, pod_spec = _worker(spec)
    by_clique: dict[str, list[GpuNode]] = defaultdict(list)
    for node in cluster.gpu_nodes:
        if _eligible(node, pod_spec):
            by_clique[node.clique].append(node)
    if _same_clique(pod_spec):
        # A later job of the same fleet prefers an UltraServer no earlier job ran on.
        ordered = sorted(by_clique.items(), key=lambda item: (item[0] in taken, item[0]))
        chosen = next((members for _, members in ordered if len(members) >= replicas), [])
        return chosen[:replicas]
    spread = [
        members[i]
        for i in range(max(map(len, by_clique.values()), default=0))
        for members in (by_clique[c] for c in sorted(by_clique))
        if i < len(members)
    ]
    return spread[:replicas] if len(spread) >= replicas else []


def _command(spec: Mapping[str, Any]) -> str:
    containers = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"]
    return " ".join(" ".join(c.get("command") or []) + " " + " ".join(c.get("args") or []) for c in containers)


def _sizes(command: str) -> list[int]:
    found = {flag: int(n) * _UNITS[unit] for flag, n, unit in _SIZE.findall(command)}
    return logs.message_sizes(found.get("b", 1 << 30), found.get("e", 1 << 34), found.get("f", 2))


def run_log(command: str, hosts: list[str], gpus: int, threshold: float, faults: RunFaults) -> str:
    """The launcher log of one run: node report, then nvbandwidth's or all_reduce_perf's output."""
    ranks = int(_NP.findall(command)[-1]) if _NP.findall(command) else len(hosts) * gpus
    ranked_hosts = hosts[: max(ranks // gpus, 1)]
    report = logs.node_report(hosts)
    if "nvbandwidth" in command:
        return report + logs.nvbandwidth_output(ranked_hosts, gpus)
    busbw = threshold * HEALTHY_MARGIN
    per_node = max(ranks // max(len(ranked_hosts), 1), 1)
    rank_hosts = [host for host in ranked_hosts for _ in range(per_node)]
    return report + logs.nccl_output(rank_hosts, _sizes(command), busbw, socket_hosts=faults.socket_nodes)


def finished_launcher(meta: Mapping[str, Any], node: str, joined: datetime, at: datetime) -> dict[str, Any]:
    """The run's launcher pod, Succeeded: made when its last worker's node joined (the in-cluster recheck makes a
    block's checks once its nodes are all Ready), ended ``RUN_TAKES`` later (or at ``at``, whichever is first)."""
    created = min(joined, at)
    launcher = pod(
        meta["namespace"], f"{meta['name']}-launcher-r3h4s", node, launcher_labels(meta["name"]), False, created
    )
    finished = {"exitCode": 0, "finishedAt": iso(min(created + RUN_TAKES, at))}
    status = {"name": "main", "image": "rehearsal", "imageID": "rehearsal", "ready": False, "restartCount": 0}
    launcher["status"].update(phase="Succeeded", containerStatuses=[{**status, "state": {"terminated": finished}}])
    return launcher


def stuck_workers(job: Mapping[str, Any], nodes: Sequence[GpuNode]) -> tuple[dict[str, Any], ...]:
    """The MPIJob's worker pods bound to ``nodes`` and waiting in ContainerCreating, with its worker template's
    labels."""
    meta = job["metadata"]
    template = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    found = []
    for index, node in enumerate(nodes):
        worker = pod(meta["namespace"], f"{meta['name']}-worker-{index}", node.name, labels, False, node.joined)
        waiting = {"name": "main", "image": "rehearsal", "imageID": "", "ready": False, "restartCount": 0}
        worker["status"].update(
            phase="Pending", containerStatuses=[{**waiting, "state": {"waiting": {"reason": "ContainerCreating"}}}]
        )
        found.append(worker)
    return tuple(found)


def runs(
    cluster: Cluster, mpijobs: list[dict[str, Any]], thresholds: Mapping[str, float], faults: RunFaults
) -> list[Run]:
    """Every MPIJob's run. ``thresholds``: MPIJob name -> the bus bandwidth its verdict needs (GB/s)."""
    found: list[Run] = []
    taken: set[str] = set()
    system = cluster.system_nodes[0]["metadata"]["name"] if cluster.system_nodes else ""
    for job in mpijobs:
        meta, spec = job["metadata"], job["spec"]
        nodes = place(cluster, spec, taken)
        if not nodes:
            found.append(Run(meta["namespace"], meta["name"], (), None, ""))
            continue
        if _same_clique(_worker(spec)[1]):
            taken |= {n.clique for n in nodes}
        hosts = [n.name for n in nodes]
        if faults.no_imex.intersection(hosts):
            # The DRA driver prepares no channel of a ComputeDomain whose IMEX daemon is not ready: every worker
            # waits in ContainerCreating, and mpi-operator never starts the launcher (WaitForWorkersReady).
            found.append(Run(meta["namespace"], meta["name"], tuple(hosts), None, "", stuck_workers(job, nodes)))
            continue
        command = _command(spec)
        log = run_log(command, hosts, nodes[0].group.gpus_per_node, thresholds.get(meta["name"], 0.0), faults)
        launcher = finished_launcher(meta, system, max(n.joined for n in nodes), cluster.at)
        found.append(Run(meta["namespace"], meta["name"], tuple(hosts), launcher, log))
    return found
