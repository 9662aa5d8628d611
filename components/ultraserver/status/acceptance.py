"""Acceptance at the start of a block: time to ready (block start -> every reserved node Ready), and, when the
UltraServer fails, the packet the EC2 guide's remediation path needs.

For an impaired UltraServer block the EC2 user guide says AWS "generally will not take action to terminate your
instances" and that remediation is requested "by terminating all instances on the capacity block and submitting an
AWS support case" (quoted from the issue; the search corpus did not hold the page: UNVERIFIED here). The packet holds
what that case needs: the Capacity Block and reservation ids, the instance ids (the nodes' providerID), the
interconnect status and running/reserved counts DescribeCapacityReservations and DescribeCapacityBlockStatus report,
the failing evidence and the paid GPU-hours lost so far. Terminating every instance is the user's decision: the packet
carries the command, nothing runs it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ultraserver.facts.capacity import capacity_states
from ultraserver.problems import ERROR, Problem
from ultraserver.status.aws import Reservation
from ultraserver.status.cluster import ClusterSide
from ultraserver.verify.acceptance import acceptance


def block_acceptance(r: Reservation, side: ClusterSide | None) -> dict[str, Any]:
    """The reservation's block start, when its reserved nodes were all Ready and its checks' verdict
    (``verify.acceptance``)."""
    return acceptance(r.start, r.total, side.ready_since if side else (), side.check_runs if side else ())


def remediation_packet(
    r: Reservation, side: ClusterSide | None, problems: tuple[Problem, ...], gpu_hours_lost: float | None, now: datetime
) -> dict[str, Any] | None:
    """The packet for an AWS support case when the UltraServer fails (an impaired interconnect or a failing check);
    None when it does not."""
    failing = [p for p in problems if p.level == ERROR]
    if r.interconnect != capacity_states.INTERCONNECT_IMPAIRED and not failing:
        return None
    instances = list(side.instance_ids) if side else []
    return {
        "at": now.isoformat(),
        "capacityBlockId": r.block_id or None,
        "capacityReservationIds": [r.id],
        "instanceIds": instances,
        "interconnectStatus": r.interconnect,
        "reservation": {"state": r.state, "reserved": r.total, "running": r.running},
        "evidence": [str(p) for p in failing],
        "paidGpuHoursLost": None if gpu_hours_lost is None else round(gpu_hours_lost, 2),
        "terminateAll": {
            "optIn": True,
            "command": "aws ec2 terminate-instances --instance-ids " + (" ".join(instances) or "<instance ids>"),
            "why": "the EC2 guide's remediation for an impaired UltraServer block: terminate every instance on the "
            "block, then open a support case with this packet; nothing here runs it",
        },
    }
