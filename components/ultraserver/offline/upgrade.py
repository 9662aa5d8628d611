"""``ultraserver plan --upgrade MINOR``: a minor upgrade placed around the stack's Capacity Blocks, with a rollback.

A GB200 managed node group changes version only at desired size 0 (EKS UltraServer guide: set the desired size to 0
before upgrading), so the control plane and the node groups move in a gap between blocks (or before the first block),
never while a block's nodes serve. What each step relies on:

- Time budget. UpdateClusterVersion: "Cluster updates are asynchronous, and they should finish within a few minutes"
  (EKS API reference). The toolkit budgets an hour for it and an hour for `pulumi up` moving the node groups (at 0,
  no node rolls) and the add-ons: margins of its own, UNVERIFIED against any measured GB200 upgrade.
- Rollback. "you can revert your cluster's Kubernetes control plane to the previous minor version within 7 days of an
  in-place upgrade"; "You are responsible for: Rolling back Managed Node Groups, self-managed nodes" (EKS best
  practices, rollback-cluster-upgrades). UpdateClusterVersion takes ``rollbackConfig.timeoutMinutes``, "between 120
  (2 hours) and 10080 (7 days). Default: 720" (botocore's EKS model; pulumi-aws 7.51.1 does not expose it, so the
  rollback goes through boto3). The upgrade is placed late enough in a long gap that the next block's acceptance
  runs inside the 7 days, with ROLLBACK_MARGIN left to act on a failure.
- No gap. The cost either way: the block hours a drain would lose, against the extended-support surcharge per
  cluster-hour (facts/kubernetes/eks_versions.py, with its source) until the next gap opens.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from ultraserver.config.settings import Settings
from ultraserver.facts.hardware import ultraservers
from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.pins import ami
from ultraserver.facts.pins.charts import version_tuple
from ultraserver.problems import Problem

CONTROL_PLANE_BUDGET = timedelta(hours=1)
NODE_GROUP_BUDGET = timedelta(hours=1)
BUDGET = CONTROL_PLANE_BUDGET + NODE_GROUP_BUDGET
ROLLBACK_WINDOW = timedelta(days=7)
ROLLBACK_MARGIN = timedelta(days=2)
"""Time left inside the rollback window after the next block's acceptance, to see a failure and roll back."""
ROLLBACK_TIMEOUT_MINUTES = 720
"""rollbackConfig.timeoutMinutes the advice passes: EKS's default (allowed 120 to 10080)."""
ROLLBACK_SOURCE = "EKS best practices 'Best Practices for Cluster Version Rollback' (rollback-cluster-upgrades)"


@dataclass(frozen=True)
class Serving:
    """When some block's nodes serve: from its start to its end, merged over every GPU group of the stack."""

    start: datetime
    end: datetime
    nodes: int
    """GPU instances of the blocks serving then."""


@dataclass(frozen=True)
class RollbackAdvice:
    """How to roll the control plane back if the acceptance on the new version fails."""

    cluster: str
    version: str
    until: datetime

    def request(self) -> dict[str, Any]:
        """The boto3 ``eks.update_cluster_version`` arguments of the rollback."""
        return {
            "name": self.cluster,
            "version": self.version,
            "rollbackConfig": {"timeoutMinutes": ROLLBACK_TIMEOUT_MINUTES},
        }

    def lines(self) -> list[str]:
        return [
            f"If that acceptance fails, roll back before {self.until:%Y-%m-%d %H:%M}Z (7 days after the upgrade; "
            f"{ROLLBACK_SOURCE}):",
            "  1. the GPU groups stay at 0 (scaleToZeroForUpgrade: true); roll the node groups back to "
            f"{self.version} first: EKS rolls back only the control plane",
            f"  2. boto3.client('eks').update_cluster_version(**{self.request()!r})",
            f'  3. set cluster.kubernetesVersion: "{self.version}" again and `pulumi refresh` so the state matches',
        ]


@dataclass(frozen=True)
class UpgradePlan:
    """When each step of a minor upgrade runs, or why it cannot run in a gap."""

    current: str
    target: str
    not_now: str
    """Why the upgrade must not start at the plan's moment (a block serves); empty when it may."""
    control_plane_at: datetime | None
    node_groups_at: datetime | None
    acceptance_at: datetime | None
    """The next block start after the upgrade, where the block-start acceptance runs on the new version."""
    rollback: RollbackAdvice | None
    no_gap: str
    """When no gap is big enough: why, and the cost either way."""

    def lines(self) -> list[str]:
        head = f"Upgrade {self.current} -> {self.target} (budget {_hours(BUDGET)} h at 0 GPU nodes):"
        found = [head] + ([f"  not now: {self.not_now}"] if self.not_now else [])
        if self.control_plane_at is None or self.node_groups_at is None:
            return [*found, f"  {self.no_gap}"]
        found.append(
            f"  {self.control_plane_at:%Y-%m-%d %H:%M}Z  control plane to {self.target} (UpdateClusterVersion)"
        )
        found.append(
            f"  {self.node_groups_at:%Y-%m-%d %H:%M}Z  node groups and add-ons to {self.target} "
            "(`pulumi up`, groups at 0)"
        )
        if self.acceptance_at is None:
            return [*found, "  no block follows: run `ultraserver verify` when the next one starts"]
        found.append(f"  {self.acceptance_at:%Y-%m-%d %H:%M}Z  block-start acceptance on {self.target}")
        return found + [f"  {line}" for line in self.rollback.lines()] if self.rollback else found


