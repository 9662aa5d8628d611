"""Fabric checks at each join: with ``handover: standby`` a block's nodes join at its start with no deploy, so the
check MPIJobs the deploy made (nvbandwidth, NCCL, EFA; verify reads their pods and logs) ran on the previous block's
nodes. Pure decisions (``due_checks``) and their REST calls (``apply_check``) that make each check job again, from the
manifests the toolkit deploys, once every node group its workers may run on (``job_node_groups``: one UltraServer,
a grouped fleet of several, or the EFA check's groups) has its current block's nodes all joined and Ready.

A job counts as this block's when it carries ``CHECKED_BLOCK`` with the keys of the current blocks of the node groups
it spans, or was created at or after the latest of their starts (the deploy made it for these blocks). A job over a
node group without a block (no window) is left to the deploy and ``ultraserver verify``: nothing tells when that
group's block starts. A grouped fleet's nvbandwidth jobs are made in the same run, so their anti-affinity sends them
to different UltraServers. Like ``drain`` this imports the standard library only (the CronJob mounts it in a
stock Python image).
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from typing import Any

try:
    from ultraserver.incluster.copied_facts import MPIJOB_API_VERSION, NODE_JOIN_GRACE_MINUTES
    from ultraserver.incluster.copied_facts import ULTRASERVER_LABEL as GROUP_LABEL
except ImportError:  # in the cluster: the mounted directory is on sys.path
    from copied_facts import MPIJOB_API_VERSION, NODE_JOIN_GRACE_MINUTES  # type: ignore[no-redef]
    from copied_facts import ULTRASERVER_LABEL as GROUP_LABEL  # type: ignore[no-redef]

CHECKED_BLOCK = "ultraserver.io/checked-block"
MPIJOB_API = f"/apis/{MPIJOB_API_VERSION}"
JOIN_GRACE = timedelta(minutes=NODE_JOIN_GRACE_MINUTES)
"""After it, a block's nodes are expected Ready."""


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def _ready(node: dict[str, Any]) -> bool:
    conditions = (node.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def block_key(block: Any) -> str:
    """A block's identity on a check job: its first reservation and its start."""
    return f"{(block.reservations or ('',))[0]}@{block.start.astimezone(timezone.utc):%Y%m%dT%H%MZ}"


def job_node_groups(manifest: dict[str, Any]) -> tuple[str, ...]:
    """The node groups (``GROUP_LABEL`` values) a check job's workers may run on: the worker's nodeSelector, else the
    ``In`` values of its required node affinity; empty when they are not pinned to node groups."""
    worker = (manifest.get("spec") or {}).get("mpiReplicaSpecs", {}).get("Worker") or {}
    spec = (worker.get("template") or {}).get("spec") or {}
    selected = (spec.get("nodeSelector") or {}).get(GROUP_LABEL)
    return (selected,) if selected else _affinity_groups(spec)


def _affinity_groups(spec: dict[str, Any]) -> tuple[str, ...]:
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    expressions = [e for term in required.get("nodeSelectorTerms") or [] for e in term.get("matchExpressions") or []]
    pinned = [e for e in expressions if e.get("key") == GROUP_LABEL and e.get("operator") == "In"]
    return tuple(sorted({value for e in pinned for value in e.get("values") or []}))


def rechecked(manifest: dict[str, Any], blocks: list) -> bool:
    """Whether the job is ever made again: it spans node groups, each with a block."""
    spans = job_node_groups(manifest)
    return bool(spans) and all(any(b.ultraserver == group for b in blocks) for group in spans)


def _workers(manifest: dict[str, Any]) -> int:
    return int(manifest["spec"]["mpiReplicaSpecs"]["Worker"].get("replicas", 1))


def _joined_and_ready(nodes: list[dict[str, Any]], block: Any, needed: int) -> bool:
    """Whether the block's nodes (created at or after its start) number at least ``needed``, all Ready."""
    joined = [
        n
        for n in nodes
        if (_meta(n).get("labels") or {}).get(GROUP_LABEL) == block.ultraserver
        and _utc(_meta(n).get("creationTimestamp") or "1970-01-01T00:00:00Z") >= block.start
    ]
    return len(joined) >= needed and all(_ready(n) for n in joined)


def _all_ready(nodes: list[dict[str, Any]], current: list, floor: int, now: Any) -> bool:
    """Whether every block's nodes are all Ready: the block's ``nodes`` (at least ``floor``, the job's workers); after
    the join grace those that did join, so a node that never joins holds the checks back only until then (a missing
    node is status's finding)."""
    return all(
        _joined_and_ready(nodes, b, max(b.nodes, floor) if now < b.start + JOIN_GRACE else floor) for b in current
    )


def _checked(live: dict[str, Any] | None, key: str, since: datetime) -> bool:
    if live is None:
        return False
    meta = _meta(live)
    if (meta.get("annotations") or {}).get(CHECKED_BLOCK) == key:
        return True
    created = meta.get("creationTimestamp")
    return isinstance(created, str) and _utc(created) >= since


def due_checks(
    nodes: list[dict[str, Any]],
    live_jobs: list[dict[str, Any]],
    manifests: list[dict[str, Any]],
    blocks: list,
    now: Any,
) -> list[dict[str, Any]]:
    """A ``recreate-check`` action per check job whose node groups' current blocks all have their nodes Ready (the
    block's ``nodes``, or after the join grace those that joined; at least the job's workers when it spans one group)
    and no run of these blocks yet; the manifest carries the blocks' keys."""
    live = {(_meta(j).get("namespace"), _meta(j).get("name")): j for j in live_jobs}
    actions = []
    for manifest in manifests:
        spans, meta = job_node_groups(manifest), _meta(manifest)
        current = [b for g in spans for b in blocks if b.ultraserver == g and b.start <= now < b.end]
        if not spans or len(current) != len(spans):
            continue
        key = ",".join(block_key(b) for b in current)
        if _checked(live.get((meta["namespace"], meta["name"])), key, max(b.start for b in current)):
            continue
        if not _all_ready(nodes, current, _workers(manifest) if len(spans) == 1 else 1, now):
            continue
        made = copy.deepcopy(manifest)
        made["metadata"].setdefault("annotations", {})[CHECKED_BLOCK] = key
        ref = {"namespace": meta["namespace"], "name": meta["name"]}
        actions.append({"kind": "recreate-check", **ref, "block": key, "manifest": made})
    return actions


def apply_check(api: Any, action: dict[str, Any]) -> bool:
    """Delete the old run (its pods go with it) and create this block's; False when the old one is still going away
    (409, made again next run)."""
    base = f"{MPIJOB_API}/namespaces/{action['namespace']}/mpijobs"
    api.delete(f"{base}/{action['name']}")
    try:
        api.post(base, action["manifest"])
    except Exception as err:
        if (getattr(err, "code", None) or getattr(err, "status", None)) == 409:
            return False
        raise
    return True


def run_checks_once(
    api: Any, manifests: list[dict[str, Any]], blocks: list, now: Any, nodes: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Read the check jobs, decide over them and the GB200 ``nodes`` (``drain.gpu_nodes``, read once per run
    for both: the drain's cordons and taints change nothing these decisions read), and apply; the actions taken
    (without their manifests)."""
    if not manifests:
        return []
    live: list[dict[str, Any]] = []
    for namespace in sorted({_meta(m)["namespace"] for m in manifests}):
        live += api.get(f"{MPIJOB_API}/namespaces/{namespace}/mpijobs").get("items") or []
    taken = [a for a in due_checks(nodes, live, manifests, blocks, now) if apply_check(api, a)]
    return [{k: v for k, v in a.items() if k != "manifest"} for a in taken]
