"""The cluster side of ``ultraserver status``: one UltraServer's nodes, devices, cliques and idle GPU-hours."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from ultraserver import clock
from ultraserver.builders.expected_nodes import NodeGroupExpectation
from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL, EFA_RESOURCE, GPU_RESOURCE, ULTRASERVER_LABEL
from ultraserver.verify.acceptance import CheckJob, Runs, newest_runs
from ultraserver.verify.clients import ClusterError, ClusterReader, Node, ReadOnce
from ultraserver.verify.resource_slices import published_devices
from ultraserver.verify.spares import SpareView, spare_view


@dataclass(frozen=True)
class ClusterSide:
    """What the Kubernetes API shows of one UltraServer's node group."""

    nodes: int
    ready: int
    gpus: int
    """nvidia.com/gpu allocatable over its Ready nodes (DRA mode: the GPUs their ResourceSlices publish)."""
    efa: int
    """vpc.amazonaws.com/efa allocatable over its Ready nodes (DRA mode: the EFA devices their slices publish)."""
    gpus_per_node: int
    efa_per_node: int
    """What every node should show (the instance's GPUs; the EFA layout's device count)."""
    short_efa: tuple[str, ...]
    """Ready nodes with fewer EFA devices than the layout."""
    cliques: tuple[str, ...]
    not_ready_since: datetime | None
    """Earliest moment a NotReady node of the group turned NotReady (None when every node is Ready)."""
    ready_since: tuple[datetime | None, ...]
    """When each Ready node last turned Ready."""
    instance_ids: tuple[str, ...] = ()
    """EC2 instance ids of the group's nodes (from their providerID), for a remediation packet."""
    check_runs: Runs = ()
    """Each check job that covers the UltraServer with its newest launcher pod (None: none yet)."""
    spares: SpareView | None = None
    """Its nodes as the spares controller left them (None before the controller labelled them)."""

    def to_json(self) -> dict[str, object]:
        """Plain JSON data."""
        return {
            "nodes": self.nodes,
            "ready": self.ready,
            "gpus": self.gpus,
            "efa": self.efa,
            "gpusPerNode": self.gpus_per_node,
            "efaPerNode": self.efa_per_node,
            "nodesShortOfEfa": list(self.short_efa),
            "cliques": list(self.cliques),
            "spares": None if self.spares is None else self.spares.to_json(),
        }


Published = Mapping[str, Mapping[str, int]]
"""Node name -> device kind ('gpu', 'efa') -> how many of them its DRA ResourceSlices publish."""


def published_counts(slices: Sequence[Mapping[str, object]]) -> dict[str, dict[str, int]]:
    """How many GPUs and EFA devices each node's ResourceSlices publish (DRA mode has no device-plugin resources)."""
    counts: dict[str, dict[str, int]] = {}
    for node, found in published_devices(slices).items():
        counts[node] = {kind: sum(1 for d in found if d.kind == kind) for kind in ("gpu", "efa")}
    return counts


def _count(node: Node, resource: str, published: Published | None) -> int:
    if published is not None:
        return published.get(node.name, {}).get("gpu" if resource == GPU_RESOURCE else "efa", 0)
    try:
        return int(str(node.allocatable.get(resource, "0")))
    except ValueError:
        return 0


def cluster_side(
    nodes: Sequence[Node], node_group: str, gpus_per_node: int, efa_per_node: int, published: Published | None = None
) -> ClusterSide:
    """The nodes labelled ``ultraserver.io/ultraserver=<node_group>``, summed up; their devices from the
    ResourceSlices' counts when ``published`` is given (DRA mode), else from allocatable."""
    members = [n for n in nodes if n.labels.get(ULTRASERVER_LABEL) == node_group]
    ready = [n for n in members if n.ready]
    not_ready = [n.ready_changed for n in members if not n.ready and n.ready_changed]
    return ClusterSide(
        nodes=len(members),
        ready=len(ready),
        gpus=sum(_count(n, GPU_RESOURCE, published) for n in ready),
        efa=sum(_count(n, EFA_RESOURCE, published) for n in ready),
        gpus_per_node=gpus_per_node,
        efa_per_node=efa_per_node,
        short_efa=tuple(sorted(n.name for n in ready if _count(n, EFA_RESOURCE, published) < efa_per_node)),
        cliques=_cliques(members),
        not_ready_since=min(not_ready) if not_ready else None,
        ready_since=tuple(sorted((n.ready_changed for n in ready), key=lambda t: (t is not None, t))),
        instance_ids=_instance_ids(members),
    )


