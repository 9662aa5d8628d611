"""The ``gpu-fails`` rehearsal: a node of a self-managed GB200 group reports its GPUs failed with a reason a reboot can
clear, and the drain CronJob's repair (``incluster.repair``) must reboot it once, with nobody online.

The walk runs the drain's whole minute run (``drain_main.run``) through the served API and the rehearsal's EC2
stand-in, from the failure to well past EKS's wait before a repair (``REPAIR_WAIT_MINUTES``). Once the stand-in has
taken the reboot, the node reports healthy again ``RECOVERS_AFTER`` later: how long a GB200 node takes to come back
from a reboot, and which XIDs a reboot clears, are not in any AWS or NVIDIA page read for this (docs/health.md,
**unverified**), so that part is the rehearsal's assumption, not a fact. It passes when the instance was rebooted
exactly once, no sooner than the wait, the node carries the reboot's mark, and the stack's topic was told.
"""

from __future__ import annotations

import copy
from datetime import timedelta
from typing import Any

from ultraserver.facts.aws.node_repair import CONDITION as REPAIR_CONDITION
from ultraserver.facts.aws.node_repair import REBOOT_REASONS
from ultraserver.facts.aws.node_repair import WAIT_MINUTES as REPAIR_WAIT_MINUTES
from ultraserver.facts.kubernetes.scheduling import ULTRASERVER_LABEL
from ultraserver.facts.kubernetes.spares import REBOOTED_ANNOTATION
from ultraserver.incluster import spares
from ultraserver.incluster.rest import RestApi
from ultraserver.rehearse.cluster import Cluster, GpuNode, cronjob_env, iso
from ultraserver.rehearse.reclaim import drain_run, response
from ultraserver.rehearse.stage import Stage

REASON = REBOOT_REASONS[0]
"""The failure the fault reports: the first reason the repair table marks Reboot."""
WAIT = timedelta(minutes=REPAIR_WAIT_MINUTES)
RECOVERS_AFTER = timedelta(minutes=5)
"""The rehearsal's assumption (unverified): the node reports healthy this long after its reboot was asked for."""
WALK = WAIT + timedelta(minutes=10)
"""Long enough for the reboot, the recovery and one wait more: a second reboot in it would be a loop."""
FAILS_AFTER = timedelta(minutes=1)

_SERVER_FIELDS = ("resourceVersion", "uid", "managedFields", "creationTimestamp", "generation")


def first_rebootable_node(cluster: Cluster) -> GpuNode | None:
    """The first node of a group the drain's repair reboots (a self-managed GB200 group), or None."""
    env = cronjob_env(cluster.objects, "SPARES") or {}
    groups = {g.group for g in spares.groups_from(env.get("SPARES", "")) if g.reboot}
    return next((n for n in cluster.gpu_nodes if n.group.name in groups), None)


def _with_condition(node: dict[str, Any], status: str, at: str) -> dict[str, Any]:
    """``node`` as the API returned it, ready to serve again with AcceleratedHardwareReady ``status``."""
    node = copy.deepcopy(node)
    for field in _SERVER_FIELDS:
        node["metadata"].pop(field, None)
    kept = [c for c in node["status"].get("conditions") or [] if c["type"] != REPAIR_CONDITION]
    reason = REASON if status == "False" else "AcceleratedHardwareIsReady"
    node["status"]["conditions"] = [
        *kept,
        {"type": REPAIR_CONDITION, "status": status, "reason": reason, "lastTransitionTime": at},
    ]
    return node


def reboot_response(served: Any, api: RestApi, env: dict[str, str], cluster: Cluster, injected: Any) -> Stage:
    """Walk the drain's runs from the node's failure; it passes when the node was rebooted once and it was said."""
    assert cluster.cloud is not None
    cloud, name = cluster.cloud, injected.subject
    node = api.get(f"/api/v1/nodes/{name}")
    instance = node["spec"]["providerID"].rsplit("/", 1)[1]
    sent, before = len(cloud.published), len(cloud.rebooted)
    lines = _walk(served, api, env, cluster, name, instance)
    reboots = cloud.rebooted[before:]
    marked = (api.get(f"/api/v1/nodes/{name}")["metadata"].get("annotations") or {}).get(REBOOTED_ANNOTATION)
    problems = _wrong_reboots(instance, reboots)
    if marked is None or marked < iso(cluster.at + FAILS_AFTER + WAIT):
        problems.append(f"node {name} carries no reboot mark from after EKS's wait of {REPAIR_WAIT_MINUTES} minutes")
    told = [m for m in cloud.published[sent:] if m["TopicArn"] == env.get("ALERT_TOPIC_ARN")]
    problems += _wrong_alerts(told, name, instance)
    group = node["metadata"]["labels"].get(ULTRASERVER_LABEL, "")
    lines.append(f"reboots asked of EC2 in the walk: {len(reboots)}; UltraServer {group}")
    return response("gpu-fails", problems, "\n".join(lines))


def _wrong_reboots(instance: str, reboots: list[str]) -> list[str]:
    """Unless EC2 was asked to reboot ``instance`` once and nothing else."""
    problems = []
    if reboots.count(instance) != 1:
        problems.append(f"instance {instance} was rebooted {reboots.count(instance)} time(s), not once")
    others = [i for i in reboots if i != instance]
    if others:
        problems.append(f"the drain rebooted other instances: {', '.join(others)}")
    return problems


def _wrong_alerts(told: list[dict[str, str]], name: str, instance: str) -> list[str]:
    """Unless the topic was told of the reboot, and not paged that the recovered node is still failed."""
    problems = []
    # The reboot is news, not a task: its message names the node and instance and has no fix to follow.
    if not any(f"rebooted node {name}" in m["Message"] and instance in m["Message"] for m in told):
        problems.append(f"no alert on the stack's topic names the reboot of node {name} ({instance})")
    if any(f"node {name} still failed after its reboot" in m["Subject"] for m in told):
        problems.append(f"node {name} was paged as still failed although it recovered")
    return problems


def _walk(served: Any, api: RestApi, env: dict[str, str], cluster: Cluster, name: str, instance: str) -> list[str]:
    """The node fails, then the drain runs each minute for ``WALK``; the node recovers ``RECOVERS_AFTER`` after its
    first reboot. The walk's log."""
    assert cluster.cloud is not None
    path = f"/api/v1/nodes/{name}"
    failed_at = cluster.at + FAILS_AFTER
    served.put([_with_condition(api.get(path), "False", iso(failed_at))])
    lines = [f"node {name} (instance {instance}) reports {REPAIR_CONDITION} False, {REASON}, at {iso(failed_at)}"]
    recovered = None
    for minute in range(int(WALK / timedelta(minutes=1)) + 1):
        now = failed_at + timedelta(minutes=minute)
        if now == recovered:
            served.put([_with_condition(api.get(path), "True", iso(now))])
            lines.append(f"{iso(now)} node {name} reports healthy again (the rehearsal's assumption)")
        taken, _ = drain_run(api, env, now, cluster.cloud)
        if any(a["kind"] == "reboot" and a["name"] == name for a in taken):
            after = (now - failed_at).total_seconds() / 60
            lines.append(f"{iso(now)} the drain rebooted instance {instance}, {after:.0f} min after the failure")
            recovered = recovered or now + RECOVERS_AFTER
    return lines
