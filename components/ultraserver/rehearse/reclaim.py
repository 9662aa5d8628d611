"""The block-end drain in a rehearsal: the drain CronJob's inputs from the plan, a user's job running on an
UltraServer, EC2's notice of the reclaim, and the CronJob's own run (``drain.run_once`` through
``drain_main.StdlibApi``, the pod's service account over HTTPS) at the rehearsal's moment.

The job is what the drain acts on: pods of a batch Job on the UltraServer's nodes and the Kueue Workload that
admitted it there (``status.admission.podSetAssignments[].topologyAssignment`` in Kueue v1beta2's shape, the last
level naming the nodes). The notice is the input the drain takes for an EC2 expiration warning (the reservation,
the end EC2 holds, when it was seen): its cut-off starts the drain at once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ultraserver.facts.kubernetes.kueue import API_GROUP as KUEUE_GROUP
from ultraserver.incluster.drain import (
    CHECKPOINT_LABEL,
    EVICT_ANNOTATION,
    RECLAIM_LEAD_MINUTES,
    RECLAIM_TAINT,
    Api,
    Block,
    run_once,
    timeline,
)
from ultraserver.rehearse.cluster import Cluster, GpuNode, cronjob_env, iso, pod
from ultraserver.rehearse.stage import Stage
from ultraserver.rehearse.topology import assignment

JOB = "train"
"""The user's job a reclaim interrupts (a batch Job in the default namespace)."""
NAMESPACE = "default"
WORKLOAD_VERSION = "v1beta2"


@dataclass(frozen=True)
class DrainInputs:
    """What the plan's drain CronJob runs with: every block with a window, and Kueue's ClusterQueue to hold."""

    blocks: tuple[Block, ...]
    cluster_queue: str = ""


def drain_inputs(objects: Sequence[dict[str, Any]]) -> DrainInputs | None:
    """BLOCKS and CLUSTER_QUEUE of the plan's drain CronJob; None when the stack deploys none (no block window)."""
    env = cronjob_env(objects, "BLOCKS")
    if env is None:
        return None
    return DrainInputs(tuple(Block.from_json(b) for b in json.loads(env["BLOCKS"])), env.get("CLUSTER_QUEUE", ""))


NOTICE_AHEAD = timedelta(minutes=RECLAIM_LEAD_MINUTES + 15)
"""How far ahead of the end EC2 holds its notice arrives in the reclaim fault: the reclaim comes 15 minutes later."""


def notice(block: Block, seen: datetime) -> dict[str, Any]:
    """EC2's expiration warning for a block as the drain takes it (its reservation, the end EC2 holds, when seen),
    with an end earlier than the stack's: the block is cut short, and the reclaim arrives while the job runs."""
    return {"reservation": block.reservations[0], "end": iso(seen + NOTICE_AHEAD), "seen": iso(seen)}


def job_objects(
    nodes: Sequence[GpuNode], cluster_queue: str, at: datetime, levels: Sequence[str]
) -> list[dict[str, Any]]:
    """The job's worker pods (Running, one per node) and its admitted Kueue Workload, placed on the ``levels`` of the
    plan's Topology (rehearse/topology.py); none without nodes."""
    if not nodes:
        return []
    owner = [{"apiVersion": "batch/v1", "kind": "Job", "name": JOB, "uid": "rehearsal", "controller": True}]
    found = []
    for index, node in enumerate(nodes):
        worker = pod(NAMESPACE, f"{JOB}-worker-{index}", node.name, {"job-name": JOB}, True, node.joined)
        worker["metadata"]["ownerReferences"] = owner
        found.append(worker)
    placement = {
        "podSetAssignments": [
            {
                "name": "worker",
                "count": len(nodes),
                # One pod per node (podCounts is required by Kueue 0.19.2's CRD).
                "topologyAssignment": assignment(levels, nodes),
            }
        ],
        "clusterQueue": cluster_queue,
    }
    workload = {
        "apiVersion": f"{KUEUE_GROUP}/{WORKLOAD_VERSION}",
        "kind": "Workload",
        "metadata": {"name": f"job-{JOB}", "namespace": NAMESPACE, "creationTimestamp": iso(at)},
        # Kueue's Workload CRD requires each pod set's pod template (a real API server refuses one without).
        "spec": {
            "queueName": cluster_queue,
            "podSets": [
                {
                    "name": "worker",
                    "count": len(nodes),
                    "template": {"spec": {"containers": [{"name": "main", "image": "rehearsal"}]}},
                }
            ],
        },
        "status": {"admission": placement},
    }
    return [*found, workload]


