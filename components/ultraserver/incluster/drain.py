"""The drain the cluster runs by itself before EC2 reclaims an UltraServer Capacity Block (docs/capacity-blocks.md,
"Drain before the reclaim"): pure decisions over the API objects (``decide``) and their REST calls (``apply``).

A CronJob (``builders.reclaim_drain``) runs it every minute with the blocks in BLOCKS. From a block's cut-off
(``DRAIN_NOTICE_MINUTES`` before its scale-down, or when an EC2 expiration warning for it was seen, whichever comes
first) it cordons and taints the block's nodes, holds the ClusterQueue while every GB200 node is ending, writes the
reclaim time on pods and Workloads and each pod's own eviction time, asks every pod that did not opt out
(``CHECKPOINT_LABEL: "false"``) for a checkpoint and gives it ``CHECKPOINT_GRACE_MINUTES``, evicts within the
PodDisruptionBudgets, and at the deadline (the scale-down, when the instances are terminated) deletes what is left.
When EC2's end moves later it releases the nodes it cut off. A block's nodes are its UltraServer's GB200 nodes
created before its scale-down; DaemonSet pods stay. Like every module of ``incluster`` it imports the standard
library only (no image ships the package); ``status.drain`` drives the same ``run_once`` through the official
Kubernetes client.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

try:
    from ultraserver.incluster.copied_facts import (
        DRAIN_NOTICE_MINUTES,
        KUEUE_API_VERSION,
        RECLAIM_LEAD_MINUTES,
        WORKLOAD_ANNOTATION,
    )
    from ultraserver.incluster.copied_facts import ULTRASERVER_LABEL as GROUP_LABEL
    from ultraserver.incluster.placement import budgets_of, daemon_pod, evictable, workload_nodes
    from ultraserver.incluster.rest import Api, failure, gpu_nodes, items
except ImportError:  # in the cluster: the mounted directory is on sys.path
    from copied_facts import (  # type: ignore[no-redef]
        DRAIN_NOTICE_MINUTES,
        KUEUE_API_VERSION,
        RECLAIM_LEAD_MINUTES,
        WORKLOAD_ANNOTATION,
    )
    from copied_facts import ULTRASERVER_LABEL as GROUP_LABEL  # type: ignore[no-redef]
    from placement import budgets_of, daemon_pod, evictable, workload_nodes  # type: ignore[no-redef]
    from rest import Api, failure, gpu_nodes, items  # type: ignore[no-redef]

CHECKPOINT_GRACE_MINUTES = 10
FORCE_MARGIN_MINUTES = 2
RECLAIM_ANNOTATION = "ultraserver.io/reclaim-at"
CHECKPOINT_LABEL = "ultraserver.io/checkpoint-on-reclaim"
CHECKPOINT_ANNOTATION = "ultraserver.io/checkpoint-requested-at"
EVICT_ANNOTATION = "ultraserver.io/evict-at"
RECLAIM_TAINT = "ultraserver.io/reclaim"
HELD_ANNOTATION = "ultraserver.io/held-for-reclaim"


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)  # 3.11 reads Z itself


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class Block:
    """One Capacity Block of one UltraServer (its nodes carry ``GROUP_LABEL=ultraserver``)."""

    ultraserver: str
    reservations: tuple[str, ...]
    start: datetime
    end: datetime
    lead_minutes: int
    nodes: int = 0
    """Nodes the node group runs in the block (its desired size; 0 when not known): the fabric checks wait for all."""
    group: str = ""
    """Stem of the names of the block's Auto Scaling group (``drain_watch.block_group``); '' when not known."""
    scale_down_action: str = ""
    """Name of the group's scheduled scale-down for this block, which the drain puts again when EC2's end moves."""
    deployed: bool = True
    """Whether the last deploy pointed the group at this block. False for a later block of a ``handover: switch``
    group deployed before the gap that leads to it: its launch template still names an earlier reservation, so
    the block gets no node unless a ``pulumi up`` runs before its start (``drain_watch.switch_findings``)."""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Block:
        """A block as ``to_json`` writes it."""
        return cls(
            data["ultraserver"],
            tuple(data.get("reservations", ())),
            _utc(data["start"]),
            _utc(data["end"]),
            int(data["leadMinutes"]),
            int(data.get("nodes", 0)),
            str(data.get("group", "")),
            str(data.get("scaleDownAction", "")),
            bool(data.get("deployed", True)),
        )

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for the BLOCKS environment variable."""
        return {
            "ultraserver": self.ultraserver,
            "reservations": list(self.reservations),
            "start": _iso(self.start),
            "end": _iso(self.end),
            "leadMinutes": self.lead_minutes,
            "nodes": self.nodes,
            "group": self.group,
            "scaleDownAction": self.scale_down_action,
            "deployed": self.deployed,
        }


@dataclass(frozen=True)
class Timeline:
    """When a block's drain starts, when what is left is deleted, and when EC2 reclaims it."""

    cutoff: datetime
    deadline: datetime
    reclaim: datetime
    scale_down: datetime