def _instance_ids(nodes: Sequence[Node]) -> tuple[str, ...]:
    """EC2 instance ids from the nodes' providerID (aws:///<zone>/<instance id>), sorted."""
    return tuple(sorted(n.provider_id.rsplit("/", 1)[-1] for n in nodes if n.provider_id))


def read_cluster(
    reader: ClusterReader,
    groups: Sequence[NodeGroupExpectation],
    checks: Mapping[str, Sequence[CheckJob]] | None = None,
    now: datetime | None = None,
) -> tuple[dict[str, ClusterSide] | None, str]:
    """Each node group's cluster side, read once (nodes; ResourceSlices when a group is in DRA mode; the newest
    launcher pod of each check job in ``checks``, node group -> its check jobs; its spares at ``now``, default the
    clock); (None, why) when the API does not answer."""
    now = now or clock.now()
    checks = checks or {}
    once = ReadOnce(reader)  # a check job spanning groups (EFA) is listed once
    try:
        nodes = once.nodes()
        published = published_counts(once.resource_slices()) if any(g.mode.dra for g in groups) else {}
        runs = {g.name: newest_runs(once, checks.get(g.name, ())) for g in groups}
    except ClusterError as err:
        return None, str(err)
    sides = {
        g.name: replace(
            cluster_side(nodes, g.name, g.gpus_per_node, g.efa_devices, published if g.mode.dra else None),
            check_runs=runs[g.name],
            spares=spare_view(nodes, g.name, g.gpus_per_node, now),
        )
        for g in groups
    }
    return sides, ""


def _cliques(nodes: Sequence[Node]) -> tuple[str, ...]:
    """The NVLink cliques the nodes are labelled with, sorted."""
    return tuple(sorted({n.labels[CLIQUE_LABEL] for n in nodes if n.labels.get(CLIQUE_LABEL)}))


def idle_gpu_hours(
    side: ClusterSide,
    reserved: int,
    start: datetime | None,
    end: datetime | None,
    now: datetime,
    impaired_since: datetime | None = None,
) -> float:
    """GPU-hours paid for since the block started while no Ready node used them (an estimate), and with
    ``impaired_since`` also every Ready node's time on an impaired fabric from then on.

    The block bills every reserved instance from ``start``. Per reserved instance slot, with
    ``until = min(now, end, impaired_since)`` (the end of the usable time) and ``g`` the GPUs per node:

    - a slot filled by a Ready node that last turned Ready at ``r``: used = max(0, until - max(r, start))
      (a Ready node without a transition time counts as Ready since the start);
    - a slot with no Ready node (missing or NotReady): used = 0;

    lost GPU-hours = g x sum(paid - used) in hours, paid = min(now, end) - start per slot. Ready nodes beyond
    ``reserved`` are ignored. The API keeps only the last Ready transition, so a node that flapped counts as idle
    from the start until it last turned Ready (over-estimate), and a node NotReady now counts as idle for the whole
    block (over-estimate); time a node spent Ready before a later replacement is not known. Zero before the block
    starts.
    """
    if start is None or now <= start:
        return 0.0
    paid_until = min(now, end) if end else now
    until = min(paid_until, impaired_since) if impaired_since else paid_until
    paid = max((paid_until - start).total_seconds(), 0.0)
    used = 0.0
    for since in side.ready_since[:reserved]:
        used += max((until - max(since or start, start)).total_seconds(), 0.0)
    return side.gpus_per_node * (paid * reserved - used) / 3600.0
