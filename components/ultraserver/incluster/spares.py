"""The spares controller the cluster runs by itself (docs/health.md, "Spares inside the NVLink domain"): pure decisions
over the GB200 nodes (``decide``) and their REST calls (``apply``), one run a minute inside the reclaim drain's
CronJob (``drain_main``), standard library only like every module of ``incluster`` (no image ships the package).

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
- reports (``findings``) each spare used and each UltraServer left with failed nodes and no spare, which
  ``drain_main`` publishes once to the stack's SNS topic.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

try:
    from ultraserver.incluster.copied_facts import (
        ACTIVE,
        CLIQUE_LABEL,
        FAILED,
        FAILED_ANNOTATION,
        FAILED_TAINT,
        FAILURE_GRACE_MINUTES,
        HEALTH_CONDITIONS,
        KUEUE_API_VERSION,
        MOVED_ANNOTATION,
        PROMOTED_ANNOTATION,
        REASON_ANNOTATION,
        REPLACES_ANNOTATION,
        ROLE_LABEL,
        SPARE,
        SPARE_TAINT,
        SYSTEMIC_FRACTION,
    )
    from ultraserver.incluster.copied_facts import ULTRASERVER_LABEL as GROUP_LABEL
    from ultraserver.incluster.drain_watch import finding
    from ultraserver.incluster.placement import assignment_nodes
except ImportError:  # in the cluster: the mounted directory is on sys.path
    from copied_facts import (  # type: ignore[no-redef]
        ACTIVE,
        CLIQUE_LABEL,
        FAILED,
        FAILED_ANNOTATION,
        FAILED_TAINT,
        FAILURE_GRACE_MINUTES,
        HEALTH_CONDITIONS,
        KUEUE_API_VERSION,
        MOVED_ANNOTATION,
        PROMOTED_ANNOTATION,
        REASON_ANNOTATION,
        REPLACES_ANNOTATION,
        ROLE_LABEL,
        SPARE,
        SPARE_TAINT,
        SYSTEMIC_FRACTION,
    )
    from copied_facts import ULTRASERVER_LABEL as GROUP_LABEL  # type: ignore[no-redef]
    from drain_watch import finding  # type: ignore[no-redef]
    from placement import assignment_nodes  # type: ignore[no-redef]

REPORT_HOURS = 1
"""A used spare is a finding for this long after its promotion: published once, then it leaves the drain's exit
code alone (the failed node stays visible in status and verify)."""
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
    reboot: bool = False
    """A self-managed group, which EKS does not repair: the controller reboots its nodes where a reboot helps
    (``incluster.repair``)."""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SpareGroup:
        """A group as ``to_json`` writes it."""
        return cls(
            data["group"], int(data["spares"]), bool(data.get("grouped", False)), bool(data.get("reboot", False))
        )

    def to_json(self) -> dict[str, Any]:
        """Plain JSON for the SPARES environment variable."""
        return {"group": self.group, "spares": self.spares, "grouped": self.grouped, "reboot": self.reboot}


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


def workloads_on(workloads: list[dict[str, Any]], node: str) -> list[str]:
    """namespace/name of each Kueue Workload whose admission placed a pod on ``node``."""
    found = []
    for workload in workloads:
        admission = (workload.get("status") or {}).get("admission") or {}
        for assignment in admission.get("podSetAssignments") or []:
            if node in assignment_nodes(assignment.get("topologyAssignment") or {}):
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


def _replace(failed: dict[str, Any], why: tuple[str, datetime], spares: list[dict], moved: list[str]) -> list[dict]:
    """Free a spare for the failed node, or mark it failed when none is left."""
    name, (reason, since) = _meta(failed)["name"], why
    marked = {FAILED_ANNOTATION: _iso(since), REASON_ANNOTATION: reason}
    if not spares:
        return [_patch(failed, {ROLE_LABEL: FAILED}, marked, _taints(failed))]
    spare = spares[0]
    failed_taint = {"key": FAILED_TAINT, "value": reason.split("=")[0], "effect": "NoExecute"}
    return [
        _patch(
            spare,
            {ROLE_LABEL: ACTIVE},
            {REPLACES_ANNOTATION: name, MOVED_ANNOTATION: ",".join(moved)},
            _without(_taints(spare), SPARE_TAINT),
        ),
        _patch(failed, {ROLE_LABEL: FAILED}, marked, [*_without(_taints(failed), FAILED_TAINT), failed_taint]),
    ]


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
            actions += _replace(node, why, standby, workloads_on(workloads, name))
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


def apply(api: Any, action: dict[str, Any]) -> bool:
    """Carry out one action through ``api`` (``drain.Api``)."""
    body = {
        "metadata": {"labels": action["labels"], "annotations": action["annotations"]},
        "spec": {"taints": action["taints"]},
    }
    api.patch(f"/api/v1/nodes/{action['name']}", body)
    return True


def run_once(api: Any, groups: list[SpareGroup], now: datetime, nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Read the pods and Kueue's Workloads, decide over ``nodes`` (the GB200 nodes), apply; the actions taken."""
    if not groups:
        return []
    pods = list(api.get("/api/v1/pods").get("items") or [])
    try:
        workloads = list(api.get(f"/apis/{KUEUE_API_VERSION}/workloads").get("items") or [])
    except Exception:  # a stack without Kueue serves no Workloads: no job to name
        workloads = []
    actions = decide(nodes, pods, workloads, groups, now)
    return [a for a in actions if apply(api, a)]


