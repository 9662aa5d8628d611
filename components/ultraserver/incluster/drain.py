"""The drain the cluster runs by itself before EC2 reclaims an UltraServer Capacity Block (docs/capacity-blocks.md,
"Drain before the reclaim"): pure decisions over the API objects (``decide``) and their REST calls (``apply``).

A CronJob (``builders.reclaim_drain``) runs it every minute with the blocks in BLOCKS. From a block's cut-off
(``DRAIN_NOTICE_MINUTES`` before its scale-down, or when an EC2 expiration warning for it was seen, whichever comes
first) it cordons and taints the block's nodes, holds the ClusterQueue while every GB200 node is ending, writes the
reclaim time on pods and Workloads, asks opted-in pods (``CHECKPOINT_LABEL``) for a checkpoint and gives them
``CHECKPOINT_GRACE_MINUTES``, evicts within the PodDisruptionBudgets, and at the deadline (the scale-down, when the
instances are terminated) deletes what is left. A block's nodes are its UltraServer's GB200 nodes created before its
scale-down; DaemonSet pods stay. Like every module of ``incluster`` it imports the standard library only (no image
ships the package); ``status.drain`` drives the same ``run_once`` through the official Kubernetes client.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Protocol

try:
    from ultraserver.incluster.copied_facts import DRAIN_NOTICE_MINUTES, KUEUE_API_VERSION, RECLAIM_LEAD_MINUTES
    from ultraserver.incluster.copied_facts import ULTRASERVER_LABEL as GROUP_LABEL
except ImportError:  # in the cluster: the mounted directory is on sys.path
    from copied_facts import DRAIN_NOTICE_MINUTES, KUEUE_API_VERSION, RECLAIM_LEAD_MINUTES  # type: ignore[no-redef]
    from copied_facts import ULTRASERVER_LABEL as GROUP_LABEL  # type: ignore[no-redef]

CHECKPOINT_GRACE_MINUTES = 10
FORCE_MARGIN_MINUTES = 2
RECLAIM_ANNOTATION = "ultraserver.io/reclaim-at"
CHECKPOINT_LABEL = "ultraserver.io/checkpoint-on-reclaim"
CHECKPOINT_ANNOTATION = "ultraserver.io/checkpoint-requested-at"
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


def _daemon_pod(pod: dict[str, Any]) -> bool:
    return any(o.get("kind") == "DaemonSet" for o in _meta(pod).get("ownerReferences") or [])


def _matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist) of a label selector."""
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        ok = {
            "In": labels.get(key) in values,
            "NotIn": labels.get(key) not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }.get(op, False)
        if not ok:
            return False
    return True


def _budgets(pdbs: list[dict[str, Any]]) -> list[list[Any]]:
    """[namespace, selector, disruptions allowed] per PodDisruptionBudget, as its status reports it."""
    return [
        [
            _meta(p).get("namespace"),
            (p.get("spec") or {}).get("selector") or {},
            (p.get("status") or {}).get("disruptionsAllowed", 0),
        ]
        for p in pdbs
    ]


def _evictable(pod: dict[str, Any], budgets: list[list[Any]]) -> bool:
    """Whether every PodDisruptionBudget over the pod allows one more disruption now (and take it)."""
    labels = _meta(pod).get("labels") or {}
    covering = [b for b in budgets if b[0] == _meta(pod).get("namespace") and _matches(b[1], labels)]
    if any(b[2] < 1 for b in covering):
        return False
    for budget in covering:
        budget[2] -= 1
    return True


def _pod_actions(pod: dict[str, Any], times: Timeline, now: datetime, budgets: list[list[Any]]) -> list[dict]:
    """Annotate, ask for a checkpoint, wait for it, evict within the budgets, or delete at the deadline."""
    meta = _meta(pod)
    ref = {"namespace": meta.get("namespace"), "name": meta["name"]}
    notes = meta.get("annotations") or {}
    wanted = {RECLAIM_ANNOTATION: _iso(times.reclaim)}
    opted_in = (meta.get("labels") or {}).get(CHECKPOINT_LABEL) == "true"
    if opted_in and CHECKPOINT_ANNOTATION not in notes:
        wanted[CHECKPOINT_ANNOTATION] = _iso(now)
    actions = []
    missing = {k: v for k, v in wanted.items() if notes.get(k) != v}
    if missing:
        actions.append({"kind": "annotate-pod", **ref, "annotations": missing})
    if meta.get("deletionTimestamp"):
        return actions
    if now >= times.deadline:
        return [*actions, {"kind": "delete-pod", **ref}]
    asked = notes.get(CHECKPOINT_ANNOTATION) or missing.get(CHECKPOINT_ANNOTATION)
    if opted_in and asked and now < _utc(asked) + timedelta(minutes=CHECKPOINT_GRACE_MINUTES):
        return actions
    if _evictable(pod, budgets):
        actions.append({"kind": "evict-pod", **ref})
    return actions


def _last_level(assignment: dict[str, Any]) -> set[str]:
    """The values of a topology assignment's last level (the node: the Topology ends at the hostname level), in
    Kueue's v1beta1 shape (``domains[].values``) or v1beta2's (``slices[].valuesPerLevel``, a ``universal`` value or
    ``individual`` prefix + roots + suffix); kueue 0.19.2 config/components/crd/bases/kueue.x-k8s.io_workloads.yaml."""
    names: set[str] = set()
    for domain in assignment.get("domains") or []:
        names.update((domain.get("values") or [])[-1:])
    for piece in assignment.get("slices") or []:
        level = (piece.get("valuesPerLevel") or [{}])[-1]
        if level.get("universal"):
            names.add(level["universal"])
        each = level.get("individual") or {}
        names.update(f"{each.get('prefix') or ''}{root}{each.get('suffix') or ''}" for root in each.get("roots") or [])
    return names


