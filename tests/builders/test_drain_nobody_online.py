"""The drain's whole minute run (``drain_main.run``) on a simulated clock with nobody online: a simulated API server,
EC2/Auto Scaling/SNS answering in their XML (helpers.fake_aws), Auto Scaling running its scheduled actions and nodes
joining or leaving with the groups' desired sizes. Each case ends with nodes serving the paid time, or with an alert
that names the fix; and any one failing call is reported while the other steps still run."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

import pytest
from helpers.fake_aws import FakeAws, Group
from helpers.sim_cluster import SimCluster, two_blocks
from ultraserver.builders.reclaim_drain import blocks_json, drain_blocks
from ultraserver.facts.capacity import capacity_blocks as cb
from ultraserver.incluster import drain as ds
from ultraserver.incluster import drain_main
from ultraserver.incluster import drain_watch as watch

MINUTE = timedelta(minutes=1)
TOPIC = "arn:aws:sns:us-east-1:111122223333:demo-alerts-x"
EKS_ACTION = cb.EKS_MANAGED_SCALEDOWN_ACTION


def _env(blocks: list[ds.Block]) -> dict[str, str]:
    return {
        "BLOCKS": blocks_json(blocks),
        "CLUSTER_QUEUE": "gb200",
        "CLUSTER_NAME": "demo",
        "AWS_REGION": "us-east-1",
        "ALERT_TOPIC_ARN": TOPIC,
        "ALERT_STATE": "ultraserver-reclaim/reclaim-drain-alerted",
    }


@dataclass
class World:
    """The cluster, AWS, and which nodes each Auto Scaling group launched (a group whose template names an expired
    reservation launches nothing: ``dead``)."""

    sim: SimCluster
    aws: FakeAws
    members: dict[str, list[str]] = field(default_factory=dict)
    ultraserver: dict[str, str] = field(default_factory=dict)
    dead: set[str] = field(default_factory=set)
    findings: list[dict] = field(default_factory=list)

    def group(self, name: str, ultraserver: str, desired: int, actions: dict) -> None:
        self.aws.groups[name] = Group(name, desired, 18, actions)
        self.ultraserver[name], self.members[name] = ultraserver, []

    def step(self, now: datetime, env: dict[str, str]) -> None:
        """Auto Scaling, then the drain's run at the minute, then Kueue admitting during it."""
        self.aws.tick(now)
        for name, group in self.aws.groups.items():
            have = self.members[name]
            if group.desired < len(have):
                self.sim.remove_nodes(have[group.desired :])
                del have[group.desired :]
            elif group.desired > len(have) and name not in self.dead:
                have += self.sim.add_nodes(self.ultraserver[name], group.desired - len(have), now, "managed")
        self.findings += drain_main.run(self.sim, now, env, self.aws.api)[1]
        self.sim.admit(now)

    def walk(self, start: datetime, until: datetime, env: dict[str, str], at: dict | None = None) -> None:
        now = start
        while now < until:
            for moment, change in (at or {}).items():
                if moment == now:
                    change()
            self.step(now, env)
            now += MINUTE


def _managed_name(block: ds.Block) -> str:
    return f"eks-{block.group}-0a1b2c3-11112222-3333-4444-5555-666677778888"


def _switch_world(blocks: list[ds.Block]) -> World:
    world = World(SimCluster(), FakeAws())
    first = blocks[0]
    for b in blocks:
        for rid in b.reservations:
            world.aws.reservations[rid] = {"start": b.start, "end": b.end, "state": "active"}
    down = ds.timeline(first).scale_down
    actions = {first.scale_down_action: (down, 0), EKS_ACTION: (first.end - cb.EKS_MANAGED_SCALEDOWN_LEAD, 0)}
    world.group(_managed_name(first), first.ultraserver, 18, actions)
    return world


