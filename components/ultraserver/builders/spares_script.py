"""The spares controller the cluster runs by itself (docs/health.md, "Spares inside the NVLink domain"): pure decisions
over the GB200 nodes (``decide``) and their REST calls (``apply``), one run a minute inside the reclaim drain's
CronJob (``drain_main.py``), standard library only (no image ships the package).

Per UltraServer of a group with ``sparesPerUltraServer`` (its node-group label, or ``<group>/<clique>`` in a grouped
fleet) it:

- labels every joined node ``active`` or ``spare``, holding back the wanted number of spares among the nodes that
  run no job (a spare gets ``SPARE_TAINT`` NoSchedule, which no job tolerates, so Kueue places nothing there);
- when an active node has been NotReady, or shown a failed health condition, for ``FAILURE_GRACE_MINUTES``: frees
  one spare of the same UltraServer (taint off, label ``active``, notes which node and Workloads it takes over) and
  taints the failed node ``FAILED_TAINT`` NoExecute so the job's pod there is deleted now; Kueue's failed-node
  replacement then finds the freed spare, the only node of the job's NVLink domain with room;
- with no spare left, marks the node failed and says so (the job waits for a human or for the node);
- takes a failed node that is healthy again back as a spare;
- does nothing but report when more than ``SYSTEMIC_FRACTION`` of an UltraServer fails at once (a cluster-wide
  signal, not a bad node);
- returns an ``alert`` action for each spare used and for each UltraServer left with none, which ``drain_main``
  publishes to the stack's SNS topic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

# Copies of facts (this script may import nothing of ours); tests keep them equal.
GROUP_LABEL = "ultraserver.io/ultraserver"
CLIQUE_LABEL = "nvidia.com/gpu.clique"
ROLE_LABEL = "ultraserver.io/node-role"
ACTIVE, SPARE, FAILED = "active", "spare", "failed"
SPARE_TAINT = "ultraserver.io/spare"
FAILED_TAINT = "ultraserver.io/failed"
REPLACES_ANNOTATION = "ultraserver.io/replaces"
PROMOTED_ANNOTATION = "ultraserver.io/promoted-at"
FAILED_ANNOTATION = "ultraserver.io/failed-at"
REASON_ANNOTATION = "ultraserver.io/failed-reason"
MOVED_ANNOTATION = "ultraserver.io/moved-workloads"
HEALTH_CONDITIONS = ("AcceleratedHardwareReady",)
FAILURE_GRACE_MINUTES = 2
SYSTEMIC_FRACTION = 0.5
STANDBY_TAINT = {"key": SPARE_TAINT, "value": "standby", "effect": "NoSchedule"}


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass(frozen=True)
class SpareGroup:
    """One GPU node group with spares: its node-group label value and the spares each of its UltraServers holds."""

    group: str
    spares: int
    grouped: bool = False
    """A grouped fleet (several UltraServers behind one label): UltraServers are told apart by their clique."""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SpareGroup:
        """A group as ``to_json`` writes it."""
        return cls(data["group"], int(data["spares"]), bool(data.get("grouped", False)))

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for the SPARES environment variable."""
        return {"group": self.group, "spares": self.spares, "grouped": self.grouped}


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def _labels(node: dict[str, Any]) -> dict[str, str]:
    return _meta(node).get("labels") or {}


def _notes(node: dict[str, Any]) -> dict[str, str]:
    return _meta(node).get("annotations") or {}


def _taints(node: dict[str, Any]) -> list[dict[str, Any]]:
    return list((node.get("spec") or {}).get("taints") or [])


def ultraserver_of(node: dict[str, Any], groups: dict[str, SpareGroup]) -> str | None:
    """The UltraServer a GB200 node of a spares group belongs to; None for other nodes (and, in a grouped fleet, for
    a node whose clique GPU Feature Discovery has not labelled yet)."""
    labels = _labels(node)
    group = groups.get(labels.get(GROUP_LABEL, ""))
    if group is None:
        return None
    if not group.grouped:
        return group.group
    clique = labels.get(CLIQUE_LABEL)
    return f"{group.group}/{clique}" if clique else None


def failure(node: dict[str, Any], now: datetime) -> tuple[str, datetime] | None:
    """Why and since when a node is failed, once the condition has lasted ``FAILURE_GRACE_MINUTES``; None while it
    is healthy (or not for long enough)."""
    grace = timedelta(minutes=FAILURE_GRACE_MINUTES)
    for condition in (node.get("status") or {}).get("conditions") or []:
        kind, status = condition.get("type"), condition.get("status")
        bad = (kind == "Ready" and status != "True") or (kind in HEALTH_CONDITIONS and status == "False")
        since = condition.get("lastTransitionTime")
        if bad and since and _utc(since) <= now - grace:
            return f"{kind}={status}", _utc(since)
    return None