def timeline(block: Block, warnings: list[dict[str, Any]] | None = None) -> Timeline:
    """The block's drain times: from its end, or earlier when an expiration warning for it was seen.

    A warning (``{"reservation", "end", "seen"}``, the EventBridge event's ``detail.capacity-reservation-id`` and
    ``detail.end-date`` and when it arrived) carries the end EC2 holds, which wins over the stack's.
    """
    mine = [w for w in warnings or [] if w.get("reservation") in block.reservations]
    end = _utc(mine[0]["end"]) if mine and mine[0].get("end") else block.end
    scale_down = end - timedelta(minutes=block.lead_minutes)
    reclaim = end - timedelta(minutes=RECLAIM_LEAD_MINUTES)
    cutoff = scale_down - timedelta(minutes=DRAIN_NOTICE_MINUTES)
    deadline = min(scale_down, reclaim)
    if mine:
        seen = min(_utc(w["seen"]) for w in mine)
        cutoff = min(cutoff, seen)
        # Learnt late (the stack's end was wrong): evict within the budgets for what time is left, then delete.
        late = min(seen + timedelta(minutes=DRAIN_NOTICE_MINUTES), reclaim - timedelta(minutes=FORCE_MARGIN_MINUTES))
        deadline = max(deadline, late)
    return Timeline(cutoff, deadline, reclaim, scale_down)


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def _created(obj: dict[str, Any]) -> datetime | None:
    stamp = _meta(obj).get("creationTimestamp")
    return _utc(stamp) if isinstance(stamp, str) else stamp


def ending_nodes(nodes: list[dict[str, Any]], blocks: list[Block], now: datetime, warnings: Any = None) -> dict:
    """Node name -> (block, timeline) for every GB200 node whose block is in its drain at ``now`` (warnings count
    from when they were seen)."""
    found: dict[str, tuple[Block, Timeline]] = {}
    known = [w for w in warnings or [] if _utc(w["seen"]) <= now]
    for block in blocks:
        times = timeline(block, known)
        if not times.cutoff <= now < block.end + timedelta(days=1):
            continue
        for node in nodes:
            labels = _meta(node).get("labels") or {}
            created = _created(node)
            if labels.get(GROUP_LABEL) == block.ultraserver and (created is None or created < times.scale_down):
                found[_meta(node)["name"]] = (block, times)
    return found


def _pod_actions(pod: dict[str, Any], times: Timeline, now: datetime, budgets: list[list[Any]]) -> list[dict]:
    """Tell (``reclaim-at``, and ``evict-at``, the pod's real eviction time), ask for a checkpoint, wait the checkpoint
    window, evict within the budgets, or delete at the deadline. Every pod is asked and waited for unless it opted
    out (``CHECKPOINT_LABEL: "false"``): then it is evicted at the cut-off, which its ``evict-at`` says."""
    meta = _meta(pod)
    ref = {"namespace": meta.get("namespace"), "name": meta["name"]}
    notes = meta.get("annotations") or {}
    opted_out = (meta.get("labels") or {}).get(CHECKPOINT_LABEL) == "false"
    asked = _utc(notes[CHECKPOINT_ANNOTATION]) if CHECKPOINT_ANNOTATION in notes else now
    window = timedelta(minutes=0 if opted_out else CHECKPOINT_GRACE_MINUTES)
    evict_at = min(max(times.cutoff, asked) + window, times.deadline)
    wanted = {RECLAIM_ANNOTATION: _iso(times.reclaim), EVICT_ANNOTATION: _iso(evict_at)}
    if not opted_out:
        wanted[CHECKPOINT_ANNOTATION] = _iso(asked)
    actions = []
    missing = {k: v for k, v in wanted.items() if notes.get(k) != v}
    if missing:
        actions.append({"kind": "annotate-pod", **ref, "annotations": missing})
    if meta.get("deletionTimestamp"):
        return actions
    if now >= times.deadline:
        return [*actions, {"kind": "delete-pod", **ref}]
    if now >= evict_at and evictable(pod, budgets):
        actions.append({"kind": "evict-pod", **ref})
    return actions


