"""The reclaim drain on a simulated clock: a simulated API server (nodes, pods, a PodDisruptionBudget, Kueue admitting a
job a minute) and the drain's own ``run_once`` every minute over a block's last two hours. At the reclaim no pod is
left on the block's nodes, and no Workload was admitted to them after the cut-off; two back-to-back blocks and an
extended block, for managed and self-managed groups."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from helpers.sim_cluster import SimCluster, two_blocks
from ultraserver.builders.reclaim_drain import drain_blocks
from ultraserver.facts.capacity import capacity_blocks
from ultraserver.incluster import drain as ds

MINUTE = timedelta(minutes=1)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def walk(sim: SimCluster, blocks: list[ds.Block], start: datetime, until: datetime) -> None:
    """Minute by minute: the drain runs at the minute (the CronJob's schedule), then Kueue admits during it."""
    now = start
    while now < until:
        ds.run_once(sim, blocks, now, "gb200")
        sim.admit(now)
        now += MINUTE


def _check_block(sim: SimCluster, names: list[str], block: ds.Block) -> None:
    times = ds.timeline(block)
    assert times.cutoff == block.end - timedelta(minutes=block.lead_minutes + ds.DRAIN_NOTICE_MINUTES)
    # Nothing admitted to the block's nodes from the cut-off on, and nothing left on them at the reclaim.
    late = [(t, n) for t, n in sim.admitted if n in names and t >= times.cutoff]
    assert late == []
    assert sim.running_on(names) == []
    assert all(sim.nodes[n]["spec"]["unschedulable"] for n in names)


@pytest.mark.parametrize("mode", ["managed", "self-managed"])
@pytest.mark.parametrize("handover", ["switch", "standby"])
def test_two_back_to_back_blocks_drain_the_first_by_its_reclaim_and_run_the_second(mode: str, handover: str) -> None:
    first, second = drain_blocks(two_blocks(mode, handover))
    sim = SimCluster()
    nodes_a = sim.add_nodes(first.ultraserver, 18, first.start + timedelta(minutes=5), mode)
    reclaim = first.end - timedelta(minutes=capacity_blocks.RECLAIM_LEAD_MINUTES[capacity_blocks.ULTRASERVER])
    walk(sim, [first, second], first.end - timedelta(hours=2), reclaim + MINUTE)
    _check_block(sim, nodes_a, first)
    assert any(t < ds.timeline(first).cutoff for t, _ in sim.admitted)  # work ran until the cut-off
    # Opted-in pods were asked for a checkpoint and had their grace before they went.
    assert sim.queue["spec"]["stopPolicy"] == "Hold"
    sim.remove_nodes(nodes_a)  # EC2 reclaims the instances
    nodes_b = sim.add_nodes(second.ultraserver, 18, second.start + timedelta(minutes=5), mode)
    walk(sim, [first, second], second.start + timedelta(minutes=5), second.start + timedelta(hours=1))
    # The queue is released for the next block; its nodes take work and are not drained by the first block.
    assert sim.queue["spec"]["stopPolicy"] == "None"
    assert any(n in nodes_b for t, n in sim.admitted if t > second.start)
    assert not any(sim.nodes[n]["spec"].get("unschedulable") for n in nodes_b)
    walk(sim, [first, second], second.end - timedelta(hours=2), ds.timeline(second).reclaim + MINUTE)
    _check_block(sim, nodes_b, second)


@pytest.mark.parametrize("mode", ["managed", "self-managed"])
def test_an_extended_block_is_not_drained_at_its_old_end(mode: str) -> None:
    before = drain_blocks(two_blocks(mode, "switch"))
    after = drain_blocks(two_blocks(mode, "switch", extended=True))
    assert after[0].end == before[0].end + timedelta(days=1)  # the same block, its end moved by the extension
    sim = SimCluster()
    nodes = sim.add_nodes(after[0].ultraserver, 18, after[0].start + timedelta(minutes=5), mode)
    # The old end's last 90 minutes pass with the new end known: no cordon, work keeps landing.
    walk(sim, after, before[0].end - timedelta(minutes=90), before[0].end)
    assert not any(sim.nodes[n]["spec"].get("unschedulable") for n in nodes)
    assert any(t >= ds.timeline(before[0]).cutoff for t, _ in sim.admitted)
    walk(sim, after, after[0].end - timedelta(hours=2), ds.timeline(after[0]).reclaim + MINUTE)
    _check_block(sim, nodes, after[0])


def test_every_pod_is_told_its_eviction_time_and_gets_the_checkpoint_window_unless_it_opted_out() -> None:
    first, second = drain_blocks(two_blocks("managed", "switch"))
    sim = SimCluster()
    sim.add_nodes(first.ultraserver, 4, first.start, "managed")
    times = ds.timeline(first)
    walk(sim, [first, second], times.cutoff - timedelta(minutes=10), times.cutoff)
    training = [p for p in sim.pods.values() if p["metadata"]["namespace"] == "train"]
    out = next(p for p in training if p["metadata"]["labels"].get(ds.CHECKPOINT_LABEL) == "false")
    plain = next(p for p in training if ds.CHECKPOINT_LABEL not in p["metadata"]["labels"])
    ds.run_once(sim, [first, second], times.cutoff, "gb200")
    reclaim, window_end = _iso(times.reclaim), times.cutoff + timedelta(minutes=ds.CHECKPOINT_GRACE_MINUTES)
    assert plain["metadata"]["annotations"] == {
        ds.RECLAIM_ANNOTATION: reclaim,
        ds.EVICT_ANNOTATION: _iso(window_end),
        ds.CHECKPOINT_ANNOTATION: _iso(times.cutoff),
    }
    assert out["metadata"]["annotations"] == {ds.RECLAIM_ANNOTATION: reclaim, ds.EVICT_ANNOTATION: _iso(times.cutoff)}
    assert all(w["metadata"]["annotations"][ds.RECLAIM_ANNOTATION] == reclaim for w in sim.workloads.values())
    # The opted-out pod goes at once, as its evict-at said; every other pod stays its checkpoint window, then goes.
    assert out["metadata"]["name"] in sim.evicted and plain["metadata"]["name"] not in sim.evicted
    ds.run_once(sim, [first, second], window_end - MINUTE, "gb200")
    assert plain["metadata"]["name"] not in sim.evicted
    ds.run_once(sim, [first, second], window_end, "gb200")
    assert plain["metadata"]["name"] in sim.evicted
    # The notice came the whole window before the eviction, and the window ends before what is left is deleted.
    assert window_end < times.deadline


def test_a_budget_that_never_frees_is_respected_until_the_deadline_then_the_pod_is_deleted() -> None:
    first, second = drain_blocks(two_blocks("self-managed", "standby"))
    sim = SimCluster()
    nodes = sim.add_nodes(first.ultraserver, 2, first.start, "self-managed")
    times = ds.timeline(first)
    walk(sim, [first, second], times.cutoff, times.deadline)
    # One replica, budget minAvailable 1: every eviction is refused, so it is still there before the deadline.
    assert sim.running_on(nodes) == [f"api-{nodes[0]}"]
    ds.run_once(sim, [first, second], times.deadline, "gb200")
    assert sim.running_on(nodes) == []


def test_an_expiration_warning_earlier_than_the_computed_cut_off_starts_the_drain() -> None:
    (first, _) = drain_blocks(two_blocks("managed", "switch"))
    # EC2 holds an earlier end than the stack (the stack was wrong): its warning starts the drain at once.
    real_end = first.end - timedelta(days=1)
    seen = real_end - timedelta(minutes=70)
    warning = {"reservation": first.reservations[0], "end": _iso(real_end), "seen": _iso(seen)}
    times = ds.timeline(first, [warning])
    assert times.reclaim == real_end - timedelta(minutes=60)
    # Learnt 10 minutes before the reclaim: evictions within the budgets until 2 minutes before it, then deletes.
    assert times.deadline == times.reclaim - timedelta(minutes=ds.FORCE_MARGIN_MINUTES)
    sim = SimCluster()
    nodes = sim.add_nodes(first.ultraserver, 2, first.start, "managed")
    assert ds.run_once(sim, [first], seen - MINUTE, "gb200", [warning]) == []
    taken = ds.run_once(sim, [first], seen, "gb200", [warning])
    assert {a["kind"] for a in taken} >= {"cordon", "hold-queue"} and sim.nodes[nodes[0]]["spec"]["unschedulable"]


def test_the_default_end_throws_away_at_most_twenty_paid_minutes_checkpoint_window_included() -> None:
    first, _ = drain_blocks(two_blocks("managed", "switch"))
    times = ds.timeline(first)
    assert times.reclaim - times.cutoff == timedelta(minutes=20)
    # The checkpoint window fits before the deadline, with minutes left for evictions within the budgets.
    assert times.cutoff + timedelta(minutes=ds.CHECKPOINT_GRACE_MINUTES) < times.deadline <= times.reclaim


def test_one_step_evicts_no_more_pods_than_their_budget_allows() -> None:
    first, _ = drain_blocks(two_blocks("managed", "switch"))
    sim = SimCluster()
    nodes = sim.add_nodes(first.ultraserver, 4, first.start, "managed")
    for index, node in enumerate(nodes[1:], start=1):
        sim.pods[("svc", f"api-{index}")] = sim.pod("svc", f"api-{index}", node, labels={"app": "api"})
    api = sim.get("/apis/policy/v1/poddisruptionbudgets")["items"]
    assert api[0]["status"]["disruptionsAllowed"] == 3
    times = ds.timeline(first)
    for pod in sim.pods.values():  # asked at the cut-off: their checkpoint window is over
        pod["metadata"]["annotations"] = {ds.CHECKPOINT_ANNOTATION: _iso(times.cutoff)}
    at = times.cutoff + timedelta(minutes=ds.CHECKPOINT_GRACE_MINUTES)
    actions = ds.decide(list(sim.nodes.values()), list(sim.pods.values()), api, [], None, [first], at)
    evicted = [a["name"] for a in actions if a["kind"] == "evict-pod" and a["namespace"] == "svc"]
    assert len(evicted) == 3  # four replicas under one budget of three disruptions
