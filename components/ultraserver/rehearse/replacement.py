"""What Kubernetes and Kueue v0.19.2 do to a running whole-UltraServer job when one of its nodes fails, as a rehearsal
replays it minute by minute beside the toolkit's spares controller (``incluster/spares.py``).

Each step follows the upstream code it names (kubernetes-sigs/kueue at tag v0.19.2, commit 8eab6877; docs/health.md
quotes the lines):

- taint eviction: a pod on a node with a NoExecute taint it does not tolerate is deleted at once; a pod on a NotReady
  node is deleted ``NOT_READY_TOLERATION_SECONDS`` after the node went NotReady (the toleration the
  DefaultTolerationSeconds admission plugin adds to every pod);
- Kueue's TAS node controller (pkg/controller/tas/node_controller.go): a node of the workload's topology assignment
  that is not Ready and holds none of the workload's pods still running goes into ``status.unhealthyNodes``
  (lines 385-389, 480-484), and so does one with a scheduling taint the job does not tolerate once the job's pods
  there are gone (lines 390-410, TASReplaceNodeOnNodeTaints); a second such node evicts the workload (lines 489-507);
- Kueue's scheduler (pkg/cache/scheduler/tas_flavor_snapshot.go): the replacement for ``unhealthyNodes[0]`` is searched
  inside the domain of the pod set's required topology level that holds the rest of the assignment (lines 693-723,
  759-813, 1902) among nodes that are Ready, schedulable and carry no NoSchedule/NoExecute taint the pod set and the
  flavor do not tolerate (pkg/cache/scheduler/tas_nodes_cache.go lines 57-59, scheduling_simulator_default.go lines
  72-79), with room for one whole-node pod; none found evicts the workload (pkg/scheduler/scheduler.go lines 424-426,
  909-921, TASFailedNodeReplacementFailFast on by default since 0.14);
- an evicted workload is admitted again as a whole when one domain of the required level has room for all its pods.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

NOT_READY_TOLERATION_SECONDS = 300
"""tolerationSeconds of the not-ready/unreachable NoExecute tolerations the DefaultTolerationSeconds admission plugin
adds to every pod (https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/
#defaulttolerationseconds)."""


def _ready_since(node: Mapping[str, Any]) -> tuple[bool, datetime | None]:
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Ready":
            since = condition.get("lastTransitionTime")
            return condition.get("status") == "True", datetime.fromisoformat(since.replace("Z", "+00:00"))
    return False, None


def tolerated(taint: Mapping[str, Any], tolerations: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a toleration matches the taint (key, Exists or Equal value, effect or any effect)."""
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == taint.get("key")):
            return True
        if t.get("key") == taint.get("key") and t.get("value") == taint.get("value"):
            return True
    return False


def placeable(node: Mapping[str, Any], tolerations: Sequence[Mapping[str, Any]]) -> bool:
    """A node TAS may place a pod on: Ready, not cordoned, every scheduling taint tolerated."""
    ready, _ = _ready_since(node)
    taints = [t for t in (node.get("spec") or {}).get("taints") or [] if t.get("effect") in ("NoSchedule", "NoExecute")]
    unschedulable = (node.get("spec") or {}).get("unschedulable")
    return ready and not unschedulable and all(tolerated(t, tolerations) for t in taints)


@dataclass
class Job:
    """One queued whole-node job: ``count`` pods, one per node, all inside one domain of ``level`` (required)."""

    name: str
    count: int
    level: str
    """The node label of the required topology level (the NVLink clique)."""
    tolerations: list[dict[str, Any]]
    """The pod set's tolerations and the flavor's."""
    selector: dict[str, str] = field(default_factory=dict)
    """The pod set's nodeSelector (TAS leaves out nodes it does not match: scheduling_simulator_default.go 81-91)."""
    pods: dict[str, str] = field(default_factory=dict)
    """Pod name -> node, of the pods running now."""
    unhealthy: list[str] = field(default_factory=list)
    evictions: list[str] = field(default_factory=list)
    moves: list[tuple[str, str]] = field(default_factory=list)
    """(failed node, replacement) of each replacement Kueue made."""
    history: list[tuple[datetime, dict[str, str]]] = field(default_factory=list)
    """Every placement the job had, with when."""
    _serial: int = 0

    def _pod(self, node: str) -> None:
        self._serial += 1
        self.pods[f"{self.name}-{self._serial}"] = node


@dataclass
class Cluster:
    """The nodes (API objects the controller patches too) and the jobs on them."""

    nodes: dict[str, dict[str, Any]]
    jobs: list[Job] = field(default_factory=list)
    deleted: dict[str, datetime] = field(default_factory=dict)
    """Pods deleted by taint eviction, with when."""

    def _used(self) -> set[str]:
        return {n for job in self.jobs for n in job.pods.values()}

    def _domain(self, node: str, level: str) -> str:
        return ((self.nodes.get(node) or {}).get("metadata", {}).get("labels") or {}).get(level, "")

    def _selects(self, job: Job, node: str) -> bool:
        labels = (self.nodes[node].get("metadata") or {}).get("labels") or {}
        return all(labels.get(k) == v for k, v in job.selector.items())

    def admit(self, job: Job, now: datetime) -> bool:
        """Place a job with no pods in the fitting domain with the fewest free nodes (TAS BestFit); False if none."""
        used = self._used()
        free: dict[str, list[str]] = {}
        for name, node in sorted(self.nodes.items()):
            if name not in used and placeable(node, job.tolerations) and self._selects(job, name):
                free.setdefault(self._domain(name, job.level), []).append(name)
        fits = sorted((len(v), k) for k, v in free.items() if k and len(v) >= job.count)
        if not fits:
            return False
        for name in free[fits[0][1]][: job.count]:
            job._pod(name)
        job.history.append((now, dict(job.pods)))
        return True

    def step(self, now: datetime) -> None:
        """One pass of taint eviction, Kueue's node controller and scheduler at ``now``."""
        for job in self.jobs:
            self._evict_pods(job, now)
            self._node_controller(job, now)
            if job.unhealthy:
                self._replace(job, now)
            if not job.pods and not job.unhealthy:
                self.admit(job, now)

    def _evict_pods(self, job: Job, now: datetime) -> None:
        for pod, node_name in list(job.pods.items()):
            node = self.nodes.get(node_name)
            ready, since = _ready_since(node) if node else (False, None)
            no_execute = [t for t in (node or {}).get("spec", {}).get("taints") or [] if t.get("effect") == "NoExecute"]
            untolerated = any(not tolerated(t, job.tolerations) for t in no_execute)
            expired = not ready and since is not None and now >= since + timedelta(seconds=NOT_READY_TOLERATION_SECONDS)
            if node is None or untolerated or expired:
                del job.pods[pod]
                self.deleted[pod] = now

    def _node_controller(self, job: Job, now: datetime) -> None:
        assigned = set(job.history[-1][1].values()) if job.history else set()
        running = set(job.pods.values())
        for node_name in sorted(assigned - running):
            # Not Ready, or a scheduling taint the job does not tolerate (TASReplaceNodeOnNodeTaints, lines 390-410).
            if placeable(self.nodes.get(node_name) or {}, job.tolerations) or node_name in job.unhealthy:
                continue
            if job.unhealthy:
                # nodeMultipleFailuresEvictionMessageFormat: the whole workload is evicted and queued again.
                self._evict(job, f"multiple node failures: {', '.join([*job.unhealthy, node_name])}", now)
                return
            job.unhealthy.append(node_name)

    @staticmethod
    def _evict(job: Job, why: str, now: datetime) -> None:
        """The workload loses its admission: its pods go, it is queued again as a whole."""
        job.evictions.append(why)
        job.pods.clear()
        job.unhealthy.clear()
        job.history.append((now, {}))

    def _replace(self, job: Job, now: datetime) -> None:
        failed = job.unhealthy[0]
        rest = [n for n in job.pods.values() if n != failed]
        domain = self._domain(rest[0], job.level) if rest else ""
        used = self._used()
        candidates = [
            name
            for name, node in sorted(self.nodes.items())
            if name not in used
            and placeable(node, job.tolerations)
            and self._selects(job, name)
            and (not domain or self._domain(name, job.level) == domain)
        ]
        if not candidates:
            self._evict(job, f"no replacement for unhealthy node(s): {failed}", now)
            return
        job._pod(candidates[0])
        job.moves.append((failed, candidates[0]))
        job.unhealthy.clear()
        job.history.append((now, dict(job.pods)))
