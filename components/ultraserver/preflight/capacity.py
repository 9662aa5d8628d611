"""Capacity checks of one GPU group: its reservations' existence, state, type, count, zone, window and block."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

from ultraserver.facts.capacity import capacity_states
from ultraserver.facts.capacity.capacity_blocks import current_block
from ultraserver.preflight.clients import ApiFailure, Client, call, call_all
from ultraserver.preflight.report import FAIL, PASS, WARN, aggregate, check, worst
from ultraserver.preflight.target import PreflightGroup
from ultraserver.preflight.windows import window_match_check
from ultraserver.problems import Problem


def _fmt_time(value: datetime) -> str:
    """A timestamp as a short UTC string."""
    return value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


# ---------------------------------------------------------------- capacity reservations


def _group_reservation_ids(group: PreflightGroup, resource_groups: Client) -> list[str]:
    """The reservation ids a group targets: listed directly, or the members of its resource group."""
    if group.capacity_reservation_ids:
        return list(group.capacity_reservation_ids)
    if not group.capacity_reservation_resource_group_arn:
        return []
    return resource_group_reservation_ids(group.capacity_reservation_resource_group_arn, resource_groups)


def resource_group_reservation_ids(arn: str, resource_groups: Client) -> list[str]:
    """The Capacity Reservation ids in a capacity-reservation resource group.

    Members come from ``Resources[].Identifier``; ``ResourceIdentifiers`` is deprecated in the resource-groups model
    (botocore resource-groups 2017-11-27: "Use the Resources response field instead") and read only as a fallback.
    """
    ids: list[str] = []
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {"Group": arn}
        if token:
            kwargs["NextToken"] = token
        page = call(resource_groups, "list_group_resources", **kwargs)
        members = [r.get("Identifier", {}) for r in page.get("Resources", [])] or page.get("ResourceIdentifiers", [])
        for ident in members:
            if ident.get("ResourceType") == "AWS::EC2::CapacityReservation":
                cr_id = ident["ResourceArn"].rsplit("/", 1)[-1]
                if cr_id not in ids:
                    ids.append(cr_id)
        token = page.get("NextToken")
        if not token:
            return ids


def describe_reservations(ids: Sequence[str], ec2: Client) -> tuple[dict[str, dict], list[str]]:
    """Describe each reservation id; return the found ones by id and the ids AWS does not know."""
    found: dict[str, dict] = {}
    missing: list[str] = []
    for cr_id in ids:
        # One call per id: a batch call fails as a whole when any one id is unknown.
        try:
            page = call(ec2, "describe_capacity_reservations", CapacityReservationIds=[cr_id])
        except ApiFailure as exc:
            if exc.code.startswith("InvalidCapacityReservationId"):
                missing.append(cr_id)
                continue
            raise
        reservations = page.get("CapacityReservations", [])
        if reservations:
            found[cr_id] = _utc_dates(reservations[0])
        else:
            missing.append(cr_id)
    return found, missing


def _utc_dates(cr: dict) -> dict:
    """The reservation with its dates time-zone aware.

    EC2 sends them in UTC with a zone, which botocore keeps; an endpoint that leaves the zone out (an emulator behind
    --endpoint-url) would make botocore return naive datetimes that cannot be compared with ``now``: read them as UTC.
    """
    dates = {k: v.replace(tzinfo=timezone.utc) for k, v in cr.items() if isinstance(v, datetime) and v.tzinfo is None}
    return {**cr, **dates}


def check_reservations(
    group: PreflightGroup, ec2: Client, resource_groups: Client, now: datetime, horizon_hours: int
) -> list[Problem]:
    """Checks for one GPU group's reservations: existence, state, type, count, zone, window and block.

    With several capacityBlocks the checks look at the block current at ``now``; every other block's
    reservations are checked for having ended (a stale reservation still named by the group).
    """
    if len(group.blocks) < 2:
        return _current_checks(group, ec2, resource_groups, now, horizon_hours, 0)
    index = current_block(group.blocks, now)
    current = dataclasses.replace(group, capacity_reservation_ids=list(group.blocks[index].reservation_ids))
    checks = _current_checks(current, ec2, resource_groups, now, horizon_hours, index)
    return [*checks, *_other_blocks_checks(f"{group.name}:", group, index, ec2)]


def _current_checks(
    group: PreflightGroup, ec2: Client, resource_groups: Client, now: datetime, horizon_hours: int, index: int
) -> list[Problem]:
    prefix = f"{group.name}:"
    if not group.capacity_reservation_ids and not group.capacity_reservation_resource_group_arn:
        return [
            check(
                f"{prefix} reservations exist",
                FAIL,
                "the group names no capacity reservation or reservation resource group",
                "set the group's capacity reservation ids (one per UltraServer) or its resource group ARN",
            )
        ]
    try:
        ids = _group_reservation_ids(group, resource_groups)
    except ApiFailure as exc:
        return [
            check(
                f"{prefix} reservations exist",
                FAIL,
                f"cannot list resource group {group.capacity_reservation_resource_group_arn}: {exc}",
                "check the resource group ARN and that the caller may call resource-groups:ListGroupResources",
            )
        ]
    found, missing = describe_reservations(ids, ec2)
    checks: list[Problem] = []
    if missing or not ids:
        arn = group.capacity_reservation_resource_group_arn
        where = ", ".join(missing) if missing else f"resource group {arn} is empty"
        checks.append(
            check(
                f"{prefix} reservations exist",
                FAIL,
                f"not found in this account/region: {where}",
                "purchase the Capacity Block (aws ec2 purchase-capacity-block) or correct the reservation id / region",
            )
        )
    else:
        checks.append(check(f"{prefix} reservations exist", PASS, f"{len(found)} found: {', '.join(found)}"))
    if not found:
        return checks
    return checks + _found_checks(prefix, group, found, ec2, now, horizon_hours, index)


def _found_checks(
    prefix: str,
    group: PreflightGroup,
    found: dict[str, dict],
    ec2: Client,
    now: datetime,
    horizon_hours: int,
    index: int,
) -> list[Problem]:
    """Checks of the reservations found: state, instance type, count, zone, window (and the stack's: block
    ``index``'s) and block."""
    checks: list[Problem] = []

    states: list[tuple[str, str, str]] = []
    for cr_id, cr in found.items():
        state = cr.get("State", "unknown")
        states.append((cr_id, PASS if state in capacity_states.USABLE else FAIL, state))
    bad_states = sorted({text for _, s, text in states if s == FAIL})
    state_fix = "; ".join(f"{s}: {capacity_states.state_fix(s)}" for s in bad_states)
    checks.append(aggregate(f"{prefix} reservation state", states, state_fix))

    types: list[tuple[str, str, str]] = [
        (cr_id, PASS if cr.get("InstanceType") == group.instance_type else FAIL, str(cr.get("InstanceType")))
        for cr_id, cr in found.items()
    ]
    checks.append(
        aggregate(
            f"{prefix} instance type",
            types,
            f"use a Capacity Block for {group.instance_type}; this group only launches that type",
        )
    )

    checks.append(_count_check(prefix, group, found))

    zones: list[tuple[str, str, str]] = []
    for cr_id, cr in found.items():
        zone = str(cr.get("AvailabilityZone"))
        zones.append((cr_id, PASS if zone == group.availability_zone else FAIL, zone))
    checks.append(
        aggregate(
            f"{prefix} reservation zone",
            zones,
            f"GPU subnets are in {group.availability_zone}; put the group's subnets in the reservation's zone "
            "or use a reservation there",
        )
    )

    checks.append(_window_check(prefix, found, now, horizon_hours))
    blocks = _describe_blocks(found, ec2)
    checks.append(window_match_check(prefix, group, index, found, {} if isinstance(blocks, ApiFailure) else blocks))
    checks.extend(_block_checks(prefix, group, found, blocks, ec2))
    return checks


def _count_check(prefix: str, group: PreflightGroup, found: dict[str, dict]) -> Problem:
    """The reservations hold the group's instances: its UltraServers times the type's nodes."""
    expected = group.ultraserver_count * group.instances_per_ultraserver
    total = sum(int(cr.get("TotalInstanceCount", 0)) for cr in found.values())
    counts = ", ".join(f"{cr_id}={cr.get('TotalInstanceCount')}" for cr_id, cr in found.items())
    count_ok = total == expected
    return check(
        f"{prefix} instance count",
        PASS if count_ok else FAIL,
        f"reserved {total} ({counts}); group needs {group.ultraserver_count} x "
        f"{group.instances_per_ultraserver} = {expected}",
        ""
        if count_ok
        else f"set the group's UltraServer count/type to match the reservations ({total} instances), "
        "or purchase a block of the planned size",
    )


def _other_blocks_checks(prefix: str, group: PreflightGroup, current: int, ec2: Client) -> list[Problem]:
    """The reservations of the group's other blocks exist and have not ended (expired, cancelled, failed...); each
    later block's window is the one AWS holds for its reservations (a renewal typed a year late plans cleanly, and
    its group would never scale up for the block that was paid for)."""
    items: list[tuple[str, str, str]] = []
    fixes: list[str] = []
    windows: list[Problem] = []
    for index, block in enumerate(group.blocks):
        if index == current:
            continue
        block_key = f"{group.settings_key or group.name}.capacityBlocks[{index}]"
        found, missing = describe_reservations(block.reservation_ids, ec2)
        for cr_id in missing:
            items.append((cr_id, FAIL, f"{block_key}: not found"))
            fixes.append(f"{block_key}: correct the reservation id or the region")
        for cr_id, cr in found.items():
            state = str(cr.get("State", "unknown"))
            ended = state in capacity_states.ENDED
            items.append((cr_id, FAIL if ended else PASS, f"{block_key}: {state}"))
            if ended:
                fixes.append(capacity_states.stale_fix(block_key, state, past=index < current))
        if index > current and found:
            windows.append(window_match_check(f"{prefix} capacityBlocks[{index}]", group, index, found, {}))
    return [aggregate(f"{prefix} other blocks", items, "; ".join(dict.fromkeys(fixes))), *windows]


def _window_check(prefix: str, found: dict[str, dict], now: datetime, horizon_hours: int) -> Problem:
    """Warn when a reservation starts later or ends within the horizon; fail when it has ended."""
    items: list[tuple[str, str, str]] = []
    for cr_id, cr in found.items():
        start, end = cr.get("StartDate"), cr.get("EndDate")
        if end is not None and end <= now:
            items.append((cr_id, FAIL, f"ended {_fmt_time(end)}"))
        elif start is not None and start > now:
            items.append((cr_id, WARN, f"starts {_fmt_time(start)}; nodes wait until then"))
        elif end is not None and end - now <= timedelta(hours=horizon_hours):
            items.append((cr_id, WARN, f"ends {_fmt_time(end)}, within {horizon_hours}h"))
        else:
            items.append((cr_id, PASS, f"running until {_fmt_time(end) if end else 'no end date'}"))
    status = worst(s for _, s, _ in items)
    fixes = {
        FAIL: "purchase a new Capacity Block; an ended reservation launches nothing",
        WARN: "expect the group to wait for the start, or extend the block (aws ec2 purchase-capacity-block-extension)",
    }
    return aggregate(f"{prefix} reservation window", items, fixes.get(status, ""))


def _block_ids(found: dict[str, dict]) -> list[str]:
    """The Capacity Blocks the reservations name, sorted."""
    return sorted({cr["CapacityBlockId"] for cr in found.values() if cr.get("CapacityBlockId")})


def _describe_blocks(found: dict[str, dict], ec2: Client) -> dict[str, dict] | ApiFailure:
    """The Capacity Blocks behind the reservations, by id (none asked when no reservation names one)."""
    block_ids = _block_ids(found)
    if not block_ids:
        return {}
    try:
        answer = call_all(ec2, "describe_capacity_blocks", CapacityBlockIds=block_ids)
    except ApiFailure as exc:
        return exc
    return {b["CapacityBlockId"]: _utc_dates(b) for b in answer.get("CapacityBlocks", [])}


def _block_checks(
    prefix: str, group: PreflightGroup, found: dict[str, dict], blocks: dict[str, dict] | ApiFailure, ec2: Client
) -> list[Problem]:
    """UltraServer type and interconnect status of the Capacity Blocks behind the reservations."""
    block_of = {cr_id: cr.get("CapacityBlockId") for cr_id, cr in found.items()}
    type_name, link_name = f"{prefix} UltraServer type", f"{prefix} interconnect"
    if isinstance(blocks, ApiFailure):
        return [check(type_name, FAIL, str(blocks), blocks.fix)]

    type_items: list[tuple[str, str, str]] = []
    for cr_id, block_id in block_of.items():
        if not block_id:
            kind = found[cr_id].get("ReservationType")
            type_items.append((cr_id, FAIL, f"not part of a Capacity Block (ReservationType={kind})"))
            continue
        ultraserver_type = blocks.get(block_id, {}).get("UltraserverType")
        ok = ultraserver_type == group.ultraserver_type
        type_items.append((cr_id, PASS if ok else FAIL, f"{block_id} UltraserverType={ultraserver_type}"))
    checks = [
        aggregate(
            type_name,
            type_items,
            f"the group is configured for {group.ultraserver_type}; purchase an UltraServer Capacity Block of that "
            "type (--ultraserver-type) or change the group's UltraServer type",
        )
    ]
    block_ids = _block_ids(found)
    if block_ids:
        checks.append(_interconnect_check(link_name, block_ids, ec2))
    return checks


def _interconnect_check(name: str, block_ids: list[str], ec2: Client) -> Problem:
    """Report each block's interconnect: ok passes, impaired fails, anything else (or no answer) warns."""
    try:
        answer = call_all(ec2, "describe_capacity_block_status", CapacityBlockIds=block_ids)
    except ApiFailure as exc:
        return check(name, WARN, f"interconnect status not reported: {exc}", exc.fix)
    statuses = {s["CapacityBlockId"]: s for s in answer.get("CapacityBlockStatuses", [])}
    items: list[tuple[str, str, str]] = []
    for block_id in block_ids:
        interconnect = statuses.get(block_id, {}).get("InterconnectStatus", "unreported")
        status: str = PASS if interconnect == "ok" else FAIL if interconnect == "impaired" else WARN
        items.append((block_id, status, f"interconnect {interconnect}"))
    fix = (
        "impaired: contact AWS Support before deploying; insufficient-data/unreported: normal before the block "
        "starts, rerun preflight once it is active"
    )
    return aggregate(name, items, fix)