def findings(stack: str, nodes: list[dict[str, Any]], groups: list[SpareGroup], now: datetime) -> list[dict[str, str]]:
    """What a person must hear (``drain_watch.finding``'s shape, published once by ``drain_main.send_alerts``): each
    spare used in the last ``REPORT_HOURS``, and each UltraServer with failed nodes and no spare left."""
    by_group = {g.group: g for g in groups}
    members: dict[str, list[dict[str, Any]]] = {}
    for node in nodes:
        ultraserver = ultraserver_of(node, by_group)
        if ultraserver is not None:
            members.setdefault(ultraserver, []).append(node)
    found = []
    for ultraserver, ours in sorted(members.items()):
        left = sum(1 for n in ours if role(n) == SPARE and _ready(n))
        for node in sorted(ours, key=lambda n: _meta(n)["name"]):
            notes, name = _notes(node), _meta(node)["name"]
            promoted = notes.get(PROMOTED_ANNOTATION)
            if REPLACES_ANNOTATION in notes and promoted and _utc(promoted) > now - timedelta(hours=REPORT_HOURS):
                failed = notes[REPLACES_ANNOTATION]
                jobs = notes.get(MOVED_ANNOTATION) or "no job ran on it"
                message = (
                    f"Stack {stack}: node {failed} of UltraServer {ultraserver} failed; spare {name} of the same "
                    f"UltraServer took its place at {promoted} and Kueue moved the job's pod there ({jobs}). Spares "
                    f"left in {ultraserver}: {left}. Fix: reboot or replace {failed} (it rejoins as a spare once "
                    f"healthy); `ultraserver status --stack {stack}` shows the UltraServer."
                )
                found.append(
                    finding(
                        f"spare-used:{ultraserver}:{name}:{promoted}",
                        f"{stack}: spare {name} replaces failed node {failed}",
                        message,
                    )
                )
        broken = sorted(_meta(n)["name"] for n in ours if role(n) == FAILED)
        if broken and left == 0:
            message = (
                f"Stack {stack}: UltraServer {ultraserver} has no spare left and failed node(s) {', '.join(broken)}: "
                "the next failure stops its job (one failure more than its spares already has, if a job waits now). "
                f"Fix: reboot or replace the failed instance(s); `ultraserver status --stack {stack}`."
            )
            found.append(
                finding(f"no-spare:{ultraserver}", f"{stack}: UltraServer {ultraserver} has no spare left", message)
            )
    return found


def groups_from(text: str) -> list[SpareGroup]:
    """The SPARES environment variable's groups."""
    return [SpareGroup.from_json(g) for g in json.loads(text or "[]")]
