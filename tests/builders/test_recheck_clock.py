"""Fabric checks at each join, on a simulated clock: under ``handover: standby`` the next block's nodes join with no
deploy; once they are all Ready the UltraServer's check job is made again from the deployed manifest, once per block,
and a job the deploy made during a block counts as that block's run."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from helpers.sim_cluster import SimCluster, two_blocks
from ultraserver.builders.nvbandwidth_job import NvbandwidthJobArgs, mpijob_manifest
from ultraserver.builders.reclaim_drain import drain_blocks
from ultraserver.incluster import drain as ds
from ultraserver.incluster import recheck as rc

MINUTE = timedelta(minutes=1)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class CheckCluster(SimCluster):
    """The simulated API server with MPIJobs and Ready conditions on nodes."""

    def __init__(self) -> None:
        super().__init__()
        self.mpijobs: dict[tuple[str, str], dict[str, Any]] = {}
        self.made: list[tuple[datetime, str]] = []
        self.now = datetime.min

    def join(self, ultraserver: str, count: int, at: datetime, mode: str) -> list[str]:
        names = self.add_nodes(ultraserver, count, at, mode)
        for name in names:
            self.nodes[name]["status"] = {"conditions": [{"type": "Ready", "status": "False"}]}
        return names

    def ready(self, names: list[str]) -> None:
        for name in names:
            self.nodes[name]["status"]["conditions"][0]["status"] = "True"

    def get(self, path: str) -> dict[str, Any]:
        if path.endswith("/mpijobs"):
            return {"items": list(self.mpijobs.values())}
        return super().get(path)

    def post(self, path: str, body: dict[str, Any]) -> bool:
        if path.endswith("/mpijobs"):
            made = {**body, "metadata": {**body["metadata"], "creationTimestamp": _iso(self.now)}}
            self.mpijobs[(body["metadata"]["namespace"], body["metadata"]["name"])] = made
            self.made.append((self.now, body["metadata"]["name"]))
            return True
        return super().post(path, body)

    def delete(self, path: str) -> None:
        if "/mpijobs/" in path:
            parts = path.split("/")
            self.mpijobs.pop((parts[-3], parts[-1]), None)
            return
        super().delete(path)


def manifest(ultraserver: str) -> dict[str, Any]:
    args = NvbandwidthJobArgs(
        name=f"nvbandwidth-{ultraserver}",
        namespace="imex-check",
        nodes=18,
        max_nodes=18,
        worker_node_selector={rc.GROUP_LABEL: ultraserver},
    )
    return mpijob_manifest(args)


def walk(sim: CheckCluster, manifests: list, blocks: list, start: datetime, until: datetime, ready_at: dict) -> None:
    sim.now = start
    while sim.now < until:
        for moment, names in ready_at.items():
            if moment == sim.now:
                sim.ready(names)
        rc.run_checks_once(sim, manifests, blocks, sim.now, ds.gpu_nodes(sim))
        sim.now += MINUTE


@pytest.mark.parametrize("mode", ["managed", "self-managed"])
def test_the_next_blocks_ultraserver_is_checked_once_all_its_nodes_are_ready(mode: str) -> None:
    first, second = drain_blocks(two_blocks(mode, "standby"))
    manifests = [manifest(first.ultraserver)]
    sim = CheckCluster()
    # The deploy, during the first block: its job counts as the first block's run.
    sim.now = first.start + timedelta(hours=1)
    sim.post("/apis/kubeflow.org/v2beta1/namespaces/imex-check/mpijobs", manifests[0])
    nodes_a = sim.join(first.ultraserver, 18, first.start + timedelta(minutes=5), mode)
    sim.ready(nodes_a)
    walk(sim, manifests, [first, second], first.start + timedelta(hours=2), first.start + timedelta(hours=3), {})
    assert len(sim.made) == 1
    sim.remove_nodes(nodes_a)  # EC2 reclaims the first block's instances
    nodes_b = sim.join(second.ultraserver, 18, second.start + timedelta(minutes=5), mode)
    all_ready = second.start + timedelta(minutes=12)
    ready_at = {second.start + timedelta(minutes=9): nodes_b[:17], all_ready: nodes_b[17:]}
    walk(sim, manifests, [first, second], second.start, second.start + timedelta(hours=1), ready_at)
    # Made again exactly once, the minute the last node turned Ready, marked with the second block.
    assert sim.made[1:] == [(all_ready, f"nvbandwidth-{second.ultraserver}")]
    (job,) = sim.mpijobs.values()
    assert job["metadata"]["annotations"][rc.CHECKED_BLOCK] == rc.block_key(second)
    assert job["spec"] == manifests[0]["spec"]


def test_a_job_pinned_to_no_node_group_and_an_ultraserver_without_a_current_block_are_left_alone() -> None:
    first, _ = drain_blocks(two_blocks("managed", "standby"))
    anywhere = manifest(first.ultraserver)
    anywhere["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["nodeSelector"] = {}
    sim = CheckCluster()
    nodes = sim.join(first.ultraserver, 18, first.start, "managed")
    sim.ready(nodes)
    assert rc.due_checks(list(sim.nodes.values()), [], [anywhere], [first], first.start + MINUTE) == []
    assert rc.due_checks(list(sim.nodes.values()), [], [manifest(first.ultraserver)], [first], first.end) == []
    assert len(rc.due_checks(list(sim.nodes.values()), [], [manifest(first.ultraserver)], [first], first.start)) == 1


def test_the_cronjobs_entry_point_runs_the_checks_due_after_the_drain(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from ultraserver.builders.reclaim_drain import blocks_json
    from ultraserver.incluster import drain_main

    first, second = drain_blocks(two_blocks("managed", "standby"))
    sim = CheckCluster()
    sim.ready(sim.join(second.ultraserver, 18, second.start + MINUTE, "managed"))
    sim.now = second.start + timedelta(minutes=10)
    monkeypatch.setattr(drain_main, "StdlibApi", lambda: sim)
    monkeypatch.setenv("BLOCKS", blocks_json([first, second]))
    (tmp_path / "checks.json").write_text(json.dumps([manifest(second.ultraserver)]))
    monkeypatch.setenv("CHECKS_FILE", str(tmp_path / "checks.json"))
    assert drain_main.main(sim.now) == 0
    assert sim.made == [(sim.now, f"nvbandwidth-{second.ultraserver}")]
    assert json.loads(capsys.readouterr().out)["kind"] == "recreate-check"


@pytest.mark.parametrize(("before_end", "reads"), [(timedelta(hours=24), 1), (timedelta(minutes=1), 2)])
def test_one_run_of_the_entry_point_lists_the_gpu_nodes_once_unless_the_drain_changed_them(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    before_end: timedelta,
    reads: int,
) -> None:
    """The drain and the checks at each join decide over one read of the nodes (a fleet's node list is the largest
    read of the minute); only a minute in which the drain cut nodes off or released them reads them again, because
    the spares patch a node's whole taint list and the first read lacks the drain's reclaim taint."""
    from ultraserver.builders.reclaim_drain import blocks_json
    from ultraserver.incluster import drain_main

    first, second = drain_blocks(two_blocks("managed", "standby"))
    sim = CheckCluster()
    sim.ready(sim.join(first.ultraserver, 18, first.start, "managed"))
    sim.now = first.end - before_end
    read: list[str] = []
    get = sim.get
    monkeypatch.setattr(sim, "get", lambda path: read.append(path) or get(path))
    monkeypatch.setattr(drain_main, "StdlibApi", lambda: sim)
    monkeypatch.setenv("BLOCKS", blocks_json([first, second]))
    monkeypatch.setenv("CLUSTER_QUEUE", "gb200")
    (tmp_path / "checks.json").write_text(json.dumps([manifest(second.ultraserver)]))
    monkeypatch.setenv("CHECKS_FILE", str(tmp_path / "checks.json"))
    assert drain_main.main(sim.now) == 0
    acted = capsys.readouterr().out
    assert ("cordon" in acted) == (reads == 2), acted
    assert [p for p in read if p.startswith("/api/v1/nodes")] == [
        f"/api/v1/nodes?labelSelector={ds.GROUP_LABEL}"
    ] * reads
