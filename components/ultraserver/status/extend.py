"""``ultraserver extend``: the extension offerings of a group's current Capacity Block(s), and buying them.

EC2 API (botocore ec2 model, ec2-2016-11-15): DescribeCapacityBlockExtensionOfferings takes
``CapacityBlockExtensionDurationHours`` and ``CapacityReservationId`` (both required) and returns
``CapacityBlockExtensionOfferings[]`` (``CapacityBlockExtensionOfferingId``, ``CapacityBlockExtensionStartDate``/
``EndDate``, ``UpfrontFee``, ``CurrencyCode``, ``InstanceCount``); PurchaseCapacityBlockExtension takes
``CapacityBlockExtensionOfferingId`` and ``CapacityReservationId`` and returns ``CapacityBlockExtensions[]`` with a
``CapacityBlockExtensionStatus``. The reservation id stays the same after an extension; only its end moves
(EC2 user guide, "Extend Capacity Blocks").
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import Decimal, InvalidOperation

from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.settings import Settings
from ultraserver.facts.capacity import capacity_states
from ultraserver.facts.capacity.capacity_blocks import current_block, require_aware
from ultraserver.preflight.capacity import resource_group_reservation_ids
from ultraserver.preflight.clients import ApiFailure, Client, PreflightAccessError, PreflightClients, call, call_all
from ultraserver.problems import ERROR, Described, Problem, format_problems
from ultraserver.status.aws import NOT_FOUND, Reservation, read_reservations
from ultraserver.status.extend_drain import ConfigMaps, move_drain
from ultraserver.status.extend_moves import move_scale_downs
from ultraserver.verify.clients import ClusterError


class ExtendUsageError(ValueError):
    """A group name or duration the command cannot use, as a Problem naming what is allowed."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))


@dataclass(frozen=True)
class Offering:
    """One extension offering of one reservation."""

    reservation_id: str
    offering_id: str
    start: datetime | None
    end: datetime | None
    hours: int
    instances: int
    fee: str
    currency: str

    def line(self) -> str:
        """One line for the offering table."""
        when = " -> ".join(_utc(t) for t in (self.start, self.end))
        return (
            f"  {self.reservation_id}  {self.offering_id}  {when}  {self.hours} h  {self.instances} instances  "
            f"{self.fee} {self.currency}"
        )


def _utc(moment: datetime | None) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC") if moment else "?"


def pick_group(settings: Settings, name: str) -> GpuNodeGroupSettings:
    """The gpuNodeGroups entry called ``name``; ExtendUsageError lists the names otherwise."""
    groups = {g.name: g for g in settings.gpu_node_groups}
    if name not in groups:
        allowed = ", ".join(groups) or "none (the stack has no GPU groups)"
        raise ExtendUsageError(Problem("--group", name, allowed, "pass the name of one of the stack's gpuNodeGroups"))
    return groups[name]


def check_hours(hours: int) -> int:
    """``hours`` when EC2 sells extensions of that length; ExtendUsageError with the allowed lengths otherwise."""
    if hours not in capacity_states.EXTENSION_DURATION_HOURS:
        raise ExtendUsageError(
            Problem("--hours", hours, capacity_states.allowed_extension_hours_text(), "pass one of those lengths")
        )
    return hours


def current_reservations(group: GpuNodeGroupSettings, clients: PreflightClients, now: datetime) -> list[str]:
    """The reservations the group runs on at ``now`` (its current block's, or its resource group's members)."""
    if group.grouped:
        return resource_group_reservation_ids(group.capacity_reservation_resource_group_arn, clients.resource_groups)
    blocks = group.blocks
    return list(blocks[current_block(blocks, now)].reservation_ids)


def offerings(ec2: Client, reservation_id: str, hours: int) -> list[Offering]:
    """The extension offerings EC2 has for one reservation and length (raises ApiFailure when it refuses)."""
    answer = call_all(
        ec2,
        "describe_capacity_block_extension_offerings",
        CapacityBlockExtensionDurationHours=hours,
        CapacityReservationId=reservation_id,
    )
    return [
        Offering(
            reservation_id,
            str(o.get("CapacityBlockExtensionOfferingId", "")),
            o.get("CapacityBlockExtensionStartDate"),
            o.get("CapacityBlockExtensionEndDate"),
            int(o.get("CapacityBlockExtensionDurationHours", hours)),
            int(o.get("InstanceCount", 0)),
            str(o.get("UpfrontFee", "?")),
            str(o.get("CurrencyCode", "")),
        )
        for o in answer.get("CapacityBlockExtensionOfferings", [])
    ]


def total_fee(chosen: list[Offering]) -> str:
    """The summed upfront fee of the chosen offerings ('unknown' when a fee is not a number)."""
    try:
        amount = sum((Decimal(o.fee) for o in chosen), Decimal(0))
    except InvalidOperation:
        return "unknown"
    currencies = sorted({o.currency for o in chosen})
    return f"{amount} {'/'.join(currencies)}"


def purchase(ec2: Client, offering: Offering) -> str:
    """Buy one offering; the extension's status (payment-pending until the upfront fee is paid)."""
    answer = call(
        ec2,
        "purchase_capacity_block_extension",
        CapacityBlockExtensionOfferingId=offering.offering_id,
        CapacityReservationId=offering.reservation_id,
    )
    extensions = answer.get("CapacityBlockExtensions", [])
    return str(extensions[0].get("CapacityBlockExtensionStatus", "unknown")) if extensions else "unknown"