def _queue_actions(queue: dict[str, Any] | None, nodes: list[dict[str, Any]], ending: dict) -> list[dict]:
    """Hold the ClusterQueue while every GB200 node is ending; release it (only if this drain held it) once none is."""
    if not queue:
        return []
    gb200 = [_meta(n)["name"] for n in nodes if (_meta(n).get("labels") or {}).get(GROUP_LABEL)]
    all_ending = bool(gb200) and all(name in ending for name in gb200)
    spec = queue.get("spec") or {}
    held_by_us = HELD_ANNOTATION in (_meta(queue).get("annotations") or {})
    name = _meta(queue)["name"]
    if all_ending and spec.get("stopPolicy", "None") == "None":
        return [{"kind": "hold-queue", "name": name}]
    if not all_ending and held_by_us:
        return [{"kind": "release-queue", "name": name}]
    return []


def _node_actions(nodes: list[dict[str, Any]], ending: dict) -> list[dict[str, Any]]:
    """Cordon and taint each ending node not yet tainted (a taint value is a label value: 20261215T1030Z)."""
    actions = []
    for node in nodes:
        name = _meta(node)["name"]
        taints = (node.get("spec") or {}).get("taints") or []
        if name in ending and not any(t.get("key") == RECLAIM_TAINT for t in taints):
            taint = {"key": RECLAIM_TAINT, "value": f"{ending[name][1].reclaim:%Y%m%dT%H%MZ}", "effect": "NoSchedule"}
            actions.append({"kind": "cordon", "name": name, "taints": [*taints, taint]})
    return actions


def _release_actions(nodes: list[dict[str, Any]], ending: dict) -> list[dict[str, Any]]:
    """Uncordon and untaint each node this drain cut off that is no longer ending (its block's end moved later: an
    extension EC2 confirmed after the cut-off). Only nodes carrying the drain's taint: others' cordons stay."""
    actions = []
    for node in nodes:
        name = _meta(node)["name"]
        taints = (node.get("spec") or {}).get("taints") or []
        if name not in ending and any(t.get("key") == RECLAIM_TAINT for t in taints):
            kept = [t for t in taints if t.get("key") != RECLAIM_TAINT]
            actions.append({"kind": "release", "name": name, "taints": kept})
    return actions


def _workload_times(workloads: list[dict[str, Any]], ending: dict) -> dict[tuple[Any, Any], Timeline]:
    """(namespace, name) -> the timeline of the earliest reclaim among the ending nodes each Workload is placed on."""
    found = {}
    for workload in workloads:
        placed = workload_nodes(workload) & set(ending)
        if placed:
            meta = _meta(workload)
            found[(meta.get("namespace"), meta["name"])] = min((ending[n][1] for n in placed), key=lambda t: t.reclaim)
    return found


def _workload_actions(workloads: list[dict[str, Any]], times: dict[tuple[Any, Any], Timeline]) -> list[dict]:
    """The earliest reclaim time on each Workload placed on an ending node."""
    actions = []
    for workload in workloads:
        meta = _meta(workload)
        ref = {"namespace": meta.get("namespace"), "name": meta["name"]}
        if (ref["namespace"], ref["name"]) not in times:
            continue
        reclaim = _iso(times[(ref["namespace"], ref["name"])].reclaim)
        if (meta.get("annotations") or {}).get(RECLAIM_ANNOTATION) != reclaim:
            actions.append({"kind": "annotate-workload", **ref, "annotations": {RECLAIM_ANNOTATION: reclaim}})
    return actions


def _pod_times(pod: dict[str, Any], ending: dict, spans: dict[tuple[Any, Any], Timeline]) -> Timeline | None:
    """The timeline a pod is drained by: its node's, or its Workload's (WORKLOAD_ANNOTATION) when that one's
    earliest reclaim comes first. A job over two UltraServers dies with the first one's eviction, so every one of its
    pods (rank 0 wherever it runs) must be told that time and checkpoint before it."""
    own = ending[host][1] if (host := (pod.get("spec") or {}).get("nodeName")) in ending else None
    meta = _meta(pod)
    shared = spans.get((meta.get("namespace"), (meta.get("annotations") or {}).get(WORKLOAD_ANNOTATION)))
    if shared is None or (own is not None and own.reclaim <= shared.reclaim):
        return own
    # Told the job's times; what is left is deleted only at its own node's deadline (its instance's scale-down).
    return (
        shared
        if own is None
        else Timeline(min(own.cutoff, shared.cutoff), own.deadline, shared.reclaim, own.scale_down)
    )