def _serving(world: World, ultraserver: str, since: datetime) -> list[str]:
    """Nodes of the UltraServer that are schedulable and took work after ``since``."""
    free = [n for n, node in world.sim.nodes.items() if node["metadata"]["labels"][ds.GROUP_LABEL] == ultraserver]
    free = [n for n in free if world.sim.schedulable(n)]
    return [n for t, n in world.sim.admitted if t >= since and n in free]


@pytest.mark.parametrize("confirmed", [timedelta(minutes=70), timedelta(minutes=35)], ids=["before-scale-down", "late"])
def test_an_extension_bought_after_the_cut_off_with_the_cluster_unreachable_is_served(confirmed: timedelta) -> None:
    """The deployer never reaches the cluster (blocks.json keeps the old end); EC2 writes the new end when the payment
    succeeds, as late as 35 minutes before the old end (capacity-blocks-extend). The drain reads it, releases the
    nodes and the queue, scales the group back up and moves its scale-down; an alert says the stack file is behind."""
    blocks = drain_blocks(two_blocks("managed", "switch"))[:1]
    first = blocks[0]
    world = _switch_world(blocks)
    env = _env(blocks)
    new_end = first.end + timedelta(days=1)
    bought = first.end - confirmed

    def extend() -> None:
        world.aws.reservations[first.reservations[0]]["end"] = new_end

    old = ds.timeline(first)
    world.walk(first.end - timedelta(hours=2), first.end + timedelta(hours=1), env, {bought: extend})
    nodes = world.members[_managed_name(first)]
    assert len(nodes) == 18
    assert not any(world.sim.nodes[n]["spec"].get("unschedulable") for n in nodes)
    assert not any(
        t.get("key") == ds.RECLAIM_TAINT for n in nodes for t in world.sim.nodes[n]["spec"].get("taints", [])
    )
    assert world.sim.queue["spec"]["stopPolicy"] == "None"
    assert _serving(world, first.ultraserver, bought + timedelta(minutes=2))
    # The cut-off did happen before the purchase, and the scale-down now sits at the new end minus the lead.
    assert any(t < bought for t, n in world.sim.admitted) and old.cutoff < bought
    group = world.aws.groups[_managed_name(first)]
    assert group.actions[first.scale_down_action] == (new_end - timedelta(minutes=first.lead_minutes), 0)
    said = [m for m in world.aws.published if "differs from EC2" in m["Message"]]
    assert len(said) == 1 and new_end.strftime("end: %Y-%m-%dT%H:%M:%SZ") in said[0]["Message"]
    assert "demo" in said[0]["Message"] and first.reservations[0] in said[0]["Message"]


def test_a_renewal_typed_a_year_late_pages_with_the_real_dates() -> None:
    """The second block's dates are a year off in the stack: its group never scales up for the block that was paid
    for. EC2's dates are the truth: an alert names them as the fix, and one says the paid block has no node."""
    first, second = drain_blocks(two_blocks("managed", "standby"))
    year = timedelta(days=365)
    typo = [first, replace(second, start=second.start + year, end=second.end + year)]
    world = World(SimCluster(), FakeAws())
    for b, real in ((typo[0], first), (typo[1], second)):
        world.aws.reservations[b.reservations[0]] = {"start": real.start, "end": real.end, "state": "active"}
    # Block 2's own group (standby) scales up at the start the stack wrote: a year late.
    world.group(_managed_name(typo[1]), second.ultraserver, 0, {"start": (typo[1].start, 18)})
    env = _env(typo)
    world.walk(second.start, second.start + cb.NODE_JOIN_GRACE_MINUTES * MINUTE + 2 * MINUTE, env)
    messages = [m["Message"] for m in world.aws.published]
    dates = [m for m in messages if "differs from EC2" in m]
    assert len(dates) == 1 and second.start.strftime("start: %Y-%m-%dT%H:%M:%SZ") in dates[0]
    empty = [m for m in messages if "no Ready GB200 node" in m]
    assert len(empty) == 1 and second.reservations[0] in empty[0] and "Fix:" in empty[0]