def extension_refusals(found: dict[str, Reservation], ids: list[str], now: datetime) -> list[Problem]:
    """Why EC2 would refuse to extend these reservations, keyed by reservation: state, or too early or too late."""
    earliest = timedelta(days=capacity_states.EXTENSION_EARLIEST_DAYS_BEFORE_END)
    latest = timedelta(hours=capacity_states.EXTENSION_LATEST_HOURS_BEFORE_END)
    refusals = []
    for cr_id in ids:
        r = found.get(cr_id, Reservation(cr_id, NOT_FOUND))
        if r.state not in capacity_states.EXTENSION_USABLE_STATES:
            fix = capacity_states.state_fix(r.state) if r.state != NOT_FOUND else "correct the id or the region"
            refusals.append(Problem(cr_id, r.state, "a block that is active or scheduled (only those extend)", fix))
        elif r.end and not r.end - earliest <= now <= r.end - latest:
            refusals.append(
                Problem(
                    cr_id,
                    Described(f"ends {_utc(r.end)}"),
                    f"a purchase from {earliest.days} days to {capacity_states.EXTENSION_LATEST_HOURS_BEFORE_END} "
                    "hour before the end",
                    "extend it inside that span",
                )
            )
    return refusals


def _buy(chosen: list[Offering], clients: PreflightClients) -> tuple[list[str], bool]:
    """Purchase each offering once; the report lines and whether every purchase went through."""
    lines = []
    for offering in chosen:
        try:
            status = purchase(clients.ec2_once or clients.ec2, offering)
        except ApiFailure as exc:
            lines.append(f"purchase for {offering.reservation_id} failed: {exc}; fix: {exc.fix}")
            return lines, False
        except PreflightAccessError as exc:
            # No answer (timeout, dropped connection): EC2 may have taken the order; it is not sent again.
            lines.append(
                f"purchase for {offering.reservation_id}: no answer from EC2 ({exc}); it may have gone through: check "
                f"`aws ec2 describe-capacity-block-extension-history --capacity-reservation-ids "
                f"{offering.reservation_id}` before running extend again"
            )
            return lines, False
        lines.append(f"bought {offering.offering_id} for {offering.reservation_id}: {status}")
    return lines, True


def _moves(
    clients: PreflightClients,
    cluster: str,
    config_maps: ConfigMaps | None,
    ids: list[str],
    ends: tuple[datetime, datetime],
) -> list[str]:
    """After the purchase: the scale-downs (Auto Scaling) and the in-cluster drain move from the old end to the new."""
    lines = move_scale_downs(clients.autoscaling, cluster, *ends) if clients.autoscaling is not None and cluster else []
    if config_maps is None:
        return [
            *lines,
            "drain: no cluster to reach (pass --kubeconfig); it still cuts off at the old end until pulumi up",
        ]
    try:
        return lines + move_drain(config_maps, ids, *ends)
    except ClusterError as err:
        return [*lines, f"drain: not moved ({err}); it still cuts off at the old end until pulumi up"]


def run_extend(
    group: GpuNodeGroupSettings,
    clients: PreflightClients,
    hours: int,
    buy: bool,
    now: datetime,
    cluster: str = "",
    config_maps: ConfigMaps | None = None,
) -> tuple[list[str], bool]:
    """Show the offerings for every current reservation of the group and, with ``buy``, purchase one each; after a
    purchase, move the scale-downs (Auto Scaling) and the in-cluster drain (``config_maps``, the cluster's API).

    Returns the report lines and whether it went through (False: an offering is missing or a purchase failed;
    nothing is bought unless every reservation has an offering, so the group's UltraServers stay in step).
    """
    ids = current_reservations(group, clients, require_aware(now))
    before = read_reservations(ids, clients.ec2, with_blocks=False)
    refused = extension_refusals(before, ids, now)
    if refused:
        report = textwrap.indent(format_problems(refused, {ERROR: "-"}), "  ")
        return [f"cannot extend {group.name}; nothing was bought:", *report.splitlines()], False
    lines = [f"Capacity Block extensions of {hours} h for {group.name} ({len(ids)} reservation(s)):"]
    chosen: list[Offering] = []
    missing: list[str] = []
    for cr_id in ids:
        found = offerings(clients.ec2, cr_id, hours)
        lines += [o.line() for o in found]
        if found:
            chosen.append(found[0])
        else:
            missing.append(cr_id)
    if missing or not ids:
        lines.append(
            f"no {hours} h extension offered for {', '.join(missing) or 'the group (no reservation)'}; nothing was "
            "bought. Try another --hours; a block can be extended while active or scheduled, from 56 days to 1 hour "
            "before it ends, and only when EC2 has the capacity"
        )
        return lines, False
    lines.append(f"total upfront fee: {total_fee(chosen)}")
    if not buy:
        lines.append("nothing was bought; rerun with --yes to purchase the offerings above")
        return lines, True
    bought, ok = _buy(chosen, clients)
    lines += bought
    if not ok:
        return lines, False
    old_end, new_end = before[ids[0]].end, chosen[0].end
    if old_end and new_end:
        lines += _moves(clients, cluster, config_maps, ids, (old_end, new_end))
    lines.append(
        f"the reservations keep their ids and now end {_utc(new_end)}: set that end on the group's current block in "
        "the stack file before the next pulumi up (a deploy from the old stack file could put the old scale-down "
        "and drain cut-off back)"
    )
    return lines, True