def _healthy_for(node: dict[str, Any], now: datetime) -> bool:
    """Ready (and no failed health condition) for at least the grace: a repaired node, not one flapping."""
    conditions = (node.get("status") or {}).get("conditions") or []
    ready = [c for c in conditions if c.get("type") == "Ready" and c.get("status") == "True"]
    bad = [c for c in conditions if c.get("type") in HEALTH_CONDITIONS and c.get("status") == "False"]
    since = str(ready[0].get("lastTransitionTime") or "") if ready else ""
    return bool(since) and not bad and _utc(since) <= now - timedelta(minutes=FAILURE_GRACE_MINUTES)


def role(node: dict[str, Any]) -> str:
    """What the controller made of a node: active, spare, failed, or '' before it has seen it."""
    if any(t.get("key") == SPARE_TAINT for t in _taints(node)):
        return SPARE
    return _labels(node).get(ROLE_LABEL, "")


def _last_level(assignment: dict[str, Any]) -> set[str]:
    """The node names of a Kueue topology assignment, v1beta1 (``domains``) or v1beta2 (``slices``) shape."""
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


def workloads_on(workloads: list[dict[str, Any]], node: str) -> list[str]:
    """namespace/name of each Kueue Workload whose admission placed a pod on ``node``."""
    found = []
    for workload in workloads:
        admission = (workload.get("status") or {}).get("admission") or {}
        for assignment in admission.get("podSetAssignments") or []:
            if node in _last_level(assignment.get("topologyAssignment") or {}):
                found.append(f"{_meta(workload).get('namespace')}/{_meta(workload)['name']}")
                break
    return found


def _patch(node: dict[str, Any], labels: dict[str, Any], notes: dict[str, Any], taints: list[dict[str, Any]]) -> dict:
    return {"kind": "patch-node", "name": _meta(node)["name"], "labels": labels, "annotations": notes, "taints": taints}