def decide(
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    pdbs: list[dict[str, Any]],
    workloads: list[dict[str, Any]],
    queue: dict[str, Any] | None,
    blocks: list[Block],
    now: datetime,
    warnings: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Every action due at ``now`` (plain dicts, applied in order); none outside every block's drain."""
    ending = ending_nodes(nodes, blocks, now, warnings)
    actions = _node_actions(nodes, ending) + _release_actions(nodes, ending) + _queue_actions(queue, nodes, ending)
    spans = _workload_times(workloads, ending)
    actions += _workload_actions(workloads, spans)
    budgets = budgets_of(pdbs)
    for pod in sorted(pods, key=lambda p: (_meta(p).get("namespace") or "", _meta(p)["name"])):
        times = _pod_times(pod, ending, spans)
        done = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
        if times is None or daemon_pod(pod) or done:
            continue
        # A pod of the job on a node that is not ending is told, never evicted (and takes no budget): its UltraServer
        # keeps serving.
        if (pod.get("spec") or {}).get("nodeName") in ending:
            actions += _pod_actions(pod, times, now, budgets)
        else:
            actions += [a for a in _pod_actions(pod, times, now, []) if a["kind"] == "annotate-pod"]
    return actions


KUEUE_API = f"/apis/{KUEUE_API_VERSION}"


def _pod_path(action: dict[str, Any]) -> str:
    return f"/api/v1/namespaces/{action['namespace']}/pods/{action['name']}"


def apply(api: Api, action: dict[str, Any]) -> bool:
    """Carry out one action; False when the server refused it (a blocked eviction, retried next run)."""
    kind = action["kind"]
    if kind in ("cordon", "release"):
        spec = {"unschedulable": kind == "cordon", "taints": action["taints"]}
        api.patch(f"/api/v1/nodes/{action['name']}", {"spec": spec})
    elif kind == "annotate-pod":
        api.patch(_pod_path(action), {"metadata": {"annotations": action["annotations"]}})
    elif kind == "annotate-workload":
        path = f"{KUEUE_API}/namespaces/{action['namespace']}/workloads/{action['name']}"
        api.patch(path, {"metadata": {"annotations": action["annotations"]}})
    elif kind == "evict-pod":
        body = {
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {k: action[k] for k in ("name", "namespace")},
        }
        return api.post(f"{_pod_path(action)}/eviction", body)
    elif kind == "delete-pod":
        api.delete(_pod_path(action))
    elif kind in ("hold-queue", "release-queue"):
        hold = kind == "hold-queue"
        body = {
            "metadata": {"annotations": {HELD_ANNOTATION: "true" if hold else None}},
            "spec": {"stopPolicy": "Hold" if hold else "None"},
        }
        api.patch(f"{KUEUE_API}/clusterqueues/{action['name']}", body)
    return True


def _read(api: Api, path: str, step: str, failures: list[dict[str, Any]], single: bool = False) -> Any:
    """A list (or with ``single`` one object) the drain reads; on a failed call the failure is recorded and the run
    goes on without it (None), so the steps that do not need it still run."""
    try:
        return api.get(path) if single else items(api, path)
    except Exception as err:  # any one call may fail (403, 5xx, a timeout): report it, run the other steps
        failures.append(failure(step, path, err))
        return None


def _target(action: dict[str, Any]) -> str:
    return "/".join(str(action[k]) for k in ("namespace", "name") if action.get(k))


def run_once(
    api: Api,
    blocks: list[Block],
    now: datetime,
    queue_name: str = "",
    warnings: list[dict[str, Any]] | None = None,
    nodes: list[dict[str, Any]] | None = None,
    failures: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Read the cluster (the GB200 nodes unless given), decide and apply; the actions taken (a refused eviction is
    left out). A failing call is added to ``failures`` (step, target, HTTP status, error) and every other step still
    runs: a 403 on the ClusterQueue must not keep the pods from being told and evicted."""
    failures = [] if failures is None else failures
    nodes = gpu_nodes(api) if nodes is None else nodes
    ending = ending_nodes(nodes, blocks, now, warnings)
    tainted = any(t.get("key") == RECLAIM_TAINT for n in nodes for t in (n.get("spec") or {}).get("taints") or [])
    if not ending and not tainted and not queue_name:
        return []
    pods = _read(api, "/api/v1/pods", "list-pods", failures) if ending else []
    pdbs = _read(api, "/apis/policy/v1/poddisruptionbudgets", "list-budgets", failures) if ending else []
    workloads = _read(api, f"{KUEUE_API}/workloads", "list-workloads", failures) if queue_name and ending else []
    queue = _read(api, f"{KUEUE_API}/clusterqueues/{queue_name}", "get-queue", failures, True) if queue_name else None
    # Without the budgets no eviction is known to be safe: only the deadline's deletes go on.
    budgets_known = pdbs is not None
    actions = decide(nodes, pods or [], pdbs or [], workloads or [], queue, blocks, now, warnings)
    taken = []
    for action in actions:
        if action["kind"] == "evict-pod" and not budgets_known:
            continue
        try:
            if apply(api, action):
                taken.append(action)
        except Exception as err:  # reported, and the next action still runs
            failures.append(failure(action["kind"], _target(action), err))
    return taken
