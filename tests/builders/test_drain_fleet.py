"""The reclaim drain over a fleet: several UltraServers, each with its own reservation and its own end (issue 42 §7).

The blocks come from the plan of gb200-multi's ``nvl72`` entry (four UltraServers, one reservation each) and from a
stack of two entries whose windows end on different days; EC2 (helpers.fake_aws) may hold a different end for any
one reservation. The drain's whole minute run (``drain_main.run``) or its ``run_once`` walks a simulated API server
(helpers.sim_cluster) where Kueue admits a job a minute onto a schedulable node while the ClusterQueue is not held.
What each test expects comes from the stack file and the reservation dates, not from the drain's constants.
"""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from typing import Any

from helpers.fake_aws import FakeAws
from helpers.sim_cluster import FIRST, SimCluster
from helpers.stacks import stack_config
from ultraserver.builders.reclaim_drain import drain_blocks
from ultraserver.config.settings import parse_settings
from ultraserver.incluster import drain as ds

from tests.builders.test_drain_nobody_online import World, _env

MINUTE = timedelta(minutes=1)
LATER_END = "2026-12-18T11:30:00Z"


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def multi_nvl72() -> tuple[list[ds.Block], list[str]]:
    """gb200-multi's nvl72 entry: its blocks as the drain gets them, and the reservation ids the stack file lists."""
    config = stack_config("gb200-multi")
    (entry,) = [g for g in config["ultraserver-eks:gpuNodeGroups"] if g["name"] == "nvl72"]
    blocks = [b for b in drain_blocks(parse_settings(config, stack="gb200-multi")) if b.ultraserver != "fleet"]
    return blocks, list(entry["capacityReservationIds"])


def two_ends() -> tuple[ds.Block, ds.Block]:
    """gb200-x72 with a second entry on its own reservation, ending three days after the first."""
    config = copy.deepcopy(stack_config("gb200-x72"))
    first = config["ultraserver-eks:gpuNodeGroups"][0]
    second = copy.deepcopy(first)
    second.update(name="nvl72b", capacityReservationIds=["cr-0bbbbbbbbbbbbbbbb"])
    second["reservationWindow"] = {"start": first["reservationWindow"]["start"], "end": LATER_END}
    config["ultraserver-eks:gpuNodeGroups"].append(second)
    a, b = drain_blocks(parse_settings(config, today=FIRST.date() - timedelta(days=7)))
    assert a.end < b.end and a.reservations != b.reservations
    return a, b


def _nodes_of(sim: SimCluster, ultraserver: str) -> list[str]:
    return sorted(n for n, node in sim.nodes.items() if node["metadata"]["labels"][ds.GROUP_LABEL] == ultraserver)


def _cordoned(sim: SimCluster, names: list[str]) -> list[str]:
    return [n for n in names if sim.nodes[n]["spec"].get("unschedulable")]


def _fleet(blocks: list[ds.Block]) -> SimCluster:
    sim = SimCluster()
    for block in blocks:
        sim.add_nodes(block.ultraserver, 4, block.start + 5 * MINUTE, "managed")
    return sim


def walk(sim: SimCluster, blocks: list[ds.Block], start: datetime, until: datetime, warnings: Any = None) -> None:
    now = start
    while now < until:
        ds.run_once(sim, blocks, now, "gb200", warnings)
        sim.admit(now)
        now += MINUTE


def test_each_ultraserver_reaches_the_drain_with_its_own_reservation_id() -> None:
    blocks, listed = multi_nvl72()
    assert len(blocks) == len(listed) == 4
    # The n-th UltraServer's block carries the n-th reservation of the stack file, and no other.
    assert [b.reservations for b in blocks] == [(rid,) for rid in listed]
    assert len({b.ultraserver for b in blocks}) == 4


def test_an_expiration_warning_for_one_reservation_drains_only_its_ultraserver() -> None:
    blocks, listed = multi_nvl72()
    sim = _fleet(blocks)
    # EC2 warns for the third reservation only: its block ends a day before the stack says.
    real_end = blocks[2].end - timedelta(days=1)
    seen = real_end - timedelta(minutes=100)
    warning = {"reservation": listed[2], "end": _iso(real_end), "seen": _iso(seen)}
    walk(sim, blocks, seen - 5 * MINUTE, seen + 30 * MINUTE, [warning])
    warned = _nodes_of(sim, blocks[2].ultraserver)
    assert _cordoned(sim, warned) == warned and sim.running_on(warned) == []
    for other in (blocks[0], blocks[1], blocks[3]):
        names = _nodes_of(sim, other.ultraserver)
        assert _cordoned(sim, names) == [] and not any(sim.nodes[n]["spec"].get("taints") for n in names)
    # The others keep taking work: the ClusterQueue is not held for one ending UltraServer.
    assert sim.queue["spec"]["stopPolicy"] == "None"
    assert any(t > seen and n not in warned for t, n in sim.admitted)
    taint = {t["value"] for n in warned for t in sim.nodes[n]["spec"]["taints"] if t["key"] == ds.RECLAIM_TAINT}
    assert taint == {f"{real_end - timedelta(minutes=60):%Y%m%dT%H%MZ}"}  # EC2's reclaim: its end less 60 minutes