@pytest.mark.parametrize("handover", ["standby", "switch"])
def test_two_back_to_back_blocks_with_nobody_deploying_between_them(handover: str) -> None:
    """Standby (the default for a stack listing more than one block): the second block's group was made at 0 by the
    last deploy and scales up at its start: its nodes serve. Switch with the deploy missed: the group's template still
    names the first, expired reservation, so nothing launches: an alert names the missed deploy."""
    first, second = drain_blocks(two_blocks("managed", handover))
    world = World(SimCluster(), FakeAws())
    for b in (first, second):
        world.aws.reservations[b.reservations[0]] = {"start": b.start, "end": b.end, "state": "active"}
    down = ds.timeline(first).scale_down
    world.group(_managed_name(first), first.ultraserver, 18, {first.scale_down_action: (down, 0)})
    if handover == "standby":
        world.group(_managed_name(second), second.ultraserver, 0, {"start": (second.start, 18)})
    else:
        world.aws.groups[_managed_name(first)].actions["next"] = (second.start, 18)
    env = _env([first, second])
    world.walk(first.end - timedelta(hours=2), first.end, env)
    if handover == "switch":
        world.dead.add(_managed_name(first))  # its template still names block 1's reservation, expired
    world.walk(second.start, second.start + timedelta(minutes=40), env)
    if handover == "standby":
        assert len(world.members[_managed_name(second)]) == 18
        assert _serving(world, second.ultraserver, second.start)
        assert not [m for m in world.aws.published if "no Ready GB200 node" in m["Message"]]
    else:
        empty = [m["Message"] for m in world.aws.published if "no Ready GB200 node" in m["Message"]]
        assert len(empty) == 1 and "pulumi up" in empty[0] and second.reservations[0] in empty[0]


def test_a_403_on_the_queue_is_reported_once_and_the_pods_are_still_told_and_evicted() -> None:
    first, second = drain_blocks(two_blocks("managed", "switch"))
    world = _switch_world([first, second])
    world.sim.refused.add(("PATCH", "/clusterqueues/"))
    env = _env([first, second])
    times = ds.timeline(first)
    world.walk(times.cutoff - 5 * MINUTE, times.cutoff + 3 * MINUTE, env)
    nodes = world.members[_managed_name(first)]
    assert all(world.sim.nodes[n]["spec"]["unschedulable"] for n in nodes)
    assert world.sim.evicted  # the pods were still evicted after the refused hold
    assert all(ds.RECLAIM_ANNOTATION in w["metadata"].get("annotations", {}) for w in world.sim.workloads.values())
    failed = [m for m in world.aws.published if "'hold-queue' failed (403)" in m["Message"]]
    assert len(failed) == 1, world.aws.published  # once, not every minute
    assert "demo" in failed[0]["Message"] and "RBAC" in failed[0]["Message"]
    state = json.loads(world.sim.config_maps[("ultraserver-reclaim", "reclaim-drain-alerted")]["alerted.json"])
    assert "call:hold-queue:403" in state


def test_a_run_that_cannot_read_the_nodes_pages() -> None:
    first, second = drain_blocks(two_blocks("managed", "switch"))
    world = _switch_world([first, second])
    world.sim.refused.add(("GET", "/api/v1/nodes"))
    world.step(ds.timeline(first).cutoff, _env([first, second]))
    assert [m for m in world.aws.published if "reclaim drain's run failed" in m["Message"]]


def test_ec2_unreadable_is_reported_and_the_drain_runs_on_the_stack_s_dates() -> None:
    first, second = drain_blocks(two_blocks("managed", "switch"))
    world = _switch_world([first, second])
    world.aws.refuse.add("DescribeCapacityReservations")
    env = _env([first, second])
    world.walk(ds.timeline(first).cutoff, ds.timeline(first).cutoff + 2 * MINUTE, env)
    assert all(world.sim.nodes[n]["spec"]["unschedulable"] for n in world.members[_managed_name(first)])
    said = [m for m in world.aws.published if "describe-capacity-reservations" in m["Message"]]
    assert len(said) == 1 and "403" in said[0]["Message"]
    assert "IAM role" in said[0]["Message"] and "RBAC" not in said[0]["Message"]  # an AWS call: its fix is IAM


