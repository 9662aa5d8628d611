"""The ``node-fails`` rehearsal: a node of a running whole-UltraServer job goes NotReady, and the toolkit must respond
with nobody online.

The stage replays ten minutes, one CronJob run a minute: the spares controller (``incluster.spares``, the groups from
the SPARES of the plan's drain CronJob) over the cluster's GPU nodes, then Kubernetes and Kueue v0.19.2 as
``rehearse.replacement`` replays them, with the flavor's tolerations from the plan. It passes when, on a stack with
spares, the job's pod lands on a spare of the failed node's own UltraServer (no pod outside it) and the alert is
raised; on a stack without spares, when the failure is marked, its GPU-hours lost are shown and the alert is raised.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL, GPU_TOLERATION, ULTRASERVER_LABEL
from ultraserver.incluster import spares
from ultraserver.rehearse.cluster import Cluster, cronjob_env, iso
from ultraserver.rehearse.replacement import Cluster as Replay
from ultraserver.rehearse.replacement import Job
from ultraserver.rehearse.stage import Stage
from ultraserver.verify.clients import Node
from ultraserver.verify.spares import spare_view

MINUTES = 10
"""How long the stage replays after the failure."""
FAILS_AFTER = timedelta(minutes=1)
"""When the node goes NotReady, after the rehearsal's moment (the controller has held back the spares by then)."""


class NodeApi:
    """The controller's REST calls over the replay's nodes (a JSON merge patch of labels, annotations, taints), and
    the job's pods and Workload as the API would list them."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay

    def get(self, path: str) -> dict[str, Any]:
        """Pods, or Kueue's Workloads (a topology assignment's last level names the nodes)."""
        if path.endswith("/pods"):
            items = [
                {"metadata": {"name": pod, "namespace": "default"}, "spec": {"nodeName": host}, "status": {}}
                for job in self.replay.jobs
                for pod, host in job.pods.items()
            ]
            return {"items": items}
        workloads = []
        for job in self.replay.jobs:
            domains = [{"values": [host]} for host in job.pods.values()]
            admission = {"podSetAssignments": [{"topologyAssignment": {"domains": domains}}]}
            workloads.append(
                {"metadata": {"name": job.name, "namespace": "default"}, "status": {"admission": admission}}
            )
        return {"items": workloads}

    def patch(self, path: str, body: dict[str, Any]) -> None:
        """A node's labels, annotations (None deletes) and taints."""
        node = self.replay.nodes[path.rsplit("/", 1)[1]]
        for part in ("labels", "annotations"):
            merged = {**(node["metadata"].get(part) or {}), **body["metadata"][part]}
            node["metadata"][part] = {k: v for k, v in merged.items() if v is not None}
        node["spec"]["taints"] = body["spec"]["taints"]


def _flavor_tolerations(objects: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    flavors = [o for o in objects if o["kind"] == "ResourceFlavor" and (o.get("spec") or {}).get("topologyName")]
    return [dict(t) for f in flavors for t in f["spec"].get("tolerations") or []]


def as_node(raw: dict[str, Any]) -> Node:
    ready = next(c for c in raw["status"]["conditions"] if c["type"] == "Ready")
    return Node(
        raw["metadata"]["name"],
        raw["metadata"]["labels"],
        ready=ready["status"] == "True",
        annotations=raw["metadata"].get("annotations") or {},
    )


def needs(objects: Sequence[dict[str, Any]]) -> str:
    """Why the stack cannot show the fault ('' when it can): the controller runs in the drain's CronJob."""
    return (
        "" if cronjob_env(objects, "SPARES") else "the stack deploys no reclaim drain, where the spares controller runs"
    )


def failure_stage(cluster: Cluster, at: datetime, stack: str) -> Stage:
    """The replay from ``at`` of stack ``stack``."""
    env = cronjob_env(cluster.objects, "SPARES") or {}
    groups = spares.groups_from(env.get("SPARES", ""))
    raw = {n.name: n.to_api() for n in cluster.gpu_nodes}
    replay = Replay(raw)
    api = NodeApi(replay)
    findings: list[dict[str, str]] = []

    def run(now: datetime) -> None:
        nodes = copy.deepcopy(list(replay.nodes.values()))
        sent = {f["key"] for f in findings}
        findings.extend(f for f in spares.findings(stack, nodes, groups, now) if f["key"] not in sent)
        spares.run_once(api, groups, now, nodes)

    run(at)
    home = groups[0]
    members = [n for n in raw.values() if n["metadata"]["labels"].get(ULTRASERVER_LABEL) == home.group]
    active = [n["metadata"]["name"] for n in members if spares.role(n) == spares.ACTIVE]
    tolerations = [dict(GPU_TOLERATION), *_flavor_tolerations(cluster.objects)]
    # The job selects its UltraServer by the node group label, as the example training job does.
    job = Job("train", len(active), CLIQUE_LABEL, tolerations, {ULTRASERVER_LABEL: home.group})
    replay.jobs.append(job)
    lines = []
    if not replay.admit(job, at):
        return Stage("node failure", 1, f"job train ({len(active)} nodes) could not be placed on {home.group}")
    failed = sorted(job.pods.values())[0]
    failed_at = at + FAILS_AFTER
    raw[failed]["status"]["conditions"] = [{"type": "Ready", "status": "Unknown", "lastTransitionTime": iso(failed_at)}]
    lines.append(
        f"job train runs on {len(job.pods)} active node(s) of {home.group} ({home.spares} spare(s) held back); "
        f"node {failed} goes NotReady at {iso(failed_at)}"
    )
    for minute in range(MINUTES + 1):
        now = failed_at + timedelta(minutes=minute)
        run(now)
        replay.step(now)
    outside = [
        n
        for _, placed in job.history
        for n in placed.values()
        if raw[n]["metadata"]["labels"].get(ULTRASERVER_LABEL) != home.group
    ]
    for gone, spare in job.moves:
        when = next(moment for moment, placed in job.history if spare in placed.values())
        lines.append(
            f"Kueue replaced {gone} with spare {spare} of {home.group} at {iso(when)} "
            f"({(when - failed_at).total_seconds() / 60:.0f} min after the failure); the job restarts from its "
            "checkpoint"
        )
    lines += [f"Kueue evicted job train: {why}" for why in job.evictions]
    lines.append(f"pods placed outside {home.group}: {len(outside)}")
    view = spare_view([as_node(n) for n in raw.values()], home.group, cluster.expected.groups[0].gpus_per_node, now)
    lines += view.lines() if view is not None else []
    lines += [f"alert to the stack's topic: {f['subject']}" for f in findings]
    if home.spares:
        ok = len(job.moves) == 1 and not outside and not job.evictions and any("spare" in f["key"] for f in findings)
        why = "" if ok else f"FAILED the job's pod did not land on a spare of {home.group}; fix: see docs/health.md"
    else:
        ok = view is not None and view.gpu_hours_lost > 0 and any(f["key"].startswith("no-spare:") for f in findings)
        why = "" if ok else "FAILED the loss or the alert was not reported; fix: see docs/health.md"
    return Stage("node failure", 0 if ok else 1, "\n".join([*lines, *([why] if why else [])]))
