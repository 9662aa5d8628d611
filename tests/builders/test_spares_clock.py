"""The spares controller over a failure and a replacement, minute by minute, beside Kueue v0.19.2's failed-node
replacement as rehearse/replacement.py replays it: the job's pod lands on a spare of its own UltraServer, never in
another one."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from ultraserver.builders import spares_script as script
from ultraserver.builders.kueue import resource_flavor_manifest
from ultraserver.facts.kubernetes import spares as facts
from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL, GPU_TAINT_KEY, GPU_TOLERATION, ULTRASERVER_LABEL
from ultraserver.rehearse.replacement import Cluster, Job

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
NODES = 18


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def node(group: str, index: int, since: datetime) -> dict[str, Any]:
    return {
        "metadata": {
            "name": f"{group}-node-{index:02d}",
            "labels": {ULTRASERVER_LABEL: group, CLIQUE_LABEL: f"uuid-{group}.1"},
        },
        "spec": {"taints": [{"key": GPU_TAINT_KEY, "value": "true", "effect": "NoSchedule"}]},
        "status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": iso(since)}]},
    }


class MemoryApi:
    """The controller's REST calls over the nodes the replay reads (JSON merge patch of labels, annotations, taints)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster

    def get(self, path: str) -> dict[str, Any]:
        if path == "/api/v1/pods":
            pods = [
                {"metadata": {"name": pod}, "spec": {"nodeName": host}, "status": {"phase": "Running"}}
                for job in self.cluster.jobs
                for pod, host in job.pods.items()
            ]
            return {"items": pods}
        return {"items": [workload(job) for job in self.cluster.jobs]}

    def patch(self, path: str, body: dict[str, Any]) -> None:
        target = self.cluster.nodes[path.rsplit("/", 1)[1]]
        for part in ("labels", "annotations"):
            merged = {**(target["metadata"].get(part) or {}), **body["metadata"][part]}
            target["metadata"][part] = {k: v for k, v in merged.items() if v is not None}
        target["spec"]["taints"] = body["spec"]["taints"]


def workload(job: Job) -> dict[str, Any]:
    placement = job.history[-1][1] if job.history and job.pods else {}
    domains = [{"values": [host]} for host in placement.values()]
    return {
        "metadata": {"name": job.name, "namespace": "team"},
        "status": {"admission": {"podSetAssignments": [{"topologyAssignment": {"domains": domains}}]}},
    }


def fleet(spares: int) -> tuple[Cluster, list[script.SpareGroup], list[dict[str, Any]]]:
    """Two x72 UltraServers, all nodes Ready an hour before T0, the controller's first run, a 16-node job on each."""
    nodes = [node(g, i, T0 - timedelta(hours=1)) for g in ("nvl72-1", "nvl72-2") for i in range(NODES)]
    cluster = Cluster({n["metadata"]["name"]: n for n in nodes})
    groups = [script.SpareGroup(g, spares) for g in ("nvl72-1", "nvl72-2")] if spares else []
    alerts: list[dict[str, Any]] = []
    run(cluster, groups, T0, alerts)
    # What a queued job tolerates: its own GPU toleration and the flavor's (builders/kueue.py).
    tolerations = [dict(GPU_TOLERATION), *resource_flavor_manifest()["spec"]["tolerations"]]
    for name in ("job-a", "job-b"):
        job = Job(name, NODES - spares, CLIQUE_LABEL, tolerations)
        assert cluster.admit(job, T0), name
        cluster.jobs.append(job)
    return cluster, groups, alerts


def run(cluster: Cluster, groups: list[script.SpareGroup], now: datetime, alerts: list[dict[str, Any]]) -> None:
    nodes = list(cluster.nodes.values())
    actions = script.run_once(MemoryApi(cluster), groups, now, nodes, lambda s, m: alerts.append({"s": s, "m": m}))
    assert all(a["kind"] in ("patch-node", "alert") for a in actions)


def fail(cluster: Cluster, name: str, at: datetime) -> None:
    cluster.nodes[name]["status"]["conditions"] = [
        {"type": "Ready", "status": "Unknown", "lastTransitionTime": iso(at)}
    ]