def _hours(span: timedelta) -> float:
    return span.total_seconds() / 3600


def serving_windows(settings: Settings) -> list[Serving]:
    """Every block window of every GPU group, merged where they overlap or touch, in time order."""
    spans = sorted(
        (block.window.start, block.window.end, g.nodes_per_group * g.node_groups)
        for g in settings.gpu_node_groups
        for block in g.blocks
        if block.window is not None
    )
    merged: list[Serving] = []
    for start, end, nodes in spans:
        if not merged or start > merged[-1].end:
            merged.append(Serving(start, end, nodes))
            continue
        last = merged[-1]
        # Blocks that overlap serve together; a block that starts as another ends takes over from it.
        together = last.nodes + nodes if start < last.end else max(last.nodes, nodes)
        merged[-1] = Serving(last.start, max(last.end, end), together)
    return merged


def target_problem(settings: Settings, target: str, now: datetime) -> Problem | None:
    """A target the stack cannot upgrade to: not one minor up, or no GB200 AMI pinned for it, or not offered."""
    current = settings.cluster.kubernetes_version
    allowed = [m for m in ami.RELEASE_VERSIONS if eks_versions.offered(m, now.date())]
    major, minor = _minor(current)
    step = (major, minor + 1)
    if _minor(target) != step or target not in allowed:
        return Problem(
            "--upgrade",
            target,
            f"the next minor after the stack's {current} that has a pinned GB200 AMI and that EKS offers "
            f"({', '.join(m for m in allowed if _minor(m) == step) or 'none'}; "
            "EKS upgrades one minor at a time)",
            "give the next minor, or update the toolkit for a newer pin",
        )
    return None


def _minor(version: str) -> tuple[int, ...]:
    """A minor as (major, minor); () when it is not a dotted version."""
    return (version_tuple(version) or ())[:2]


def plan_upgrade(settings: Settings, target: str, now: datetime) -> UpgradePlan:
    """Place the upgrade in the first gap after ``now`` that holds the budget, late enough for the rollback window."""
    current = settings.cluster.kubernetes_version
    windows = serving_windows(settings)
    serving = next((w for w in windows if w.start <= now < w.end), None)
    not_now = f"a block's {serving.nodes} nodes serve until {serving.end:%Y-%m-%d %H:%M}Z" if serving else ""
    gaps: list[tuple[datetime, datetime | None]] = []
    edge = now
    for w in windows:
        if w.end <= now:
            continue
        if w.start > edge:
            gaps.append((edge, w.start))
        edge = max(edge, w.end)
    gaps.append((edge, None))
    for start, end in gaps:
        if end is None:
            at = start
        elif end - start >= BUDGET:
            at = max(start, min(end - BUDGET, end - ROLLBACK_WINDOW + ROLLBACK_MARGIN))
        else:
            continue
        if end is not None or not windows or start <= now:
            advice = RollbackAdvice(settings.cluster.name, current, at + ROLLBACK_WINDOW) if end else None
            return UpgradePlan(current, target, not_now, at, at + CONTROL_PLANE_BUDGET, end, advice, "")
        break
    return UpgradePlan(current, target, not_now, None, None, None, None, _no_gap(settings, windows, now))


def _no_gap(settings: Settings, windows: list[Serving], now: datetime) -> str:
    """No gap before the last block ends: the block hours a drain loses against extended support until then."""
    last = windows[-1]
    nodes = max(w.nodes for w in windows if w.end > now)
    gpus = nodes * ultraservers.GPUS_PER_NODE
    drain = f"draining {nodes} nodes for {_hours(BUDGET):.0f} h loses {nodes * _hours(BUDGET):.0f} block instance-hours"
    row = eks_versions.eks_version(settings.cluster.kubernetes_version)
    end = row.end_of_standard_support if row else None
    surcharge = eks_versions.EXTENDED_PRICE_PER_HOUR - eks_versions.STANDARD_PRICE_PER_HOUR
    if end is None or last.end.date() <= end:
        wait = f"waiting until the blocks end ({last.end:%Y-%m-%d %H:%M}Z) costs no extended support"
    else:
        hours = (last.end - datetime.combine(end, datetime.min.time(), last.end.tzinfo)).total_seconds() / 3600
        wait = (
            f"waiting until the blocks end ({last.end:%Y-%m-%d %H:%M}Z) runs {hours:.0f} h in extended support from "
            f"{end}: ${surcharge * hours:.2f} more (${eks_versions.EXTENDED_PRICE_PER_HOUR:.2f} instead of "
            f"${eks_versions.STANDARD_PRICE_PER_HOUR:.2f} per cluster-hour, {eks_versions.PRICE_SOURCE})"
        )
    return (
        f"no gap of {_hours(BUDGET):.0f} h between blocks before {last.end:%Y-%m-%d %H:%M}Z: either {drain} "
        f"({gpus} GPUs), or {wait}"
    )