def _workload_nodes(workload: dict[str, Any]) -> set[str]:
    """Nodes a Workload's admission placed it on."""
    admission = (workload.get("status") or {}).get("admission") or {}
    names: set[str] = set()
    for assignment in admission.get("podSetAssignments") or []:
        names |= _last_level(assignment.get("topologyAssignment") or {})
    return names


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


def _workload_actions(workloads: list[dict[str, Any]], ending: dict) -> list[dict[str, Any]]:
    """The earliest reclaim time on each Workload placed on an ending node."""
    actions = []
    for workload in workloads:
        placed = sorted(_workload_nodes(workload) & set(ending))
        meta = _meta(workload)
        reclaim = _iso(min(ending[n][1].reclaim for n in placed)) if placed else None
        if reclaim and (meta.get("annotations") or {}).get(RECLAIM_ANNOTATION) != reclaim:
            ref = {"namespace": meta.get("namespace"), "name": meta["name"]}
            actions.append({"kind": "annotate-workload", **ref, "annotations": {RECLAIM_ANNOTATION: reclaim}})
    return actions


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
    actions = _node_actions(nodes, ending) + _queue_actions(queue, nodes, ending) + _workload_actions(workloads, ending)
    budgets = _budgets(pdbs)
    for pod in sorted(pods, key=lambda p: (_meta(p).get("namespace") or "", _meta(p)["name"])):
        host = (pod.get("spec") or {}).get("nodeName")
        done = (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")
        if host in ending and not _daemon_pod(pod) and not done:
            actions += _pod_actions(pod, ending[host][1], now, budgets)
    return actions


class Api(Protocol):
    """The drain's REST calls (``StdlibApi`` below, ``status.drain`` over the official client): ``patch`` is a JSON
    merge patch, ``post`` False on a 429 (an eviction a budget blocks), ``delete`` takes a 404 as done."""

    def get(self, path: str) -> dict[str, Any]: ...
    def patch(self, path: str, body: dict[str, Any]) -> None: ...
    def post(self, path: str, body: dict[str, Any]) -> bool: ...
    def delete(self, path: str) -> None: ...


class RestApi:
    """``Api`` over one ``_call(method, path, body, content type)`` whose errors carry the HTTP status (urllib's
    ``code``, the official client's ``status``): a refused eviction (429) is False, a gone pod's delete (404) done."""

    def _call(self, method: str, path: str, body: Any = None, content: str = "application/json") -> Any:
        raise NotImplementedError

    def get(self, path: str) -> dict[str, Any]:
        return self._call("GET", path)

    def patch(self, path: str, body: dict[str, Any]) -> None:
        self._call("PATCH", path, body, "application/merge-patch+json")

    def post(self, path: str, body: dict[str, Any]) -> bool:
        try:
            self._call("POST", path, body)
        except Exception as err:
            if (getattr(err, "code", None) or getattr(err, "status", None)) == 429:
                return False
            raise
        return True

    def delete(self, path: str) -> None:
        try:
            self._call("DELETE", path)
        except Exception as err:
            if (getattr(err, "code", None) or getattr(err, "status", None)) != 404:
                raise


KUEUE_API = f"/apis/{KUEUE_API_VERSION}"


def _pod_path(action: dict[str, Any]) -> str:
    return f"/api/v1/namespaces/{action['namespace']}/pods/{action['name']}"


def apply(api: Api, action: dict[str, Any]) -> bool:
    """Carry out one action; False when the server refused it (a blocked eviction, retried next run)."""
    kind = action["kind"]
    if kind == "cordon":
        api.patch(f"/api/v1/nodes/{action['name']}", {"spec": {"unschedulable": True, "taints": action["taints"]}})
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


def _items(api: Api, path: str) -> list[dict[str, Any]]:
    return list(api.get(path).get("items") or [])


def gpu_nodes(api: Api) -> list[dict[str, Any]]:
    """The GB200 nodes (those carrying GROUP_LABEL), which the drain and the checks at each join both read."""
    return _items(api, f"/api/v1/nodes?labelSelector={GROUP_LABEL}")


def run_once(
    api: Api,
    blocks: list[Block],
    now: datetime,
    queue_name: str = "",
    warnings: list[dict[str, Any]] | None = None,
    nodes: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Read the cluster (the GB200 nodes unless given), decide and apply; the actions taken (a refused eviction is
    left out)."""
    nodes = gpu_nodes(api) if nodes is None else nodes
    if not ending_nodes(nodes, blocks, now, warnings) and not queue_name:
        return []
    pods = _items(api, "/api/v1/pods")
    pdbs = _items(api, "/apis/policy/v1/poddisruptionbudgets")
    workloads = _items(api, f"{KUEUE_API}/workloads") if queue_name else []
    queue = api.get(f"{KUEUE_API}/clusterqueues/{queue_name}") if queue_name else None
    actions = decide(nodes, pods, pdbs, workloads, queue, blocks, now, warnings)
    return [a for a in actions if apply(api, a)]