def _line(action: dict[str, Any]) -> str:
    kind = action["kind"]
    where = f"{action.get('namespace')}/{action['name']}" if action.get("namespace") else action["name"]
    if kind == "cordon":
        taint = next(t["value"] for t in action["taints"] if t["key"] == RECLAIM_TAINT)
        return f"cordoned node {where} and tainted it {RECLAIM_TAINT}={taint}:NoSchedule"
    if kind in ("annotate-pod", "annotate-workload"):
        return f"{kind.split('-')[1]} {where}: {', '.join(f'{k}={v}' for k, v in action['annotations'].items())}"
    return f"{kind.replace('-', ' ')} {where}"


def drain_stage(api: Api, inputs: DrainInputs, at: datetime, cluster: Cluster) -> Stage:
    """One run of the drain at ``at`` through ``api`` (the CronJob's own, ``drain_main.StdlibApi``); it fails when it
    had to take running work off the nodes (evicted or deleted pods), naming the pods, their nodes and the fix."""
    pods = api.get("/api/v1/pods").get("items") or []
    hosts = {(p["metadata"].get("namespace"), p["metadata"]["name"]): p["spec"].get("nodeName") for p in pods}
    failures: list[dict[str, Any]] = []
    actions = run_once(api, list(inputs.blocks), at, inputs.cluster_queue, cluster.notices, failures=failures)
    if not actions and not failures:
        starts = ", ".join(f"{b.ultraserver} at {iso(timeline(b, cluster.notices).cutoff)}" for b in inputs.blocks)
        return Stage("drain", 0, f"nothing to drain at {iso(at)} (the drain starts: {starts})")
    lines = [_line(a) for a in actions]
    taken = [a for a in actions if a["kind"] in ("evict-pod", "delete-pod")]
    # A pod told its eviction time (evict-at, after its checkpoint window) is taken off as surely as one evicted now.
    gone = {(a["namespace"], a["name"]) for a in taken}
    taken += [
        {**a, "kind": "evict-pod", "at": a["annotations"][EVICT_ANNOTATION]}
        for a in actions
        if a["kind"] == "annotate-pod"
        and EVICT_ANNOTATION in a["annotations"]
        and (a["namespace"], a["name"]) not in gone
    ]
    for action in taken:
        node = hosts.get((action["namespace"], action["name"]))
        when = f" at {action['at']}" if action.get("at") else ""
        lines.append(
            f"FAILED pod {action['namespace']}/{action['name']} on node {node} "
            f"{'is evicted' + when if action['kind'] == 'evict-pod' else 'was deleted'} before the reclaim; fix: "
            "resubmit the job to "
            f"a block with time left, and have the trainer read ultraserver.io/evict-at and checkpoint before it "
            f"(docs/submitting-jobs.md; pods labelled {CHECKPOINT_LABEL}=false get no checkpoint window)"
        )
    # A call the API server refused (the run went on with the other steps, as in its pod): the CronJob's pod
    # reports it and the stage fails on it.
    for failed in failures:
        fix = "grant the verb in the drain's ClusterRole" if failed["status"] == 403 else "see the API server's answer"
        lines.append(
            f"FAILED drain step {failed['step']} on {failed['target']}: HTTP {failed['status']} ({failed['error']}); "
            f"fix: {fix}"
        )
    return Stage("drain", 1 if taken or failures else 0, "\n".join(lines))