def test_ec2_s_own_end_of_each_reservation_drives_its_ultraserver_s_drain() -> None:
    """EC2 holds an earlier end for the second reservation than the stack file: the whole minute run reads it (each
    UltraServer by its own id), drains that UltraServer at EC2's cut-off, pages with its id, and leaves the rest."""
    blocks, listed = multi_nvl72()
    world = World(SimCluster(), FakeAws())
    for block in blocks:
        world.sim.add_nodes(block.ultraserver, 4, block.start + 5 * MINUTE, "managed")
        world.aws.reservations[block.reservations[0]] = {"start": block.start, "end": block.end, "state": "active"}
    early = blocks[1].end - timedelta(days=2)
    world.aws.reservations[listed[1]]["end"] = early
    cutoff = ds.timeline(blocks[1]).cutoff - timedelta(days=2)
    env = _env(blocks)
    world.walk(cutoff - 3 * MINUTE, cutoff + 15 * MINUTE, env)
    hit = _nodes_of(world.sim, blocks[1].ultraserver)
    assert _cordoned(world.sim, hit) == hit
    for other in (blocks[0], blocks[2], blocks[3]):
        assert _cordoned(world.sim, _nodes_of(world.sim, other.ultraserver)) == []
    said = [m["Message"] for m in world.aws.published if "differs from EC2" in m["Message"]]
    assert len(said) == 1 and listed[1] in said[0] and all(r not in said[0] for r in (listed[0], *listed[2:]))
    assert world.sim.queue["spec"]["stopPolicy"] == "None"


def test_the_queue_is_held_only_while_every_gb200_node_is_ending() -> None:
    a, b = two_ends()
    sim = _fleet([a, b])
    first = ds.timeline(a)
    walk(sim, [a, b], first.cutoff - 5 * MINUTE, first.reclaim)
    a_nodes, b_nodes = _nodes_of(sim, a.ultraserver), _nodes_of(sim, b.ultraserver)
    assert _cordoned(sim, a_nodes) == a_nodes and _cordoned(sim, b_nodes) == []
    # Admission went on over the first UltraServer's whole drain, on the second UltraServer only.
    assert sim.queue["spec"]["stopPolicy"] == "None"
    late = [(t, n) for t, n in sim.admitted if t >= first.cutoff]
    assert late and all(n in b_nodes for _, n in late)
    sim.remove_nodes(a_nodes)  # EC2 reclaims the first block
    second = ds.timeline(b)
    walk(sim, [a, b], second.cutoff - 2 * MINUTE, second.cutoff + 2 * MINUTE)
    # Now every GB200 node left is ending: the queue is held, and nothing is admitted from the cut-off on.
    assert sim.queue["spec"]["stopPolicy"] == "Hold"
    assert not [t for t, _ in sim.admitted if t >= second.cutoff]


def test_both_ending_together_hold_the_queue_and_a_new_ultraserver_releases_it() -> None:
    a, b = two_ends()
    b_now = ds.Block(b.ultraserver, b.reservations, b.start, a.end, b.lead_minutes, b.nodes, b.group)
    sim = _fleet([a, b_now])
    times = ds.timeline(a)
    walk(sim, [a, b_now], times.cutoff - MINUTE, times.cutoff + MINUTE)
    assert sim.queue["spec"]["stopPolicy"] == "Hold"
    # A GB200 node that is not ending joins (a third UltraServer's block starts): admission continues on it.
    fresh = sim.add_nodes("nvl72c", 1, times.cutoff + MINUTE, "managed")
    walk(sim, [a, b_now], times.cutoff + MINUTE, times.cutoff + 4 * MINUTE)
    assert sim.queue["spec"]["stopPolicy"] == "None"
    assert any(n in fresh for _, n in sim.admitted)


