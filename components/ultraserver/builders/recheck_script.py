"""Fabric checks at each join: with ``handover: standby`` a block's nodes join at its start with no deploy, so the
check MPIJobs the deploy made (nvbandwidth, NCCL, EFA; verify reads their pods and logs) ran on the previous block's
nodes. Pure decisions (``due_checks``) and their REST calls (``apply_check``) that make each UltraServer's check jobs
again, from the manifests the toolkit deploys, once the nodes of its current block have all joined and are Ready.

A job counts as this block's when it carries ``CHECKED_BLOCK`` with the block's key, or was created at or after the
block's start (the deploy made it for this block). Only a job whose workers select one UltraServer
(``GROUP_LABEL``) is made again: a grouped fleet's jobs pick their UltraServers by anti-affinity and are left to
``ultraserver verify``. Like ``drain_script`` this imports the standard library only (the CronJob mounts it in a
stock Python image).
"""

from __future__ import annotations

import copy
from datetime import datetime, timezone
from typing import Any

# Copies of facts (this script may import nothing of ours); tests keep them equal.
GROUP_LABEL = "ultraserver.io/ultraserver"
CHECKED_BLOCK = "ultraserver.io/checked-block"
MPIJOB_API = "/apis/kubeflow.org/v2beta1"


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


def job_ultraserver(manifest: dict[str, Any]) -> str:
    """The UltraServer a check job's workers select; empty for a fleet job."""
    worker = (manifest.get("spec") or {}).get("mpiReplicaSpecs", {}).get("Worker") or {}
    return ((worker.get("template") or {}).get("spec") or {}).get("nodeSelector", {}).get(GROUP_LABEL, "")


def _workers(manifest: dict[str, Any]) -> int:
    return int(manifest["spec"]["mpiReplicaSpecs"]["Worker"].get("replicas", 1))


def _joined_and_ready(nodes: list[dict[str, Any]], ultraserver: str, block: Any, workers: int) -> bool:
    """Whether the block's nodes (created at or after its start) number at least the job's workers, all Ready."""
    joined = [
        n
        for n in nodes
        if (_meta(n).get("labels") or {}).get(GROUP_LABEL) == ultraserver
        and _utc(_meta(n).get("creationTimestamp") or "1970-01-01T00:00:00Z") >= block.start
    ]
    return len(joined) >= workers and all(_ready(n) for n in joined)


def _checked(live: dict[str, Any] | None, block: Any) -> bool:
    if live is None:
        return False
    meta = _meta(live)
    if (meta.get("annotations") or {}).get(CHECKED_BLOCK) == block_key(block):
        return True
    created = meta.get("creationTimestamp")
    return isinstance(created, str) and _utc(created) >= block.start


def due_checks(
    nodes: list[dict[str, Any]],
    live_jobs: list[dict[str, Any]],
    manifests: list[dict[str, Any]],
    blocks: list,
    now: Any,
) -> list[dict[str, Any]]:
    """A ``recreate-check`` action per check job whose UltraServer's current block has all its nodes Ready and no run
    of this block yet; the manifest carries the block's key."""
    live = {(_meta(j).get("namespace"), _meta(j).get("name")): j for j in live_jobs}
    actions = []
    for manifest in manifests:
        ultraserver, meta = job_ultraserver(manifest), _meta(manifest)
        current = [b for b in blocks if b.ultraserver == ultraserver and b.start <= now < b.end]
        if not ultraserver or not current:
            continue
        block = current[0]
        if _checked(live.get((meta["namespace"], meta["name"])), block):
            continue
        if not _joined_and_ready(nodes, ultraserver, block, _workers(manifest)):
            continue
        made = copy.deepcopy(manifest)
        made["metadata"].setdefault("annotations", {})[CHECKED_BLOCK] = block_key(block)
        ref = {"namespace": meta["namespace"], "name": meta["name"]}
        actions.append({"kind": "recreate-check", **ref, "block": block_key(block), "manifest": made})
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


def run_checks_once(api: Any, manifests: list[dict[str, Any]], blocks: list, now: Any) -> list[dict[str, Any]]:
    """Read nodes and check jobs, decide and apply; the actions taken (without their manifests)."""
    if not manifests:
        return []
    nodes = list(api.get(f"/api/v1/nodes?labelSelector={GROUP_LABEL}").get("items") or [])
    live: list[dict[str, Any]] = []
    for namespace in sorted({_meta(m)["namespace"] for m in manifests}):
        live += api.get(f"{MPIJOB_API}/namespaces/{namespace}/mpijobs").get("items") or []
    taken = [a for a in due_checks(nodes, live, manifests, blocks, now) if apply_check(api, a)]
    return [{k: v for k, v in a.items() if k != "manifest"} for a in taken]
