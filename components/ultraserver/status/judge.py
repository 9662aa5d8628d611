"""The judgement of ``ultraserver status``: per UltraServer, what is wrong with its block and its nodes.

Errors (exit 1): a block active with fewer Ready nodes than reserved for longer than the grace period, the
interconnect impaired, Ready nodes with fewer EFA devices than the layout, a fabric check run of this block that
failed, a block ending within the horizon with no successor in the group's capacityBlocks, and a reservation the
group names that has ended (stale) or that EC2 does not know. Warnings: a reservation not usable yet, interconnect
not reported, an end date that differs from the stack file (the block was extended).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ultraserver.facts.capacity import capacity_states
from ultraserver.facts.capacity.capacity_blocks import (
    DEFAULT_SCALE_DOWN_LEAD_MINUTES,
    CapacityBlock,
    reclaim_at,
    require_aware,
)
from ultraserver.facts.capacity.capacity_states import GRACE_MINUTES, HORIZON_HOURS
from ultraserver.problems import ERROR, WARNING, Problem
from ultraserver.status.acceptance import block_acceptance, remediation_packet
from ultraserver.status.aws import NOT_FOUND, UNREPORTED, Reservation
from ultraserver.status.cluster import ClusterSide, idle_gpu_hours
from ultraserver.verify.acceptance import CHECKS_FAILED


@dataclass(frozen=True)
class Limits:
    """When status calls a shortfall a failure (and the stack name its fixes quote)."""

    now: datetime
    grace: timedelta = timedelta(minutes=GRACE_MINUTES)
    horizon: timedelta = timedelta(hours=HORIZON_HOURS)
    stack: str = "<stack>"

    def __post_init__(self) -> None:
        require_aware(self.now, "Limits.now")


@dataclass(frozen=True)
class UltraServerStatus:
    """One UltraServer (one reservation of the group's current block, one node group) and what is wrong with it."""

    group: str
    """The gpuNodeGroups entry's name."""
    node_group: str
    """The node group (value of the ultraserver.io/ultraserver node label)."""
    block: int
    """Index of the current block in the group's capacityBlocks."""
    blocks: int
    reservation: Reservation
    cluster: ClusterSide | None
    """None when the cluster could not be read (StatusReport.cluster_unread says why)."""
    idle_gpu_hours: float | None
    """None when the cluster could not be read."""
    acceptance: dict[str, Any]
    """The block's acceptance (``status.acceptance.block_acceptance``), worked out once for judgement and reports."""
    problems: tuple[Problem, ...] = field(default=())

    def to_json(self, now: datetime) -> dict[str, object]:
        """Plain JSON data."""
        end = self.reservation.end
        reclaim = reclaim_at(end) if end else None
        return {
            "group": self.group,
            "nodeGroup": self.node_group,
            "block": self.block,
            "blocks": self.blocks,
            "reservation": self.reservation.to_json(),
            # Time left is time to the reclaim: the block's last 60 minutes are paid for but not usable.
            "reclaimAt": reclaim.isoformat() if reclaim else None,
            "secondsLeft": max(int((reclaim - now).total_seconds()), 0) if reclaim else None,
            "cluster": self.cluster.to_json() if self.cluster else None,
            "idleGpuHours": None if self.idle_gpu_hours is None else round(self.idle_gpu_hours, 2),
            "acceptance": self.acceptance,
            "remediation": remediation_packet(self.reservation, self.cluster, self.problems, now),
            "problems": [
                {"key": p.key, "value": p.value, "allowed": p.allowed, "fix": p.fix, "level": p.level}
                for p in self.problems
            ],
        }


def _utc(moment: datetime | None) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if moment else "unknown"


def judge(
    group: str,
    node_group: str,
    blocks: tuple[CapacityBlock, ...],
    index: int,
    reservation: Reservation,
    side: ClusterSide | None,
    limits: Limits,
    settings_key: str,
    switches: bool = True,
) -> UltraServerStatus:
    """The status of one UltraServer of the group's current block (``blocks[index]``); ``side`` None: AWS only.

    ``switches``: the group moves between blocks by a ``pulumi up`` (``handover: switch``); False under
    ``handover: standby``, where each block has its own group and there is no switch to miss."""
    now, r, key = limits.now, reservation, node_group
    several = len(blocks) > 1
    block_key = f"{settings_key}.capacityBlocks[{index}]" if several else settings_key
    end_key = f"{block_key}.end" if several else f"{settings_key}.reservationWindow.end"
    problems = _state_problems(key, r, block_key)
    window = blocks[index].window
    if window and r.end and r.end != window.end:
        problems.append(
            Problem(
                f"{key}: block end",
                f"EC2 says {_utc(r.end)}, the stack file {_utc(window.end)}",
                "the same end",
                f"set {end_key} to {r.end.astimezone(timezone.utc).isoformat()} (the block was extended) "
                "so the scale-down runs at the real end",
                WARNING,
            )
        )
    lead = window.scale_down_lead_minutes if window else None
    problems += _running_problems(key, r, side, lead, limits, settings_key if index > 0 and switches else None)
    problems += _ending_problems(key, group, r, blocks, index, settings_key, limits)
    accepted = block_acceptance(r, side)
    problems += _check_problems(key, accepted, limits.stack)
    idle = (
        None if side is None else (idle_gpu_hours(side, r.total, r.start, r.end, now) if r.state == "active" else 0.0)
    )
    return UltraServerStatus(group, node_group, index, len(blocks), r, side, idle, accepted, tuple(problems))


def _check_problems(key: str, accepted: Mapping[str, Any], stack: str) -> list[Problem]:
    """A check run of this block failed: the evidence of the remediation packet (verify judges its log)."""
    if accepted["checks"] != CHECKS_FAILED:
        return []
    return [
        Problem(
            f"{key}: fabric checks",
            accepted["checksDetail"],
            "every check run of this block passed",
            f"ultraserver verify --stack {stack} for the failed run's log; an UltraServer that keeps failing: the "
            "remediation packet (status --json)",
        )
    ]


def _state_problems(key: str, r: Reservation, block_key: str) -> list[Problem]:
    """The reservation is missing, has ended, or is in a state that is not usable."""
    # The block's own state counts when the reservation looks usable but its block does not.
    state = r.state if r.state not in capacity_states.USABLE or not r.block_state else r.block_state
    kind = capacity_states.state_kind(state) if r.state != NOT_FOUND else "missing"
    if kind == "missing":
        return [
            Problem(
                f"{key}: reservation",
                f"{r.id} not found",
                "a reservation of this account and region",
                f"correct the reservation id in {block_key} or the region (aws:region / --region)",
            )
        ]
    if kind == "ended":
        fix = capacity_states.stale_fix(block_key, state, past=False)
        return [Problem(f"{key}: reservation", f"{r.id} {state}", "active or scheduled", fix)]
    if kind != "usable":
        fix = capacity_states.state_fix(state)
        return [Problem(f"{key}: reservation", f"{r.id} {state}", "active or scheduled", fix, WARNING)]
    return []


def _running_problems(
    key: str,
    r: Reservation,
    side: ClusterSide | None,
    lead_minutes: int | None,
    limits: Limits,
    switched: str | None = None,
) -> list[Problem]:
    """Nodes short of the reservation for longer than the grace period, the interconnect, EFA devices.

    ``switched`` (the group's settings key) when this block followed another: its nodes come up only if a ``pulumi up``
    ran between the previous block's scale-down and this start; without it the launch template still targets the
    previous (ended) reservation and no node launches, which status cannot see without reading the template.
    """
    problems: list[Problem] = []
    now = limits.now
    if r.state != "active" or r.start is None or r.start > now:
        return problems
    # Nodes are expected between the start and the scale-down before the end.
    lead = timedelta(minutes=lead_minutes if lead_minutes is not None else DEFAULT_SCALE_DOWN_LEAD_MINUTES)
    in_window = r.end is None or now < r.end - lead
    if in_window and side is not None and side.ready < r.total:
        problems += _short_problems(key, r, side, limits, switched)
    if r.interconnect == capacity_states.INTERCONNECT_IMPAIRED:
        problems.append(
            Problem(
                f"{key}: interconnect",
                f"{r.block_id} {r.interconnect}",
                capacity_states.INTERCONNECT_OK,
                "contact AWS Support with the Capacity Block id; NVLink jobs on this UltraServer will degrade",
            )
        )
    elif r.interconnect in (UNREPORTED, "insufficient-data"):
        problems.append(
            Problem(
                f"{key}: interconnect",
                f"{r.block_id or r.id} {r.interconnect}",
                capacity_states.INTERCONNECT_OK,
                "rerun later; allow ec2:DescribeCapacityBlockStatus if it stays unreported",
                WARNING,
            )
        )
    if side is not None and side.short_efa:
        problems.append(
            Problem(
                f"{key}: EFA devices",
                f"{len(side.short_efa)} Ready node(s) below {side.efa_per_node}: {', '.join(side.short_efa[:3])}",
                f"{side.efa_per_node} vpc.amazonaws.com/efa per node (the group's efaLayout)",
                "check the EFA device plugin pods on those nodes and the launch template's network interfaces "
                "(`ultraserver verify --node-facts-only`)",
            )
        )
    return problems


def _short_problems(key: str, r: Reservation, side: ClusterSide, limits: Limits, switched: str | None) -> list[Problem]:
    """Fewer Ready nodes than reserved, for longer than the grace period."""
    assert r.start is not None  # _running_problems: an active block that has started
    now = limits.now
    problems: list[Problem] = []
    # Missing nodes: short since the block started; only NotReady ones: since the first turned NotReady.
    since = r.start if side.nodes < r.total or side.not_ready_since is None else max(r.start, side.not_ready_since)
    if now - since > limits.grace:
        minutes = int((now - since).total_seconds() // 60)
        short = f"{minutes} minutes" if minutes < 120 else f"{minutes / 60:.1f} hours"
        problems.append(
            Problem(
                f"{key}: nodes Ready",
                f"{side.ready} of {r.total} reserved, short for {short}",
                f"{r.total} Ready within {int(limits.grace.total_seconds() // 60)} minutes",
                "the block is paid for: check the node group (aws eks describe-nodegroup; for self-managed groups "
                "the Auto Scaling group's activity), `kubectl get nodes -l ultraserver.io/ultraserver="
                f"{key}` and the node bootstrap logs; `ultraserver verify` judges the nodes that joined"
                + (
                    f"; no node at all after a block switch: if no `pulumi up` ran between the previous block's "
                    "scale-down and this start, the launch template still targets the previous reservation: scale "
                    "the group to 0 outside Pulumi first (`aws eks update-nodegroup-config --scaling-config "
                    "minSize=0,desiredSize=0`, which a deploy would not do before rolling the template), then set "
                    f"{switched}.scaleToZeroForUpgrade: true and `pulumi up`, then remove it and `pulumi up` again "
                    "(docs/running-on-capacity-blocks.md)"
                    if switched and side.nodes == 0
                    else ""
                ),
            )
        )
    return problems


def _ending_problems(
    key: str,
    group: str,
    r: Reservation,
    blocks: tuple[CapacityBlock, ...],
    index: int,
    settings_key: str,
    limits: Limits,
) -> list[Problem]:
    """A block ending within the horizon with no successor (the next entry of the group's capacityBlocks)."""
    now = limits.now
    if r.end is None or r.end <= now or index + 1 < len(blocks):
        return []
    reclaim = reclaim_at(r.end)
    if reclaim - now > limits.horizon or capacity_states.state_kind(r.state) != "usable":
        return []
    hours = max((reclaim - now).total_seconds(), 0) / 3600
    return [
        Problem(
            f"{key}: block end",
            f"{r.block_id or r.id} is reclaimed from {_utc(reclaim)} (in {hours:.1f} h; it ends {_utc(r.end)}) with no "
            "next block",
            f"more than {int(limits.horizon.total_seconds() // 3600)} h left, or a next block",
            f"extend it (ultraserver extend --stack {limits.stack} --group {group} --hours 24), or buy the next block "
            f"and list it after this one in {settings_key}.capacityBlocks",
        )
    ]


def stale_problems(
    group: str, settings_key: str, blocks: tuple[CapacityBlock, ...], current: int, found: dict[str, Reservation]
) -> list[Problem]:
    """Reservations of the group's other blocks that have ended or that EC2 does not know."""
    problems = []
    for index, block in enumerate(blocks):
        if index == current:
            continue
        block_key = f"{settings_key}.capacityBlocks[{index}]"
        for cr_id in block.reservation_ids:
            r = found.get(cr_id, Reservation(cr_id, NOT_FOUND))
            if r.state == NOT_FOUND:
                fix = f"correct the reservation id in {block_key} or the region"
            elif r.state in capacity_states.ENDED:
                fix = capacity_states.stale_fix(block_key, r.state, past=index < current)
            else:
                continue
            problems.append(Problem(f"{group}: {block_key}", f"{cr_id} {r.state}", "active or scheduled", fix, ERROR))
    return problems
