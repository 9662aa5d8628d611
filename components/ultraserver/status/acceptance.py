"""Acceptance at the start of a block: time to ready (block start -> every reserved node Ready), and, when the
UltraServer fails, the packet the EC2 guide's remediation path needs.

For an impaired UltraServer block the EC2 user guide says AWS "generally will not take action to terminate your
instances" and that remediation is requested "by terminating all instances on the capacity block and submitting an
AWS support case" (quoted from the issue; the search corpus did not hold the page: UNVERIFIED here). The packet holds
what that case needs: the Capacity Block and reservation ids, the instance ids (the nodes' providerID), the
interconnect status and running/reserved counts DescribeCapacityReservations and DescribeCapacityBlockStatus report,
the failing evidence and the paid GPU-hours lost so far. Terminating every instance is the user's decision: the packet
carries the commands, nothing runs them. The group is scaled to 0 first: while its desired size is still the
UltraServer's, Auto Scaling replaces each terminated instance ("Amazon EC2 Auto Scaling ... replaces it" for an
instance that is terminated or unhealthy, Auto Scaling user guide, health checks; UNVERIFIED here: the page was not in
the search corpus), and the new instance lands on the same impaired block.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ultraserver.facts.capacity import capacity_states
from ultraserver.problems import ERROR, Problem
from ultraserver.status.aws import Reservation
from ultraserver.status.cluster import ClusterSide, idle_gpu_hours
from ultraserver.verify.acceptance import CHECKS_FAILED, acceptance


def block_acceptance(r: Reservation, side: ClusterSide | None) -> dict[str, Any]:
    """The reservation's block start, when its reserved nodes were all Ready and its checks' verdict
    (``verify.acceptance``)."""
    return acceptance(r.start, r.total, side.ready_since if side else (), side.check_runs if side else ())


def impaired_since(r: Reservation, side: ClusterSide | None) -> datetime | None:
    """Since when the UltraServer's fabric is known to be impaired: the block's start when EC2 reports its interconnect
    impaired (DescribeCapacityBlockStatus reports the status, not since when: botocore ec2 CapacityBlockStatus has no
    time of it, so the whole block counts, an over-estimate), else when this block's first check run failed; None
    when neither."""
    if r.interconnect == capacity_states.INTERCONNECT_IMPAIRED:
        return r.start
    accepted = block_acceptance(r, side)
    if accepted["checks"] == CHECKS_FAILED and accepted["checksFinishedAt"]:
        return datetime.fromisoformat(accepted["checksFinishedAt"])
    return None


def remediation_packet(
    r: Reservation, side: ClusterSide | None, problems: tuple[Problem, ...], now: datetime
) -> dict[str, Any] | None:
    """The packet for an AWS support case when the UltraServer fails (an impaired interconnect or a failing check);
    None when it does not. Its paid GPU-hours lost count the slots with no Ready node and the Ready nodes' time on
    the impaired fabric (``impaired_since``)."""
    failing = [p for p in problems if p.level == ERROR]
    if r.interconnect != capacity_states.INTERCONNECT_IMPAIRED and not failing:
        return None
    gpu_hours_lost = (
        None if side is None else idle_gpu_hours(side, r.total, r.start, r.end, now, impaired_since(r, side))
    )
    instances = list(side.instance_ids) if side else []
    ids = " ".join(instances) or "<instance ids>"
    group = (
        "$(aws autoscaling describe-auto-scaling-instances --instance-ids "
        + (instances[0] if instances else "<instance id>")
        + " --query 'AutoScalingInstances[0].AutoScalingGroupName' --output text)"
    )
    return {
        "at": now.isoformat(),
        "capacityBlockId": r.block_id or None,
        "capacityReservationIds": [r.id],
        "instanceIds": instances,
        "interconnectStatus": r.interconnect,
        "reservation": {"state": r.state, "reserved": r.total, "running": r.running},
        "evidence": [str(p) for p in failing],
        "paidGpuHoursLost": None if gpu_hours_lost is None else round(gpu_hours_lost, 2),
        "steps": ["scaleToZero", "terminateAll", "supportCase"],
        "scaleToZero": {
            "optIn": True,
            "command": f"aws autoscaling update-auto-scaling-group --auto-scaling-group-name {group} --min-size 0 "
            "--desired-capacity 0",
            "why": "first: with the group's desired size still the UltraServer's, Auto Scaling launches a replacement "
            "for every terminated instance onto the same impaired block. This scales in (terminating the group's "
            "instances); a managed node group can take the same through EKS (`aws eks update-nodegroup-config "
            "--scaling-config minSize=0,desiredSize=0`); `pulumi up` puts the stack's size back once AWS has "
            "remediated the block",
        },
        "terminateAll": {
            "optIn": True,
            "command": f"aws ec2 terminate-instances --instance-ids {ids}",
            "why": "after scaleToZero: the EC2 guide's remediation for an impaired UltraServer block is to terminate "
            "every instance on the block (any the scale-in left), then open a support case with this packet; "
            "nothing here runs it",
        },
        "supportCase": "open an AWS support case for the Capacity Block with this packet",
    }
