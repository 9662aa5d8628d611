"""The extend-late fault's walk: a block's end, minute by minute, with an extension EC2 confirms after the drain cut
the block off, and nobody online (the deployer never reaches the cluster: the drain's BLOCKS keep the old end).

Each minute Auto Scaling runs its due scheduled actions (``rehearse/cloud.py``), the UltraServer's Node objects
follow the group's desired size (an instance terminated leaves the API; one launched joins), and the drain CronJob's
whole run (``drain_main.run``) reads the cluster and AWS as in its pod. EC2 moves the block's end by the shortest
extension it sells (a day) at the latest moment its payment can succeed: 35 minutes before the old end
(``capacity_states.EXTENSION_CONFIRMED_LATEST_MINUTES_BEFORE_END``), after the plan's scale-down has run. What the
walk then judges comes from the plan (the block, its group's scale-down action) and AWS's facts, never from the
drain's constants: the group back at the block's size, its scale-down moved with the end, the UltraServer's nodes
all there and schedulable, the queue not held, and an alert naming EC2's new end.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta
from typing import Any

from ultraserver.facts.capacity.capacity_states import (
    EXTENSION_CONFIRMED_LATEST_MINUTES_BEFORE_END,
    EXTENSION_DURATION_HOURS,
)
from ultraserver.facts.kubernetes.kueue import API_VERSION as KUEUE_API_VERSION
from ultraserver.facts.kubernetes.scheduling import ULTRASERVER_LABEL
from ultraserver.incluster.drain import Block
from ultraserver.incluster.rest import RestApi
from ultraserver.rehearse.cloud import AutoScalingGroup, Cloud
from ultraserver.rehearse.cluster import Cluster, GpuNode, iso
from ultraserver.rehearse.reclaim import cut_off, drain_inputs, drain_run, published, response
from ultraserver.rehearse.stage import Stage

MINUTE = timedelta(minutes=1)
WALK_BEFORE_SCALE_DOWN = timedelta(minutes=30)
"""The walk starts this long before the plan's scale-down of the block: before any cut-off a drain makes to empty the
nodes in time for it (a judgement; a drain cutting off earlier starts cut off, as a fresh pod each minute would)."""
AFTER_CONFIRMED = timedelta(minutes=3)
"""How long the walk goes on after EC2 confirms, running the drain every minute as its CronJob does: its next run
must act."""
STRIDE = timedelta(minutes=5)
"""Up to EC2's confirmation the walk runs the drain every 5 minutes, not every minute: it keeps no state between
runs, so a skipped minute changes when it acts, not what it does (and a rehearsal stays quick)."""
SHOWN = {"cordon", "release", "hold-queue", "release-queue", "scale-up", "put-scale-down"}
"""The drain's actions the walk's log shows (its annotations and evictions are the reclaim fault's business)."""
EXTENSION = timedelta(hours=EXTENSION_DURATION_HOURS[0])
CONFIRMED_BEFORE_END = timedelta(minutes=EXTENSION_CONFIRMED_LATEST_MINUTES_BEFORE_END)


def extended_block(cluster: Cluster) -> tuple[Block, AutoScalingGroup] | None:
    """The block the fault extends: the first active at the rehearsal's moment whose Auto Scaling group runs one
    UltraServer and holds the plan's scale-down for it; None when no block fits."""
    inputs = drain_inputs(cluster.objects)
    if inputs is None or cluster.cloud is None:
        return None
    for block in inputs.blocks:
        if not block.start <= cluster.at < block.end or not block.group:
            continue
        if {b.ultraserver for b in inputs.blocks if b.group == block.group} != {block.ultraserver}:
            continue
        group = cluster.cloud.group_of(block.group)
        scale_down = group.actions.get(block.scale_down_action)
        if scale_down is not None and scale_down[0] < block.end:
            return block, group
    return None


@dataclasses.dataclass
class Walk:
    """The walk's world: the block, its group and the UltraServer's nodes as the API holds them."""

    block: Block
    group: AutoScalingGroup
    scale_down: datetime
    """The plan's scale-down of the block (its group's scheduled action)."""
    template: GpuNode
    nodes: list[dict[str, Any]]
    confirmed: datetime
    """When EC2 confirms the extension (its payment succeeds) and moves the block's end."""
    log: list[str] = dataclasses.field(default_factory=list)
    first_cut: datetime | None = None
    launched: int = 0
    sent: int = 0
    """Messages the topic held before the walk."""

    @property
    def until(self) -> datetime:
        """The walk's last minute: past EC2's confirmation and past the plan's old scale-down (which must have been
        moved, or it empties the nodes)."""
        return max(self.confirmed, self.scale_down) + AFTER_CONFIRMED

    def follow_group(self, served: Any, now: datetime) -> None:
        """The UltraServer's Node objects follow the group's desired size: terminated instances leave the API,
        launched ones join."""
        while len(self.nodes) > self.group.desired:
            served.remove(self.nodes.pop())
        while len(self.nodes) < self.group.desired:
            self.launched += 1
            node = dataclasses.replace(self.template, name=f"ip-10-101-0-{self.launched}.ec2.internal", joined=now)
            self.nodes.append(node.to_api())
            served.put([self.nodes[-1]])


def _step(walk: Walk, served: Any, api: RestApi, env: dict[str, str], cloud: Cloud, now: datetime) -> None:
    walk.log += [f"{iso(now)} {line}" for line in cloud.tick(now)]
    walk.follow_group(served, now)
    if now == walk.confirmed:
        for rid in walk.block.reservations:
            cloud.reservations[rid]["end"] = walk.block.end + EXTENSION
        walk.log.append(f"{iso(now)} EC2 confirmed the extension: the block now ends {iso(walk.block.end + EXTENSION)}")
    sent = len(cloud.published)
    taken, _ = drain_run(api, env, now, cloud)
    if walk.first_cut is None and any(a["kind"] == "cordon" for a in taken):
        walk.first_cut = now
    kinds = sorted({a["kind"] for a in taken} & SHOWN)
    if kinds:
        walk.log.append(f"{iso(now)} the drain did: {', '.join(kinds)} ({len(taken)} action(s))")
    walk.log += [f"{iso(now)} alert published: {m['Subject']}" for m in cloud.published[sent:]]


def _judge(walk: Walk, api: RestApi, env: dict[str, str], cluster: Cluster) -> list[str]:
    """What the drain failed to do for the extension, read from the API and AWS at the walk's end."""
    block, group = walk.block, walk.group
    new_end = block.end + EXTENSION
    problems = []
    if walk.first_cut is None or walk.first_cut >= walk.confirmed:
        problems.append(f"the drain did not cut {block.ultraserver} off before EC2 confirmed the extension")
    if group.desired != block.nodes:
        problems.append(f"group {group.name} is at {group.desired} nodes, not scaled back up to {block.nodes}")
    moved = new_end - (block.end - walk.scale_down)
    at = group.actions.get(block.scale_down_action, (None, 0))[0]
    if at != moved:
        problems.append(f"the scale-down {block.scale_down_action} is at {at and iso(at)}, not moved to {iso(moved)}")
    nodes = api.get(f"/api/v1/nodes?labelSelector={ULTRASERVER_LABEL}={block.ultraserver}").get("items") or []
    if len(nodes) != block.nodes:
        problems.append(f"{block.ultraserver} has {len(nodes)} nodes after the extension, not {block.nodes}")
    problems += [f"node {n['metadata']['name']} is still cut off" for n in nodes if cut_off(n, cluster)]
    queue = env.get("CLUSTER_QUEUE", "")
    if queue:
        spec = api.get(f"/apis/{KUEUE_API_VERSION}/clusterqueues/{queue}").get("spec") or {}
        if spec.get("stopPolicy") == "Hold":
            problems.append(f"ClusterQueue {queue} is still held")
    assert cluster.cloud is not None
    empty = f"{block.ultraserver} has no nodes in its paid block"
    if any(empty in m["Subject"] for m in cluster.cloud.published[walk.sent :]):
        problems.append(f"the drain paged that {empty} while its group was scaling back up for the extension")
    if not published(cluster, env, block.reservations[0], iso(new_end), since=walk.sent):
        problems.append(f"no alert on the stack's topic says EC2's end of {block.reservations[0]} is {iso(new_end)}")
    return problems


def _walk(walk: Walk, served: Any, api: RestApi, env: dict[str, str], cluster: Cluster) -> list[str]:
    """Walk from before the plan's scale-down to ``walk.until``; what the drain failed to do."""
    strides = -(-(walk.confirmed - (walk.scale_down - WALK_BEFORE_SCALE_DOWN)) // STRIDE)
    now = walk.confirmed - strides * STRIDE
    walk.log.append(
        f"walk: EC2 confirms at {iso(walk.confirmed)}; the drain runs every {STRIDE.seconds // 60} minutes from "
        f"{iso(now)}, each minute for {AFTER_CONFIRMED.seconds // 60} minutes from the confirmation, to "
        f"{iso(walk.until)}"
    )
    assert cluster.cloud is not None
    while now <= walk.until:
        _step(walk, served, api, env, cluster.cloud, now)
        near = walk.confirmed <= now < walk.confirmed + AFTER_CONFIRMED
        now += MINUTE if near else STRIDE
    return _judge(walk, api, env, cluster)


def _reset(walk: Walk, served: Any, cluster: Cluster, env: dict[str, str], group: AutoScalingGroup) -> None:
    """The world before a walk: the nodes as served, the plan's queue, no alert sent yet, AWS as planned."""
    assert cluster.cloud is not None
    for node in walk.nodes:
        served.remove(node)
    walk.nodes[:] = [n.to_api() for n in cluster.gpu_nodes if n.group.name == walk.block.ultraserver]
    queues = [o for o in cluster.objects if o["kind"] == "ClusterQueue"]
    served.put([*walk.nodes, *queues])
    namespace, _, name = env.get("ALERT_STATE", "").partition("/")
    if name:
        served.put([{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}])
    for rid in walk.block.reservations:
        cluster.cloud.reservations[rid]["end"] = walk.block.end
    cluster.cloud.groups[group.name] = walk.group = dataclasses.replace(group, actions=dict(group.actions))
    walk.sent = len(cluster.cloud.published)


def extension_response(served: Any, api: RestApi, env: dict[str, str], cluster: Cluster, injected: Any) -> Stage:
    """Walk the block's end twice, with the extension confirmed after the drain cut the block off: once before the
    plan's scale-down (the nodes must be released and the scale-down moved), once at the latest moment EC2 confirms,
    35 minutes before the old end, after the scale-down ran (the group must scale back up). It passes when the block
    serves the extension both times."""
    found = extended_block(cluster)
    assert found is not None and cluster.cloud is not None, "needs: a block the fault can extend"
    block, group = found
    template = next(n for n in cluster.gpu_nodes if n.group.name == block.ultraserver)
    scale_down = group.actions[block.scale_down_action][0]
    planned = dataclasses.replace(group, actions=dict(group.actions))
    lines: list[str] = []
    problems: list[str] = []
    left: list[dict[str, Any]] = []
    for confirmed in (scale_down - STRIDE, block.end - CONFIRMED_BEFORE_END):
        walk = Walk(block, group, scale_down, template, left, confirmed)
        _reset(walk, served, cluster, env, planned)
        problems += [f"(confirmed {iso(confirmed)}) {p}" for p in _walk(walk, served, api, env, cluster)]
        lines += walk.log
        left = walk.nodes
    return response("extend-late", problems, "\n".join(lines))
