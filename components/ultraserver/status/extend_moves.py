"""After ``ultraserver extend`` buys an extension: the scheduled actions tied to the block's old end move to the new
one at once, through Auto Scaling, with nobody deploying in between.

The toolkit's own scale-down of a group (``capacity-block[-<start>]-end`` at end minus its lead) is put again at the
new end minus the same lead (PutScheduledUpdateGroupAction replaces an action of the same name). EKS's own action on a
managed group, "Amazon EKS Node Group Capacity Scaledown Before Reservation End" at end − 40 minutes, is EKS's: its
guide says "Don't edit or delete this scheduled action" and does not say whether EKS moves it when a block is
extended (UNVERIFIED). Left at the old end it would scale the group to 0 inside the extension, so extend reports it
when it still sits at the old end − 40, with the fix. The groups are the cluster's Auto Scaling groups: self-managed
ones carry ``kubernetes.io/cluster/<cluster>`` (resources/self_managed.py), EKS's carry ``eks:cluster-name``
(UNVERIFIED: the tag is not in the EKS guide pages read).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from ultraserver.facts.capacity.capacity_blocks import (
    ACTION_PREFIX,
    EKS_MANAGED_SCALEDOWN_ACTION,
    EKS_MANAGED_SCALEDOWN_LEAD,
    MAX_SCALE_DOWN_LEAD_MINUTES,
)
from ultraserver.preflight.clients import Client, call


@dataclass(frozen=True)
class Move:
    """One scheduled action to put again at a new time (sizes unchanged)."""

    group: str
    name: str
    start: datetime
    min_size: int
    max_size: int
    desired: int


def planned_moves(actions: list[dict], old_end: datetime, new_end: datetime) -> tuple[list[Move], list[dict]]:
    """The toolkit's scale-downs at the old end minus their lead, moved by the extension; and EKS's own actions still
    at the old end − 40 minutes (for the report)."""
    shift = new_end - old_end
    moves, stale = [], []
    for a in actions:
        at, name = a["StartTime"], a["ScheduledActionName"]
        # A group's own scale-down lies at most the largest lead before its block's end.
        earliest = old_end - timedelta(minutes=MAX_SCALE_DOWN_LEAD_MINUTES)
        if name.startswith(ACTION_PREFIX) and name.endswith("-end") and earliest <= at < old_end:
            sizes = (a.get("MinSize", 0), a.get("MaxSize", 0), a.get("DesiredCapacity", 0))
            moves.append(Move(a["AutoScalingGroupName"], name, at + shift, *sizes))
        elif name == EKS_MANAGED_SCALEDOWN_ACTION and at == old_end - EKS_MANAGED_SCALEDOWN_LEAD:
            stale.append(a)
    return moves, stale


def _cluster_groups(autoscaling: Client, cluster: str) -> list[str]:
    names: list[str] = []
    for key, values in (("tag-key", [f"kubernetes.io/cluster/{cluster}"]), ("tag:eks:cluster-name", [cluster])):
        page = call(autoscaling, "describe_auto_scaling_groups", Filters=[{"Name": key, "Values": values}])
        names += [g["AutoScalingGroupName"] for g in page.get("AutoScalingGroups", [])]
    return sorted(set(names))


def move_scale_downs(autoscaling: Client, cluster: str, old_end: datetime, new_end: datetime) -> list[str]:
    """Move the cluster's scale-downs tied to ``old_end``; report lines (one per move, one per stale EKS action)."""
    lines = []
    for group in _cluster_groups(autoscaling, cluster):
        actions = call(autoscaling, "describe_scheduled_actions", AutoScalingGroupName=group)
        moves, stale = planned_moves(actions.get("ScheduledUpdateGroupActions", []), old_end, new_end)
        for m in moves:
            call(
                autoscaling,
                "put_scheduled_update_group_action",
                AutoScalingGroupName=m.group,
                ScheduledActionName=m.name,
                StartTime=m.start,
                MinSize=m.min_size,
                MaxSize=m.max_size,
                DesiredCapacity=m.desired,
            )
            lines.append(f"moved {m.group} {m.name} to {m.start:%Y-%m-%d %H:%M} UTC")
        lines += [
            f"WARNING {group}: EKS's '{EKS_MANAGED_SCALEDOWN_ACTION}' still at {a['StartTime']:%Y-%m-%d %H:%M} UTC "
            "(the old end − 40 min; whether EKS moves it after an extension is unverified): it would scale the group "
            "to 0 inside the extension; check `aws autoscaling describe-scheduled-actions` again later and open an "
            "AWS support case if it stays"
            for a in stale
        ]
    return lines
