"""The states a Capacity Block, its Capacity Reservations and its interconnect can be in, and what each means here.

Sources (the lists are the enums of botocore's ec2 service model, ec2-2016-11-15; tests/facts/test_capacity_states.py
reads them from the installed botocore and fails when AWS adds or drops a value):
- ``CapacityBlockResourceState`` (DescribeCapacityBlocks ``CapacityBlocks[].State``),
- ``CapacityReservationState`` (DescribeCapacityReservations ``CapacityReservations[].State``; meanings from that
  member's documentation and the EC2 API reference, API_CapacityReservation),
- ``CapacityBlockInterconnectStatus`` (DescribeCapacityBlockStatus ``CapacityBlockStatuses[].InterconnectStatus``),
- ``CapacityBlockExtensionStatus`` (PurchaseCapacityBlockExtension ``CapacityBlockExtensions[].
  CapacityBlockExtensionStatus``).
Extension rules: EC2 user guide "Extend Capacity Blocks",
https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-extend.html.
"""

from __future__ import annotations

# ---------------------------------------------------------------- Capacity Reservations

CAPACITY_RESERVATION_STATES = (
    "active",
    "expired",
    "cancelled",
    "pending",
    "failed",
    "scheduled",
    "payment-pending",
    "payment-failed",
    "assessing",
    "delayed",
    "unsupported",
    "cancelling",
    "unavailable",
)
"""Every CapacityReservationState, in the model's order."""

CAPACITY_BLOCK_STATES = (
    "active",
    "expired",
    "unavailable",
    "cancelled",
    "failed",
    "scheduled",
    "payment-pending",
    "payment-failed",
)
"""Every CapacityBlockResourceState, in the model's order."""

USABLE = frozenset({"active", "scheduled"})
"""Launches instances now (active) or at its start (scheduled)."""
ENDED = frozenset({"expired", "cancelled", "failed", "payment-failed", "unsupported", "cancelling"})
"""Will never launch anything again: a group that still names it is stale (cancelling: capacity already released)."""
PENDING = frozenset({"pending", "payment-pending", "assessing", "delayed", "unavailable"})
"""Not launchable yet (payment or provisioning in progress; unavailable: no documented meaning, treated as waiting)."""

# What to do about a reservation in each state that is not usable.
STATE_FIXES: dict[str, str] = {
    "payment-pending": "wait until the Capacity Block payment completes (up to 12 hours), then rerun",
    "payment-failed": "fix the account's payment method and purchase a new Capacity Block",
    "expired": "purchase a new Capacity Block and put its reservation id in the stack",
    "cancelled": "purchase a new Capacity Block and put its reservation id in the stack",
    "failed": "purchase a new Capacity Block and put its reservation id in the stack",
    "unsupported": "EC2 will not deliver it; purchase a new Capacity Block",
    "cancelling": "its capacity is already released; purchase a new Capacity Block",
}
OTHER_FIX = "use a reservation that is scheduled or active"


def state_kind(state: str) -> str:
    """'usable', 'ended', 'pending' or 'unknown' (a value this toolkit does not know yet)."""
    if state in USABLE:
        return "usable"
    if state in ENDED:
        return "ended"
    if state in PENDING:
        return "pending"
    return "unknown"


def state_fix(state: str) -> str:
    """The fix for a reservation in ``state`` (empty when it is usable)."""
    return "" if state in USABLE else STATE_FIXES.get(state, OTHER_FIX)


# ---------------------------------------------------------------- interconnect

INTERCONNECT_STATUSES = ("ok", "impaired", "insufficient-data")
"""Every CapacityBlockInterconnectStatus: healthy, impaired, or not enough data (e.g. before the block starts)."""
INTERCONNECT_OK, INTERCONNECT_IMPAIRED = "ok", "impaired"

# ---------------------------------------------------------------- extensions

EXTENSION_STATUSES = ("payment-pending", "payment-failed", "payment-succeeded")
"""Every CapacityBlockExtensionStatus."""
EXTENSION_DAILY_UP_TO_DAYS = 14
EXTENSION_WEEKLY_UP_TO_DAYS = 182
EXTENSION_DURATION_HOURS: tuple[int, ...] = tuple(24 * d for d in range(1, EXTENSION_DAILY_UP_TO_DAYS + 1)) + tuple(
    24 * d for d in range(EXTENSION_DAILY_UP_TO_DAYS + 7, EXTENSION_WEEKLY_UP_TO_DAYS + 1, 7)
)
"""Extension lengths EC2 sells: 1-day steps up to 14 days, then 7-day steps up to 182 days (26 weeks).

The user guide says "up to 182 days (26 weeks) total"; whether "total" bounds the extension or the extended block
is not stated (unverified), so 182 days is taken as the longest single extension and EC2 answers the rest.
"""
EXTENSION_USABLE_STATES = USABLE
"""A block can be extended only while active or scheduled, with no extension payment-pending."""
EXTENSION_EARLIEST_DAYS_BEFORE_END = 56
EXTENSION_LATEST_HOURS_BEFORE_END = 1
"""An extension can be requested from 56 days up to 1 hour before the block ends."""
EXTENSION_CONFIRMED_LATEST_MINUTES_BEFORE_END = 35
"""The latest an extension's payment succeeds, and EC2 moves the block's end: EC2 user guide, capacity-blocks-extend:
"If your payment can't be processed within 12 hours, or up to 35 minutes before the Capacity Block is scheduled to
end (whichever comes first), your extension is not successful" (the project's checked AWS facts quote it)."""


def allowed_extension_hours_text() -> str:
    """The allowed extension lengths, short: '24, 48, ... 336, 504, 672, ... 4368'."""
    daily = EXTENSION_DURATION_HOURS[:EXTENSION_DAILY_UP_TO_DAYS]
    weekly = EXTENSION_DURATION_HOURS[EXTENSION_DAILY_UP_TO_DAYS:]
    return (
        f"{daily[0]} to {daily[-1]} in steps of 24 (1 to {EXTENSION_DAILY_UP_TO_DAYS} days), or {weekly[0]} to "
        f"{weekly[-1]} in steps of 168 (whole weeks up to {EXTENSION_WEEKLY_UP_TO_DAYS} days)"
    )


def stale_fix(block_key: str, state: str, past: bool) -> str:
    """How to fix a group that still names an ended reservation (``block_key`` e.g. gpuNodeGroups[0].capacityBlocks[0]).

    A past block's reservation is left over: remove the entry (nothing launches into it again; the plan already makes
    nothing for a block whose window has ended, config/expiry.py). A current or future one will never launch: replace
    it with a new block's reservation.
    """
    if past:
        return (
            f"remove {block_key} from the stack file (the group has moved on, and EC2 launches nothing into a "
            f"reservation in state {state})"
        )
    return f"{block_key} will never launch ({state}): {state_fix(state)}, e.g. with `ultraserver extend` beforehand"


# Defaults of --grace-minutes (time for nodes to boot and join; unmeasured for GB200) and --horizon-hours (the end
# within this and no next block leaves time to extend it or buy the next one).
GRACE_MINUTES, HORIZON_HOURS = 30, 48
