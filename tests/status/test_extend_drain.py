"""``ultraserver extend --yes`` moves the in-cluster drain: on a simulated clock, the CronJob's pods read their blocks
from the ConfigMap extend patched, so nothing is cordoned at the old cut-off and the block drains by its new reclaim,
with no deploy in between."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import pytest
from helpers.sim_cluster import SimCluster, two_blocks
from ultraserver.builders.reclaim_drain import ReclaimDrainArgs, drain_blocks, drain_manifests
from ultraserver.incluster import drain as ds
from ultraserver.status.extend_drain import extended_blocks, move_drain

MINUTE = timedelta(minutes=1)


def walk(sim: SimCluster, cron_job: dict, start: datetime, until: datetime) -> None:
    """Each minute a new pod of the CronJob: its BLOCKS as the kubelet resolves them then, one run, Kueue admits."""
    now = start
    while now < until:
        env = sim.pod_env(cron_job)
        blocks = [ds.Block.from_json(b) for b in json.loads(env["BLOCKS"])]
        ds.run_once(sim, blocks, now, env["CLUSTER_QUEUE"])
        sim.admit(now)
        now += MINUTE


@pytest.mark.parametrize("mode", ["managed", "self-managed"])
def test_extend_moves_the_drain_to_the_new_end_with_no_deploy(mode: str) -> None:
    block = drain_blocks(two_blocks(mode, "standby"))[0]
    manifests = drain_manifests(ReclaimDrainArgs([block], cluster_queue="gb200"))
    sim = SimCluster()
    sim.deploy(manifests)
    nodes = sim.add_nodes(block.ultraserver, 18, block.start + timedelta(minutes=5), mode)
    new_end = block.end + timedelta(days=7)
    lines = move_drain(sim, ["cr-0other", *block.reservations], block.end, new_end)
    assert lines == [
        f"drain: moved {block.ultraserver} ({block.reservations[0]}) end {block.end:%Y-%m-%d %H:%M} -> "
        f"{new_end:%Y-%m-%d %H:%M} UTC in ultraserver-reclaim/reclaim-drain-blocks"
    ]
    old, new = (
        ds.timeline(block),
        ds.timeline(extended_blocks([block], list(block.reservations), block.end, new_end)[0]),
    )
    # Past the old cut-off, scale-down and reclaim: nothing cordoned, work keeps landing.
    walk(sim, manifests[-1], old.cutoff - timedelta(minutes=5), old.reclaim + timedelta(minutes=30))
    assert not any(sim.nodes[n]["spec"].get("unschedulable") for n in nodes)
    assert any(t >= old.cutoff for t, _ in sim.admitted)
    # At the new cut-off the drain starts; by the new reclaim nothing is left on the block's nodes.
    walk(sim, manifests[-1], new.cutoff - timedelta(minutes=5), new.cutoff + MINUTE)
    assert all(sim.nodes[n]["spec"].get("unschedulable") for n in nodes)
    walk(sim, manifests[-1], new.cutoff + MINUTE, new.reclaim + MINUTE)
    assert sim.running_on(nodes) == []
    assert [(t, n) for t, n in sim.admitted if n in nodes and t >= new.cutoff] == []


def test_move_drain_leaves_other_blocks_and_says_when_nothing_matches() -> None:
    first, second = drain_blocks(two_blocks("managed", "switch"))
    sim = SimCluster()
    sim.deploy(drain_manifests(ReclaimDrainArgs([first, second])))
    kept = sim.config_map_data("ultraserver-reclaim", "reclaim-drain-blocks")
    later = first.end + timedelta(days=1)
    # A reservation not in the drain's blocks, or a block no longer at the old end: nothing is patched.
    assert move_drain(sim, ["cr-0ffffffffffffffff"], first.end, later) == [
        f"drain: no block in ultraserver-reclaim/reclaim-drain-blocks ends {first.end:%Y-%m-%d %H:%M} UTC; "
        "nothing moved"
    ]
    assert sim.config_map_data("ultraserver-reclaim", "reclaim-drain-blocks") == kept
    move_drain(sim, list(second.reservations), second.end, second.end + timedelta(days=1))
    moved = [
        ds.Block.from_json(b)
        for b in json.loads(sim.config_maps[("ultraserver-reclaim", "reclaim-drain-blocks")]["blocks.json"])
    ]
    assert moved == [
        first,
        extended_blocks([second], list(second.reservations), second.end, second.end + timedelta(days=1))[0],
    ]
    assert moved[1].end == second.end + timedelta(days=1)
