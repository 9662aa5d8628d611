"""Each UltraServer's nodes as the spares controller left them (facts/kubernetes/spares.py): active, spare, unhealthy
and replaced, which job moved where, and the GPU-hours the failures cost; ``verify`` and ``status`` both show it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from ultraserver.builders.expected_nodes import NodeGroupExpectation
from ultraserver.facts.kubernetes import spares
from ultraserver.facts.kubernetes.scheduling import ULTRASERVER_LABEL
from ultraserver.verify.clients import ClusterError, ClusterReader, Node


def _when(text: str | None) -> datetime | None:
    return datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


@dataclass(frozen=True)
class Replacement:
    """A failed node and the spare that took its place."""

    failed: str
    spare: str
    at: datetime | None
    workloads: str
    """The Kueue Workloads (namespace/name, comma-separated) that had pods on the failed node."""


@dataclass(frozen=True)
class SpareView:
    """One node group's nodes by role, its replacements and the GPU-hours its failures cost."""

    node_group: str
    active: tuple[str, ...]
    spare: tuple[str, ...]
    unhealthy: tuple[str, ...]
    """Failed nodes, and active ones NotReady now."""
    replaced: tuple[Replacement, ...]
    gpu_hours_lost: float
    """Per failed node: the UltraServer's active GPUs (the job that used them stops) from the failure to the spare's
    promotion, or to now without one: an upper bound, as if one job used every active node."""
    rebooted: tuple[tuple[str, str, datetime | None], ...] = ()
    """The nodes the controller rebooted (self-managed groups, ``incluster.repair``): name, reason, when."""

    def to_json(self) -> dict[str, object]:
        """Plain JSON data."""
        return {
            "active": list(self.active),
            "spare": list(self.spare),
            "unhealthy": list(self.unhealthy),
            "replaced": [
                {
                    "failed": r.failed,
                    "spare": r.spare,
                    "at": r.at.isoformat() if r.at else None,
                    "workloads": r.workloads,
                }
                for r in self.replaced
            ],
            "gpuHoursLost": round(self.gpu_hours_lost, 2),
            "rebooted": [
                {"node": name, "reason": reason, "at": at.isoformat() if at else None}
                for name, reason, at in self.rebooted
            ],
        }

    def lines(self) -> list[str]:
        """The view as report lines."""
        moved = "; ".join(
            f"{r.failed} -> {r.spare}" + (f" ({r.workloads})" if r.workloads else "") for r in self.replaced
        )
        rebooted = "; ".join(
            f"{name} ({reason}, {at.isoformat() if at else 'time unknown'})" for name, reason, at in self.rebooted
        )
        return [
            f"  {self.node_group}: {len(self.active)} active, {len(self.spare)} spare"
            + (f" ({', '.join(self.spare)})" if self.spare else "")
            + f", {len(self.unhealthy)} unhealthy"
            + (f" ({', '.join(self.unhealthy)})" if self.unhealthy else "")
            + f", {len(self.replaced)} replaced; {self.gpu_hours_lost:.1f} GPU-hours lost to failures",
            *([f"    moved: {moved}"] if moved else []),
            *([f"    rebooted: {rebooted}"] if rebooted else []),
        ]


def spare_view(nodes: Sequence[Node], node_group: str, gpus_per_node: int, now: datetime) -> SpareView | None:
    """The view of a node group whose nodes the controller has labelled; None before it has (or without it)."""
    members = sorted((n for n in nodes if n.labels.get(ULTRASERVER_LABEL) == node_group), key=lambda n: n.name)
    roles = {n.name: n.labels.get(spares.ROLE_LABEL, "") for n in members}
    if not any(roles.values()):
        return None
    active = tuple(n.name for n in members if roles[n.name] == spares.ACTIVE)
    replaced = tuple(
        Replacement(
            n.annotations[spares.REPLACES_ANNOTATION],
            n.name,
            _when(n.annotations.get(spares.PROMOTED_ANNOTATION)),
            n.annotations.get(spares.MOVED_ANNOTATION, ""),
        )
        for n in members
        if spares.REPLACES_ANNOTATION in n.annotations
    )
    by_failed = {r.failed: r.at for r in replaced}
    slots = len(active) + sum(1 for r in roles.values() if r == spares.FAILED) - len(replaced)
    lost = 0.0
    for node in members:
        failed_at = _when(node.annotations.get(spares.FAILED_ANNOTATION))
        if roles[node.name] != spares.FAILED or failed_at is None:
            continue
        until = by_failed.get(node.name) or now
        lost += max(slots, 1) * gpus_per_node * max((until - failed_at).total_seconds(), 0.0) / 3600
    return SpareView(
        node_group,
        active,
        tuple(n.name for n in members if roles[n.name] == spares.SPARE),
        tuple(
            n.name
            for n in members
            if roles[n.name] == spares.FAILED or (roles[n.name] == spares.ACTIVE and not n.ready)
        ),
        replaced,
        lost,
        _rebooted(members),
    )


def _rebooted(members: Sequence[Node]) -> tuple[tuple[str, str, datetime | None], ...]:
    """Each node the controller rebooted: name, reason, when (``incluster.repair``'s marks; no time for a mark a
    person overwrote)."""
    found = []
    for node in members:
        mark = node.annotations.get(spares.REBOOTED_ANNOTATION)
        if not mark:
            continue
        try:
            at = _when(mark)
        except ValueError:
            at = None
        found.append((node.name, node.annotations.get(spares.REBOOT_REASON_ANNOTATION, ""), at))
    return tuple(found)


def spare_views(reader: ClusterReader, groups: Sequence[NodeGroupExpectation], now: datetime) -> list[str]:
    """The report lines of every node group the controller has labelled; none when it has labelled none, or when
    the API does not answer (the verdicts above say so already)."""
    try:
        nodes = reader.nodes()
    except ClusterError:
        return []
    views = [spare_view(nodes, g.name, g.gpus_per_node, now) for g in groups]
    return [line for view in views if view is not None for line in view.lines()]