@pytest.mark.parametrize("deployed_in_gap", [False, True], ids=["missed", "deployed"])
def test_a_missed_switch_deploy_pages_at_the_deadline_the_plan_names(deployed_in_gap: bool) -> None:
    """handover: switch with two blocks: the plan's WARNING names the gap in which a `pulumi up` must run (from the
    first block's settled scale-down to the second's start). The deploy's blocks.json says which block the group was
    pointed at; a deploy during the first block leaves the second unpointed. At the second's start, the deadline,
    the drain pages with the fix, half an hour before the no-Ready-node alert could."""
    settings = two_blocks("managed", "switch")
    first_block, second_block = settings.gpu_node_groups[0].blocks
    gap = cb.switch_window(settings.gpu_node_groups[0].blocks, 0)
    assert gap is not None and gap[1] == second_block.window.start  # the deadline is the second block's start
    deploy = gap[0] + 5 * MINUTE if deployed_in_gap else first_block.window.start + timedelta(days=1)
    first, second = drain_blocks(settings, deploy)
    world = _switch_world([first, second])
    world.aws.reservations[second.reservations[0]] = {"start": second.start, "end": second.end, "state": "active"}
    env = _env([first, second])
    world.walk(gap[1] - 3 * MINUTE, gap[1] + 2 * MINUTE, env)
    said = [m for m in world.aws.published if "no `pulumi up` ran in the gap" in m["Message"]]
    if deployed_in_gap:
        assert said == []
        return
    assert len(said) == 1, world.aws.published
    message = said[0]["Message"]
    assert second.reservations[0] in message and "Fix: run `pulumi up`" in message and "handover: standby" in message
    # Not before the deadline: nothing was published in the minutes before the second block's start.
    early = World(world.sim, FakeAws(reservations=world.aws.reservations))
    early.walk(gap[1] - 3 * MINUTE, gap[1], env)
    assert not [m for m in early.aws.published if "no `pulumi up` ran in the gap" in m["Message"]]


@pytest.mark.parametrize("joined_after", [timedelta(minutes=12), None], ids=["slow-launch", "never"])
def test_nodes_launching_after_a_late_extension_are_not_paged_until_a_join_grace_from_the_scale_up(
    joined_after: timedelta | None,
) -> None:
    """After the scale-down ran, an extension confirmed 35 minutes before the old end scales the group back up; GB200
    nodes take minutes to launch and join. No page in that time (the runs in between remember the scale-up in the
    alert ConfigMap); a page once a join grace from the scale-up has passed with no Ready node."""
    blocks = drain_blocks(two_blocks("managed", "switch"))[:1]
    first = blocks[0]
    world = _switch_world(blocks)
    name = _managed_name(first)
    bought = first.end - timedelta(minutes=35)

    def extend() -> None:
        world.aws.reservations[first.reservations[0]]["end"] = first.end + timedelta(days=1)
        world.dead.add(name)  # launching: no node joins yet

    changes = {bought: extend}
    if joined_after is not None:
        changes[bought + joined_after] = lambda: world.dead.discard(name)
    until = bought + watch.JOIN_GRACE + 3 * MINUTE
    env = _env(blocks)
    world.walk(first.end - timedelta(hours=1), until, env, changes)
    empty = [m for m in world.aws.published if "has no nodes in its paid block" in m["Subject"]]
    if joined_after is not None:
        assert empty == [] and len(world.members[name]) == 18, env
    else:
        assert len(empty) == 1 and first.ultraserver in empty[0]["Subject"]