def walk(cluster: Cluster, groups: list[script.SpareGroup], start: datetime, minutes: int, alerts: list) -> None:
    """Every minute: the controller's CronJob run, then Kubernetes and Kueue."""
    for minute in range(minutes + 1):
        now = start + timedelta(minutes=minute)
        run(cluster, groups, now, alerts)
        cluster.step(now)


def ultraserver(cluster: Cluster, name: str) -> str:
    return cluster.nodes[name]["metadata"]["labels"][ULTRASERVER_LABEL]


def outside(cluster: Cluster, job: Job, home: str) -> list[str]:
    """Every pod the job ever had outside ``home``."""
    return [n for _, placed in job.history for n in placed.values() if ultraserver(cluster, n) != home]


def test_spares_are_held_back_tainted_and_every_job_avoids_them() -> None:
    cluster, _, _ = fleet(2)
    for group in ("nvl72-1", "nvl72-2"):
        members = [n for n in cluster.nodes.values() if n["metadata"]["labels"][ULTRASERVER_LABEL] == group]
        spare = [n for n in members if script.role(n) == script.SPARE]
        assert len(spare) == 2 and sum(script.role(n) == script.ACTIVE for n in members) == 16
        assert all(
            {"key": facts.SPARE_TAINT, "value": "standby", "effect": "NoSchedule"} in n["spec"]["taints"] for n in spare
        )
    used = {n for job in cluster.jobs for n in job.pods.values()}
    assert len(used) == 32 and not any(script.role(cluster.nodes[n]) == script.SPARE for n in used)


def test_a_failed_node_is_replaced_by_a_spare_of_its_own_ultraserver_with_nobody_online() -> None:
    cluster, groups, alerts = fleet(2)
    job = cluster.jobs[0]
    failed = sorted(job.pods.values())[3]
    home = ultraserver(cluster, failed)
    failed_at = T0 + timedelta(minutes=10)
    fail(cluster, failed, failed_at)
    # The other UltraServer's job runs on; its spares stay free: Kueue could pick them if nothing kept it in.
    walk(cluster, groups, failed_at, 10, alerts)
    assert job.evictions == []
    ((gone, replacement),) = job.moves
    assert gone == failed and ultraserver(cluster, replacement) == home
    assert outside(cluster, job, home) == []
    assert len(job.pods) == NODES - 2 and failed not in job.pods.values()
    spare = cluster.nodes[replacement]
    assert spare["metadata"]["annotations"][facts.REPLACES_ANNOTATION] == failed
    assert spare["metadata"]["annotations"][facts.MOVED_ANNOTATION] == "team/job-a"
    # When: within the expected replacement time of the node's failure (the grace, then the next run).
    moved_at = next(at for at, placed in job.history if replacement in placed.values())
    assert moved_at - failed_at <= timedelta(minutes=facts.expected_replacement_minutes())
    # The pod on the failed node went at once (the failed taint), not after the 300 s not-ready toleration.
    assert cluster.deleted and max(cluster.deleted.values()) < failed_at + timedelta(seconds=300)
    assert [a["s"] for a in alerts] == [f"UltraServer {home}: spare {replacement} replaces failed node {failed}"]
    assert "Spares left in nvl72-1: 1" in alerts[0]["m"]


def test_without_spares_kueue_finds_no_replacement_and_the_controller_reports_the_loss() -> None:
    cluster, _, _ = fleet(0)
    job = cluster.jobs[0]
    failed = sorted(job.pods.values())[0]
    failed_at = T0 + timedelta(minutes=10)
    fail(cluster, failed, failed_at)
    alerts: list[dict[str, Any]] = []
    groups = [script.SpareGroup("nvl72-1", 0)]
    walk(cluster, groups, failed_at, 10, alerts)
    # Kueue: no node of the clique has room, the workload is evicted and waits (the other UltraServer is busy).
    assert job.evictions == [f"no replacement for unhealthy node(s): {failed}"] and job.pods == {}
    assert [a["s"] for a in alerts] == [f"UltraServer nvl72-1: node {failed} failed, no spare left"]
    assert cluster.nodes[failed]["metadata"]["labels"][facts.ROLE_LABEL] == facts.FAILED


