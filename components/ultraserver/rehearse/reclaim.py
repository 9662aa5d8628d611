"""The block-end drain in a rehearsal: the drain CronJob's inputs from the plan, a user's job running on an
UltraServer, EC2's notice of the reclaim, and the CronJob's whole run (``drain_main.run`` through
``drain_main.StdlibApi``, the pod's service account over HTTPS, and the rehearsal's AWS, ``rehearse/cloud.py``) at
the rehearsal's moment.

The job is what the drain acts on: pods of a batch Job on the UltraServer's nodes and the Kueue Workload that
admitted it there (``status.admission.podSetAssignments[].topologyAssignment`` in Kueue v1beta2's shape, the last
level naming the nodes). The notice is the input the drain takes for an EC2 expiration warning (the reservation,
the end EC2 holds, when it was seen): its cut-off starts the drain at once.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from ultraserver.facts.capacity.capacity_blocks import RECLAIM_LEAD_MINUTES, ULTRASERVER, reclaim_at
from ultraserver.facts.kubernetes.kueue import API_GROUP as KUEUE_GROUP
from ultraserver.facts.kubernetes.scheduling import ULTRASERVER_LABEL
from ultraserver.incluster import drain_main
from ultraserver.incluster.drain import (
    CHECKPOINT_LABEL,
    EVICT_ANNOTATION,
    RECLAIM_ANNOTATION,
    RECLAIM_TAINT,
    Block,
    timeline,
)
from ultraserver.incluster.rest import RestApi
from ultraserver.rehearse.apis import script_account
from ultraserver.rehearse.cloud import Cloud
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


def drain_role(objects: list[dict[str, Any]], resource: str) -> dict[str, Any]:
    """The plan's ClusterRole bound to the drain's ServiceAccount that grants it ``resource``, replaced in
    ``objects`` by a copy the caller may change (the plan's own stays as planned)."""
    namespace, account = script_account(objects, "BLOCKS")
    bound = {
        o["roleRef"]["name"]
        for o in objects
        if o["kind"] == "ClusterRoleBinding"
        and {"kind": "ServiceAccount", "name": account, "namespace": namespace} in o.get("subjects", [])
    }
    for index, obj in enumerate(objects):
        rules = obj.get("rules") or []
        if obj["kind"] == "ClusterRole" and obj["metadata"]["name"] in bound:
            if any(resource in r.get("resources", []) for r in rules):
                objects[index] = copy.deepcopy(obj)
                return objects[index]
    raise LookupError(f"the plan binds the drain to no ClusterRole over {resource}")


NOTICE_AHEAD = timedelta(minutes=RECLAIM_LEAD_MINUTES[ULTRASERVER] + 15)
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
    name = action.get("name") or action.get("group", "")
    where = f"{action.get('namespace')}/{name}" if action.get("namespace") else name
    if kind == "cordon":
        taint = next(t["value"] for t in action["taints"] if t["key"] == RECLAIM_TAINT)
        return f"cordoned node {where} and tainted it {RECLAIM_TAINT}={taint}:NoSchedule"
    if kind in ("annotate-pod", "annotate-workload"):
        return f"{kind.split('-')[1]} {where}: {', '.join(f'{k}={v}' for k, v in action['annotations'].items())}"
    if kind == "patch-node":  # the spares' roles (incluster/spares.py)
        return f"labelled node {where}: {', '.join(f'{k}={v}' for k, v in sorted(action['labels'].items()))}"
    if kind in ("scale-up", "put-scale-down"):
        said = ", ".join(f"{k}={action[k]}" for k in ("name", "at", "size") if k in action)
        return f"{kind.replace('-', ' ')} {where}: {said}"
    return f"{kind.replace('-', ' ')} {where}"


def _drain_starts(blocks: Sequence[Block], at: datetime, warned: list[dict[str, Any]]) -> str:
    """When each block's drain starts, or started: a cut-off before ``at`` is never named as a coming start."""
    cutoffs = [(b.ultraserver, timeline(b, warned).cutoff) for b in blocks]
    coming = ", ".join(f"{u} at {iso(t)}" for u, t in cutoffs if t > at)
    past = ", ".join(f"{u} at {iso(t)}" for u, t in cutoffs if t <= at)
    parts = [f"the drain starts: {coming}"] if coming else []
    return "; ".join(parts + ([f"the drain started: {past}, and nothing is left on its nodes"] if past else []))


def drain_run(api: RestApi, env: dict[str, str], at: datetime, cloud: Cloud) -> tuple[list[dict], list[dict]]:
    """One minute's run of the drain CronJob (``drain_main.run``): its API calls through ``api``, AWS's through
    ``cloud``; the actions taken and the findings it published."""
    return drain_main.run(api, at, env, cloud.api)


def _taken(actions: list[dict[str, Any]], hosts: dict[tuple[Any, Any], Any]) -> list[str]:
    """A FAILED line for each pod the run took off a node, or told its eviction time (taken off as surely)."""
    taken = [a for a in actions if a["kind"] in ("evict-pod", "delete-pod")]
    gone = {(a["namespace"], a["name"]) for a in taken}
    taken += [
        {**a, "kind": "evict-pod", "at": a["annotations"][EVICT_ANNOTATION]}
        for a in actions
        if a["kind"] == "annotate-pod"
        and EVICT_ANNOTATION in a["annotations"]
        and (a["namespace"], a["name"]) not in gone
    ]
    lines = []
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
    return lines


def _alerts(published: list[dict[str, str]], findings: list[dict[str, str]]) -> list[str]:
    """Each alert the run published, and each finding it had sent before (published once while it lasts)."""
    lines = [f"ALERT to {m['TopicArn']}: {m['Subject']}: {m['Message']}" for m in published]
    sent = {m["Message"] for m in published}
    return lines + [f"ALERT (sent before, not again): {f['subject']}" for f in findings if f["message"] not in sent]


def drain_stage(api: RestApi, env: dict[str, str], at: datetime, cloud: Cloud) -> Stage:
    """The drain CronJob's whole run at ``at`` through ``api`` (the CronJob's own, ``drain_main.StdlibApi``) and the
    rehearsal's AWS: it fails when it had to take running work off the nodes (evicted or deleted pods), naming the
    pods, their nodes and the fix, or when it published an alert (each shown as sent)."""
    pods = api.get("/api/v1/pods").get("items") or []
    hosts = {(p["metadata"].get("namespace"), p["metadata"]["name"]): p["spec"].get("nodeName") for p in pods}
    sent = len(cloud.published)
    actions, findings = drain_run(api, env, at, cloud)
    # The spares' node roles (patch-node) are kept every run, block ending or not: housekeeping, not a drain.
    if all(a["kind"] == "patch-node" for a in actions) and not findings:
        warned = json.loads(env.get("WARNINGS") or "[]")
        blocks = [Block.from_json(b) for b in json.loads(env["BLOCKS"])]
        idle = f"nothing to drain at {iso(at)} ({_drain_starts(blocks, at, warned)})"
        return Stage("drain", 0, "\n".join([idle, *(_line(a) for a in actions)]))
    taken = _taken(actions, hosts)
    # What the run publishes to the alert topic (a refused call, an empty block, EC2's dates): a person is paged.
    lines = [_line(a) for a in actions] + taken + _alerts(cloud.published[sent:], findings)
    return Stage("drain", 1 if taken or findings else 0, "\n".join(lines))


# The responses a drain fault needs, judged from what the drain's run left in the API and in AWS, never from the
# drain's own constants: EC2's reclaim comes from the facts (``capacity_blocks.reclaim_at``), the blocks, queue and
# alert topic from the plan's CronJob.


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


def _labels(obj: dict[str, Any]) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("labels") or {}


def cut_off(node: dict[str, Any], served: Cluster) -> bool:
    """Whether a node is cordoned and carries a NoSchedule taint it did not join with."""
    name = node["metadata"]["name"]
    joined = {t["key"] for n in served.gpu_nodes if n.name == name for t in n.registration.taints}
    spec = node.get("spec") or {}
    added = [t for t in spec.get("taints") or [] if t.get("effect") == "NoSchedule" and t["key"] not in joined]
    return bool(spec.get("unschedulable")) and bool(added)


def _nodes_cut(api: RestApi, cluster: Cluster, reclaims: dict[str, datetime]) -> list[str]:
    """The ending UltraServers' nodes cut off, every other one still schedulable."""
    problems = []
    for node in api.get(f"/api/v1/nodes?labelSelector={ULTRASERVER_LABEL}").get("items") or []:
        name, ultraserver = node["metadata"]["name"], _labels(node)[ULTRASERVER_LABEL]
        if ultraserver in reclaims and not cut_off(node, cluster):
            problems.append(f"node {name} of {ultraserver} was not cordoned and tainted before EC2's reclaim")
        if ultraserver not in reclaims and cut_off(node, cluster):
            problems.append(f"node {name} of {ultraserver} was cut off, though its block is not ending")
    return problems


def _pods_told(
    api: RestApi, cluster: Cluster, reclaims: dict[str, datetime], seen: datetime, workload: bool = True
) -> list[str]:
    """Each of the job's pods still running is told EC2's reclaim and an eviction time after the notice and no later
    than the reclaim; its Workload (unless ``workload`` is False) is told the earliest reclaim of its nodes."""
    hosts = {n.name: n.group.name for n in cluster.running_job}
    wanted = min((reclaims[g] for g in hosts.values() if g in reclaims), default=None)
    if wanted is None:
        return []
    problems = []
    for found in api.get(f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector=job-name={JOB}").get("items") or []:
        notes, name = found["metadata"].get("annotations") or {}, found["metadata"]["name"]
        evict = notes.get(EVICT_ANNOTATION)
        if notes.get(RECLAIM_ANNOTATION) != iso(reclaims[hosts[found["spec"]["nodeName"]]]):
            problems.append(f"pod {name} was not told EC2's reclaim (reclaim-at: {notes.get(RECLAIM_ANNOTATION)})")
        if evict is None or not seen < _utc(evict) <= wanted:
            problems.append(f"pod {name}'s eviction time {evict} is not after the notice and before the reclaim")
    return problems + (_workload_told(api, wanted) if workload else [])


def _workload_told(api: RestApi, wanted: datetime) -> list[str]:
    # Listed, as the drain's account may (it lists and patches Workloads; it may not get one).
    path = f"/apis/{KUEUE_GROUP}/{WORKLOAD_VERSION}/namespaces/{NAMESPACE}/workloads"
    mine = [w for w in api.get(path).get("items") or [] if w["metadata"]["name"] == f"job-{JOB}"]
    told = (mine[0]["metadata"].get("annotations") or {}).get(RECLAIM_ANNOTATION) if mine else None
    if told != iso(wanted):
        return [f"Workload job-{JOB} was told reclaim-at {told}, not EC2's reclaim {iso(wanted)}"]
    return []


def _queue_held(api: RestApi, env: dict[str, str], reclaims: dict[str, datetime]) -> list[str]:
    """Kueue's ClusterQueue held exactly when every GB200 node is ending."""
    queue = env.get("CLUSTER_QUEUE", "")
    if not queue:
        return []
    nodes = api.get(f"/api/v1/nodes?labelSelector={ULTRASERVER_LABEL}").get("items") or []
    every = bool(nodes) and all(_labels(n)[ULTRASERVER_LABEL] in reclaims for n in nodes)
    held = (api.get(f"/apis/{KUEUE_GROUP}/{WORKLOAD_VERSION}/clusterqueues/{queue}").get("spec") or {}).get(
        "stopPolicy"
    ) == "Hold"
    if every and not held:
        return [f"ClusterQueue {queue} was not held, though every GB200 node is ending"]
    if held and not every:
        return [f"ClusterQueue {queue} was held, though some GB200 nodes are not ending"]
    return []


def _reclaims(cluster: Cluster) -> tuple[dict[str, datetime], datetime]:
    """EC2's reclaim of each UltraServer a notice names (the facts' lead before the end EC2 holds), and when the
    first notice was seen."""
    inputs = drain_inputs(cluster.objects)
    assert inputs is not None and cluster.notices, "needs: the drain and EC2's notices"
    ends = {n["reservation"]: _utc(n["end"]) for n in cluster.notices}
    reclaims = {
        b.ultraserver: reclaim_at(min(ends[r] for r in b.reservations if r in ends))
        for b in inputs.blocks
        if ends.keys() & set(b.reservations)
    }
    return reclaims, min(_utc(n["seen"]) for n in cluster.notices)


def published(cluster: Cluster, env: dict[str, str], *words: str, since: int = 0) -> list[str]:
    """The messages the run published to the plan's alert topic (from the ``since``-th on) that hold every one of
    ``words`` and a fix."""
    assert cluster.cloud is not None
    topic = env.get("ALERT_TOPIC_ARN", "")
    return [
        m["Message"]
        for m in cluster.cloud.published[since:]
        if m["TopicArn"] == topic and "Fix" in m["Message"] and all(w in m["Message"] for w in words)
    ]


def response(fault: str, problems: list[str], story: str) -> Stage:
    """The response stage of a fault: what the toolkit did, then what it failed to do (the stage fails on it)."""
    lines = [story, *(f"FAILED {p}" for p in problems)]
    if problems:
        lines.append("fix: the drain's run (incluster/drain_main.py) did not respond as it must: see the drain stage")
    return Stage(f"response to {fault}", 1 if problems else 0, "\n".join(lines))


def reclaim_response(served: Any, api: RestApi, env: dict[str, str], cluster: Cluster, injected: Any) -> Stage:
    """EC2's notice is handled: the ending UltraServer's nodes cut off (no other), the job's pods and Workload told
    the reclaim and an eviction time before it, the queue held exactly when every GB200 node is ending."""
    reclaims, seen = _reclaims(cluster)
    problems = _nodes_cut(api, cluster, reclaims) + _pods_told(api, cluster, reclaims, seen)
    problems += _queue_held(api, env, reclaims)
    story = f"{', '.join(sorted(reclaims))}: EC2's reclaim at {', '.join(sorted({iso(r) for r in reclaims.values()}))}"
    return response("reclaim", problems, story)


def forbidden_response(served: Any, api: RestApi, env: dict[str, str], cluster: Cluster, injected: Any) -> Stage:
    """A refused call (403) is published to the alert topic naming what was refused and the fix, and the drain's
    other steps are done: nodes cut off, pods (and the Workload, unless its patch was the refused call) told."""
    reclaims, seen = _reclaims(cluster)
    queue = cluster.forbidden[0][1].endswith("/clusterqueues")
    refused = f"ClusterQueue {env.get('CLUSTER_QUEUE', '')}" if queue else f"Workload {NAMESPACE}/job-{JOB}"
    problems = _nodes_cut(api, cluster, reclaims) + _pods_told(api, cluster, reclaims, seen, workload=queue)
    named = env.get("CLUSTER_QUEUE", "") if queue else f"{NAMESPACE}/job-{JOB}"
    if not published(cluster, env, "403", named, env.get("CLUSTER_NAME", "")):
        problems.append(f"no alert on the stack's topic names the refused patch of {refused} (403)")
    story = f"{', '.join(sorted(reclaims))}: the drain's patch of {refused} refused (403)"
    return response("drain-forbidden", problems, story)


def no_nodes_response(served: Any, api: RestApi, env: dict[str, str], cluster: Cluster, injected: Any) -> Stage:
    """An active block with no node is published to the alert topic, naming the UltraServer, its reservation and
    the fix."""
    inputs = drain_inputs(cluster.objects)
    assert inputs is not None
    block = next(b for b in inputs.blocks if b.ultraserver == injected.group and b.start <= cluster.at < b.end)
    problems = []
    if not published(cluster, env, injected.group, *block.reservations):
        problems.append(f"no alert on the stack's topic says {injected.group}'s active block has no node")
    return response("no-nodes", problems, f"{injected.group}: no node in its block {', '.join(block.reservations)}")