def _without(taints: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    return [t for t in taints if t.get("key") != key]


def _designate(members: list[dict[str, Any]], wanted: int, busy: set[str]) -> list[dict[str, Any]]:
    """Label the nodes not seen before: spares first (from the idle ones, last names first) up to ``wanted``."""
    spares = sum(1 for n in members if role(n) == SPARE)
    fresh = sorted((n for n in members if not role(n)), key=lambda n: _meta(n)["name"], reverse=True)
    actions = []
    for node in fresh:
        name = _meta(node)["name"]
        if spares < wanted and name not in busy and _ready(node):
            spares += 1
            actions.append(
                _patch(node, {ROLE_LABEL: SPARE}, {}, [*_without(_taints(node), SPARE_TAINT), STANDBY_TAINT])
            )
        else:
            actions.append(_patch(node, {ROLE_LABEL: ACTIVE}, {}, _taints(node)))
    return actions


def _alert(ultraserver: str, subject: str, message: str) -> dict[str, Any]:
    return {"kind": "alert", "ultraserver": ultraserver, "subject": subject[:100], "message": message}


def _replace(
    ultraserver: str, failed: dict[str, Any], why: tuple[str, datetime], spares: list[dict], moved: list[str]
) -> list[dict[str, Any]]:
    """Free a spare for the failed node (or mark it failed with none left), with the alerts."""
    name, (reason, since) = _meta(failed)["name"], why
    marked = {FAILED_ANNOTATION: _iso(since), REASON_ANNOTATION: reason}
    if not spares:
        return [
            _patch(failed, {ROLE_LABEL: FAILED}, marked, _taints(failed)),
            _alert(
                ultraserver,
                f"UltraServer {ultraserver}: node {name} failed, no spare left",
                f"Node {name} of UltraServer {ultraserver} failed ({reason} since {_iso(since)}) and the UltraServer "
                f"has no spare left: the job(s) on it ({', '.join(moved) or 'none'}) wait for a human or for the node. "
                "Check `ultraserver status`; reboot or replace the instance.",
            ),
        ]
    spare = spares[0]
    spare_name = _meta(spare)["name"]
    failed_taint = {"key": FAILED_TAINT, "value": reason.split("=")[0], "effect": "NoExecute"}
    left = len(spares) - 1
    jobs = ", ".join(moved) or "no job ran on it"
    actions = [
        _patch(
            spare,
            {ROLE_LABEL: ACTIVE},
            {REPLACES_ANNOTATION: name, MOVED_ANNOTATION: ",".join(moved)},
            _without(_taints(spare), SPARE_TAINT),
        ),
        _patch(failed, {ROLE_LABEL: FAILED}, marked, [*_without(_taints(failed), FAILED_TAINT), failed_taint]),
        _alert(
            ultraserver,
            f"UltraServer {ultraserver}: spare {spare_name} replaces failed node {name}",
            f"Node {name} of UltraServer {ultraserver} failed ({reason} since {_iso(since)}). Spare {spare_name} of "
            f"the same UltraServer took its place; Kueue moves the job's pod there ({jobs}). Spares left in "
            f"{ultraserver}: {left}.",
        ),
    ]
    if left == 0:
        actions.append(
            _alert(
                ultraserver,
                f"UltraServer {ultraserver}: no spare left",
                f"UltraServer {ultraserver} has used its last spare: the next failed node stops its job.",
            )
        )
    return actions


def decide(
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    workloads: list[dict[str, Any]],
    groups: list[SpareGroup],
    now: datetime,
) -> list[dict[str, Any]]:
    """Every action due at ``now`` (plain dicts, applied in order)."""
    by_group = {g.group: g for g in groups}
    members: dict[str, list[dict[str, Any]]] = {}
    for node in sorted(nodes, key=lambda n: _meta(n)["name"]):
        ultraserver = ultraserver_of(node, by_group)
        if ultraserver is not None:
            members.setdefault(ultraserver, []).append(node)
    busy = {
        str((p.get("spec") or {}).get("nodeName"))
        for p in pods
        if not any(o.get("kind") == "DaemonSet" for o in _meta(p).get("ownerReferences") or [])
        and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
    }
    actions: list[dict[str, Any]] = []
    for ultraserver, ours in sorted(members.items()):
        wanted = by_group[ultraserver.split("/")[0]].spares
        actions += _designate(ours, wanted, busy)
        failing = [(n, failure(n, now)) for n in ours if role(n) == ACTIVE]
        failed = [(n, why) for n, why in failing if why is not None]
        if len(failed) > SYSTEMIC_FRACTION * len(ours):
            continue  # a cluster-wide signal: status and verify show it, no spare is spent on it
        standby = [n for n in ours if role(n) == SPARE and failure(n, now) is None and _ready(n)]
        for node, why in failed:
            assert why is not None
            name = _meta(node)["name"]
            actions += _replace(ultraserver, node, why, standby, workloads_on(workloads, name))
            standby = standby[1:]
        for node in ours:
            if role(node) == FAILED and _healthy_for(node, now):
                notes = {FAILED_ANNOTATION: None, REASON_ANNOTATION: None}
                taints = [*_without(_taints(node), FAILED_TAINT), STANDBY_TAINT]
                actions.append(_patch(node, {ROLE_LABEL: SPARE}, notes, taints))
    for action in actions:
        if action["kind"] == "patch-node" and REPLACES_ANNOTATION in action["annotations"]:
            action["annotations"][PROMOTED_ANNOTATION] = _iso(now)
    return actions


def _ready(node: dict[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def apply(api: Any, action: dict[str, Any], publish: Any = None) -> bool:
    """Carry out one action through ``api`` (drain_script.Api); an alert goes to ``publish(subject, message)``, or
    is only printed without one."""
    if action["kind"] == "patch-node":
        body = {
            "metadata": {"labels": action["labels"], "annotations": action["annotations"]},
            "spec": {"taints": action["taints"]},
        }
        api.patch(f"/api/v1/nodes/{action['name']}", body)
    elif action["kind"] == "alert" and publish is not None:
        publish(action["subject"], action["message"])
    return True


def run_once(
    api: Any, groups: list[SpareGroup], now: datetime, nodes: list[dict[str, Any]], publish: Any = None
) -> list[dict[str, Any]]:
    """Read the pods and Kueue's Workloads, decide over ``nodes`` (the GB200 nodes), apply; the actions taken."""
    if not groups:
        return []
    pods = list(api.get("/api/v1/pods").get("items") or [])
    try:
        workloads = list(api.get("/apis/kueue.x-k8s.io/v1beta2/workloads").get("items") or [])
    except Exception:  # a stack without Kueue serves no Workloads: no job to name
        workloads = []
    actions = decide(nodes, pods, workloads, groups, now)
    return [a for a in actions if apply(api, a, publish)]


def groups_from(text: str) -> list[SpareGroup]:
    """The SPARES environment variable's groups."""
    return [SpareGroup.from_json(g) for g in json.loads(text or "[]")]