def test_two_failed_nodes_evict_the_workload_and_it_comes_back_on_its_own_ultraserver() -> None:
    cluster, groups, alerts = fleet(2)
    job = cluster.jobs[0]
    first, second = sorted(job.pods.values())[:2]
    home = ultraserver(cluster, first)
    failed_at = T0 + timedelta(minutes=10)
    fail(cluster, first, failed_at)
    fail(cluster, second, failed_at)
    walk(cluster, groups, failed_at, 10, alerts)
    # Kueue v0.19.2 replaces one node at a time: the second failure evicts the workload, which is admitted again.
    assert job.evictions == [f"multiple node failures: {first}, {second}"]
    assert len(job.pods) == NODES - 2 and not {first, second} & set(job.pods.values())
    assert outside(cluster, job, home) == []
    subjects = [a["s"] for a in alerts]
    assert f"UltraServer {home}: no spare left" in subjects and len(subjects) == 3


def test_a_short_blip_takes_no_spare_and_a_repaired_node_comes_back_as_a_spare() -> None:
    cluster, groups, alerts = fleet(2)
    job = cluster.jobs[0]
    blip = sorted(job.pods.values())[5]
    fail(cluster, blip, T0 + timedelta(minutes=10))
    run(cluster, groups, T0 + timedelta(minutes=11), alerts)  # one minute NotReady: inside the grace
    assert alerts == [] and script.role(cluster.nodes[blip]) == script.ACTIVE
    walk(cluster, groups, T0 + timedelta(minutes=12), 3, alerts)
    assert script.role(cluster.nodes[blip]) == script.FAILED
    back = T0 + timedelta(minutes=20)
    cluster.nodes[blip]["status"]["conditions"] = [{"type": "Ready", "status": "True", "lastTransitionTime": iso(back)}]
    walk(cluster, groups, back, 3, alerts)
    node = cluster.nodes[blip]
    assert script.role(node) == script.SPARE and not any(t["key"] == facts.FAILED_TAINT for t in node["spec"]["taints"])


def test_half_an_ultraserver_failing_at_once_is_a_cluster_signal_not_a_bad_node() -> None:
    cluster, groups, alerts = fleet(2)
    before = copy.deepcopy(cluster.nodes)
    failed_at = T0 + timedelta(minutes=10)
    for name in sorted(cluster.jobs[0].pods.values())[:10]:
        cluster.nodes[name]["status"]["conditions"].append(
            {"type": "AcceleratedHardwareReady", "status": "False", "lastTransitionTime": iso(failed_at)}
        )
    run(cluster, groups, failed_at + timedelta(minutes=5), alerts)
    assert alerts == []
    assert [cluster.nodes[n]["spec"] for n in sorted(before)] == [before[n]["spec"] for n in sorted(before)]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("GROUP_LABEL", ULTRASERVER_LABEL),
        ("CLIQUE_LABEL", CLIQUE_LABEL),
        ("ROLE_LABEL", facts.ROLE_LABEL),
        ("SPARE_TAINT", facts.SPARE_TAINT),
        ("FAILED_TAINT", facts.FAILED_TAINT),
        ("REPLACES_ANNOTATION", facts.REPLACES_ANNOTATION),
        ("PROMOTED_ANNOTATION", facts.PROMOTED_ANNOTATION),
        ("FAILED_ANNOTATION", facts.FAILED_ANNOTATION),
        ("REASON_ANNOTATION", facts.REASON_ANNOTATION),
        ("MOVED_ANNOTATION", facts.MOVED_ANNOTATION),
        ("HEALTH_CONDITIONS", facts.HEALTH_CONDITIONS),
        ("FAILURE_GRACE_MINUTES", facts.FAILURE_GRACE_MINUTES),
        ("SYSTEMIC_FRACTION", facts.SYSTEMIC_FRACTION),
    ],
)
def test_the_scripts_copies_of_facts_are_the_facts(name: str, value: Any) -> None:
    assert getattr(script, name) == value
