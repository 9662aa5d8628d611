"""The AWS side of ``ultraserver status``: each reservation's state, window and use, its block and interconnect.

Calls go through preflight's ``call`` (same clients, same access errors: no credentials or no endpoint raise
PreflightAccessError, which the command reports in one line with exit 2).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from ultraserver.facts.capacity.capacity_states import INTERCONNECT_IMPAIRED, INTERCONNECT_OK, USABLE
from ultraserver.preflight.capacity import describe_reservations
from ultraserver.preflight.clients import ApiFailure, Client, call_all

NOT_FOUND = "not-found"
UNREPORTED = "unreported"


@dataclass(frozen=True)
class Reservation:
    """One Capacity Reservation as EC2 reports it (DescribeCapacityReservations, DescribeCapacityBlocks/Status)."""

    id: str
    state: str
    """CapacityReservationState, or 'not-found' when EC2 does not know the id."""
    start: datetime | None = None
    end: datetime | None = None
    total: int = 0
    """TotalInstanceCount: instances reserved."""
    available: int = 0
    """AvailableInstanceCount: reserved instances not running."""
    block_id: str = ""
    block_state: str = ""
    """CapacityBlockResourceState of its Capacity Block."""
    interconnect: str = UNREPORTED
    """CapacityBlockInterconnectStatus of its Capacity Block, or 'unreported'."""

    @property
    def running(self) -> int:
        """Instances running against the reservation."""
        return max(self.total - self.available, 0)

    def to_json(self) -> dict[str, object]:
        """Plain JSON data."""
        return {
            "id": self.id,
            "state": self.state,
            "capacityBlockId": self.block_id,
            "capacityBlockState": self.block_state,
            "start": self.start.isoformat() if self.start else None,
            "end": self.end.isoformat() if self.end else None,
            "reserved": self.total,
            "running": self.running,
            "interconnect": self.interconnect,
        }


def read_reservations(ids: Sequence[str], ec2: Client, with_blocks: bool = True) -> dict[str, Reservation]:
    """Every id's reservation (state 'not-found' when unknown), with its block's state and interconnect.

    Raises ApiFailure when EC2 refuses DescribeCapacityReservations; a block call that fails leaves the block
    fields empty and the interconnect 'unreported' (it is not reported before a block starts, either).
    """
    found, missing = describe_reservations(list(dict.fromkeys(ids)), ec2)
    block_ids = sorted({str(cr["CapacityBlockId"]) for cr in found.values() if cr.get("CapacityBlockId")})
    blocks: dict[str, dict] = {}
    statuses: dict[str, dict] = {}
    if with_blocks and block_ids:
        blocks = _by_block(ec2, "describe_capacity_blocks", "CapacityBlocks", block_ids)
        statuses = _by_block(ec2, "describe_capacity_block_status", "CapacityBlockStatuses", block_ids)
    result = {cr_id: Reservation(cr_id, NOT_FOUND) for cr_id in missing}
    for cr_id, cr in found.items():
        block_id = str(cr.get("CapacityBlockId", ""))
        result[cr_id] = Reservation(
            id=cr_id,
            state=str(cr.get("State", "unknown")),
            start=cr.get("StartDate"),
            end=cr.get("EndDate"),
            total=int(cr.get("TotalInstanceCount", 0)),
            available=int(cr.get("AvailableInstanceCount", 0)),
            block_id=block_id,
            block_state=str(blocks.get(block_id, {}).get("State", "")),
            interconnect=str(statuses.get(block_id, {}).get("InterconnectStatus", UNREPORTED)),
        )
    return {cr_id: result[cr_id] for cr_id in ids if cr_id in result}


def _by_block(ec2: Client, operation: str, key: str, block_ids: list[str]) -> dict[str, dict]:
    try:
        answer = call_all(ec2, operation, CapacityBlockIds=block_ids)
    except ApiFailure:
        return {}
    return {item["CapacityBlockId"]: item for item in answer.get(key, [])}


def combined(reservations: Sequence[Reservation]) -> Reservation:
    """Several reservations judged as one (a fleet over a resource group): counts summed, the worst state."""
    if not reservations:
        return Reservation("(empty resource group)", NOT_FOUND)
    start, end = _overlap(reservations)
    return Reservation(
        id=", ".join(r.id for r in reservations),
        state=_worst_state([r.state for r in reservations]),
        start=start,
        end=end,
        total=sum(r.total for r in reservations),
        available=sum(r.available for r in reservations),
        block_id=_distinct(r.block_id for r in reservations),
        block_state=_distinct(r.block_state for r in reservations),
        interconnect=_worst_link([r.interconnect for r in reservations]),
    )


def _overlap(reservations: Sequence[Reservation]) -> tuple[datetime | None, datetime | None]:
    """When all of them run: the latest start and the earliest end (None where none is known)."""
    starts = [r.start for r in reservations if r.start]
    ends = [r.end for r in reservations if r.end]
    return (max(starts) if starts else None), (min(ends) if ends else None)


def _worst_state(states: Sequence[str]) -> str:
    """The first state that is not usable, else active if any is, else the first."""
    return next((s for s in states if s not in USABLE), "active" if "active" in states else states[0])


def _distinct(values: Iterable[str]) -> str:
    """The distinct non-empty values, in order, comma-separated."""
    return ", ".join(dict.fromkeys(v for v in values if v))


def _worst_link(links: Sequence[str]) -> str:
    """impaired if any link is, else the first that is not ok (insufficient data), else ok."""
    if INTERCONNECT_IMPAIRED in links:
        return INTERCONNECT_IMPAIRED
    return next((link for link in links if link != INTERCONNECT_OK), INTERCONNECT_OK)