def test_a_workload_spanning_two_ending_ultraservers_is_told_the_earlier_reclaim() -> None:
    a, b = two_ends()
    # The second UltraServer ends 30 minutes after the first (EC2's end), both inside their drains.
    b_soon = ds.Block(b.ultraserver, b.reservations, b.start, a.end + 30 * MINUTE, b.lead_minutes, b.nodes, b.group)
    sim = _fleet([a, b_soon])
    one, two = _nodes_of(sim, a.ultraserver)[0], _nodes_of(sim, b_soon.ultraserver)[0]
    one_pod = {"domainCount": 1, "podCounts": {"universal": 1}}
    slices = [{**one_pod, "valuesPerLevel": [{"universal": node}]} for node in (one, two)]
    assignment = {"topologyAssignment": {"levels": ["kubernetes.io/hostname"], "slices": slices}}
    sim.workloads["wide"] = {
        "metadata": {"name": "wide", "namespace": "train"},
        "status": {"admission": {"clusterQueue": "gb200", "podSetAssignments": [assignment]}},
    }
    # Its pods, one on each UltraServer, carry the Workload's name as Kueue's TAS writes it on every pod it places.
    for index, node in enumerate((one, two)):
        pod = sim.pod("train", f"wide-{index}", node)
        pod["metadata"]["annotations"] = {"kueue.x-k8s.io/workload": "wide"}
        sim.pods[("train", f"wide-{index}")] = pod
    earlier, later = ds.timeline(a), ds.timeline(b_soon)
    assert earlier.reclaim < later.reclaim
    first_reclaim = _iso(a.end - timedelta(minutes=60))
    # Told at the first UltraServer's cut-off, and still the earlier reclaim once the second is ending as well.
    for now in (earlier.cutoff, later.cutoff + MINUTE):
        ds.run_once(sim, [a, b_soon], now, "gb200")
        notes = sim.workloads["wide"]["metadata"]["annotations"]
        assert notes[ds.RECLAIM_ANNOTATION] == first_reclaim, now
        if now == earlier.cutoff:
            # Every pod of the job, rank 0 wherever it runs, is told the first eviction and asked to checkpoint.
            evict_at = _iso(earlier.cutoff + timedelta(minutes=ds.CHECKPOINT_GRACE_MINUTES))
            for index in (0, 1):
                told = sim.pods[("train", f"wide-{index}")]["metadata"]["annotations"]
                assert told[ds.RECLAIM_ANNOTATION] == first_reclaim and told[ds.EVICT_ANNOTATION] == evict_at
                assert told[ds.CHECKPOINT_ANNOTATION] == _iso(earlier.cutoff)
            # Past its eviction time the pod on the second UltraServer, not ending yet, is left running.
            ds.run_once(sim, [a, b_soon], earlier.deadline - MINUTE, "gb200")
            assert "wide-0" in sim.evicted and ("train", "wide-1") in sim.pods
    # Once its own UltraServer is ending it goes at once (the job's eviction time is past), within the budgets.
    assert "wide-1" in sim.evicted


def test_a_refused_eviction_is_retried_every_run_and_never_counted_as_done() -> None:
    """The budget's status allows one disruption, but the API server refuses the eviction (429: another eviction took
    it first, or the status was stale; the server judges the budget itself). The drain asks again next run, and an
    eviction counts as done only once the server took it."""
    a, b = two_ends()
    sim = _fleet([a, b])
    a_nodes, b_nodes = _nodes_of(sim, a.ultraserver), _nodes_of(sim, b.ultraserver)
    api_pod = f"api-{a_nodes[0]}"
    assert f"api-{b_nodes[0]}" in sim.running_on(b_nodes)  # a second replica: the budget's status allows one
    refusals = 3
    posts: list[datetime] = []
    post = sim.post
    clock = {"now": FIRST}

    def server(path: str, body: dict[str, Any]) -> bool:
        if path.endswith("/eviction") and body["metadata"]["name"] == api_pod:
            posts.append(clock["now"])
            if len(posts) <= refusals:
                return False  # 429 Too Many Requests
        return post(path, body)

    sim.post = server  # type: ignore[method-assign]
    times = ds.timeline(a)
    taken: list[tuple[datetime, dict[str, Any]]] = []
    now = times.cutoff
    while now < times.deadline:
        clock["now"] = now
        taken += [(now, x) for x in ds.run_once(sim, [a, b], now, "gb200")]
        now += MINUTE
    window = times.cutoff + timedelta(minutes=ds.CHECKPOINT_GRACE_MINUTES)
    # Asked at the end of its checkpoint window and every minute after until the server took it.
    assert posts == [window + i * MINUTE for i in range(refusals + 1)]
    counted = [t for t, x in taken if x["kind"] == "evict-pod" and x["name"] == api_pod]
    assert counted == [posts[-1]] and api_pod in sim.evicted
