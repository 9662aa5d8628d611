"""The per-GPU-group rows of the plan: plain data computed from the plan, the settings' windows and a clock."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timedelta, timezone

import pytest
from helpers.stacks import ROOT, STACKS
from ultraserver.cli import stack_settings
from ultraserver.facts.capacity.capacity_blocks import ReservationWindow
from ultraserver.offline.groups import (
    ACTIVE,
    ENDED,
    FUTURE,
    SCHEDULE,
    clock_line,
    describe_window,
    group_views,
    span,
    window_state,
    windows_by_group,
)
from ultraserver.offline.resource import NODE_GROUP

BEFORE = datetime(2026, 11, 23, 2, 50, tzinfo=timezone.utc)
DURING = datetime(2026, 12, 5, 0, 0, tzinfo=timezone.utc)
AFTER = datetime(2027, 1, 1, 0, 0, tzinfo=timezone.utc)
WINDOW = ReservationWindow(
    datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc), datetime(2026, 12, 15, 11, 30, tzinfo=timezone.utc), 60
)
LABELS = [
    "mode",
    "instances",
    "reservation",
    "zone",
    "subnet",
    "min/desired/max now",
    "min/desired/max at block start",
    "AMI",
    "EFA",
    "schedule",
    "window",
]


def views(plan, stack: str, now: datetime):  # type: ignore[no-untyped-def]
    return group_views(plan, windows_by_group(stack_settings(ROOT, stack)), now)


@pytest.mark.parametrize(("now", "state"), [(BEFORE, FUTURE), (DURING, ACTIVE), (AFTER, ENDED)])
def test_window_state_is_future_active_or_ended(now: datetime, state: str) -> None:
    assert window_state(WINDOW, now) == state
    assert describe_window(WINDOW, now).startswith(f"{state}: 2026-12-01T11:30Z to 2026-12-15T11:30Z")


def test_a_window_that_ended_long_ago_reads_ended_not_not_yet_active() -> None:
    old = ReservationWindow(datetime(2020, 1, 1, tzinfo=timezone.utc), datetime(2020, 1, 15, tzinfo=timezone.utc), 60)
    text = describe_window(old, BEFORE)
    assert text.startswith("ended: 2020-01-01T00:00Z to 2020-01-15T00:00Z (ended ")
    assert "not yet" not in text


def test_clock_line_names_the_clock_once() -> None:
    assert clock_line(BEFORE) == "clock: 2026-11-23T02:50Z (now)"
    assert clock_line(BEFORE, injected=True) == "clock: 2026-11-23T02:50Z (injected)"
    assert span(WINDOW.start - BEFORE) == "8d 8h"


def test_gb200_x72_rows(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    (view,) = views(shipped_plan("gb200-x72"), "gb200-x72", BEFORE)
    assert [label for label, _ in view.rows] == LABELS
    assert view.row("reservation") == "cr-0123456789abcdef0"
    assert view.row("zone") == "us-east-1-dfw-2a"
    assert view.row("subnet") == "gb200-x72-net-gpu-us-east-1-dfw-2a 10.72.64.0/21"
    assert view.row("min/desired/max now") == "0 / 0 / 18"
    assert view.row("min/desired/max at block start") == "0 / 18 / 18 (scheduled 2026-12-01T11:30:00Z)"
    assert view.row("AMI") == "EKS AL2023_ARM_64_NVIDIA, release 1.35.6-20260714"
    assert view.row("EFA").startswith("one-per-nci-group: 4 EFA devices, 1 ENA, 1600 Gbps EFA per node")
    assert "2026-12-15T10:25:00Z desired 0 (capacity-block-end)" in view.row("schedule")
    assert view.row("window") == "future: 2026-12-01T11:30Z to 2026-12-15T11:30Z (starts in 8d 8h)"
    assert view.window_states == (FUTURE,)
    assert len(view.interfaces) == 5


def test_the_clock_decides_the_window_state_in_the_rows(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x72")
    assert views(plan, "gb200-x72", DURING)[0].row("window").startswith("active: ")
    assert views(plan, "gb200-x72", AFTER)[0].row("window").startswith("ended: ")


def test_a_2020_window_is_left_out_of_the_plan_and_a_view_of_it_reads_ended(plan_with, shipped_plan) -> None:  # type: ignore[no-untyped-def]
    group = {
        "name": "nvl72",
        "availabilityZone": "us-east-1-dfw-2a",
        "capacityReservationIds": ["cr-0123456789abcdef0"],
        "reservationWindow": {"start": "2020-01-01T11:30:00Z", "end": "2020-01-15T11:30:00Z"},
    }
    # Every block ended: nothing can launch, so the plan makes no group for it (config/expiry.py; the plan warns).
    plan = plan_with("gb200-x72", {"gpuNodeGroups": [group]})
    assert not [r for r in plan.resources if r.type in (NODE_GROUP, SCHEDULE) and "nvl72" in r.name]
    windows = {
        "gb200-x72-nvl72": [
            ReservationWindow(
                datetime(2020, 1, 1, 11, 30, tzinfo=timezone.utc),
                datetime(2020, 1, 15, 11, 30, tzinfo=timezone.utc),
                60,
            )
        ]
    }
    # A group a custom program declares on ended windows (no scheduled action left) still reads as ended.
    shipped = shipped_plan("gb200-x72")
    unscheduled = dataclasses.replace(shipped, resources=[r for r in shipped.resources if r.type != SCHEDULE])
    (view,) = group_views(unscheduled, windows, BEFORE)
    assert view.row("window").startswith("ended: 2020-01-01T11:30Z")
    assert view.row("min/desired/max at block start") == "none (every block has ended)"
    assert view.row("schedule") == "none"


def test_existing_vpc_self_managed_group(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    (view,) = views(shipped_plan("gb200-x36"), "gb200-x36", BEFORE)
    assert view.row("mode") == "self-managed (Auto Scaling group)"
    assert view.row("subnet") == "subnet-0ccccccccccccccc1 (existing; CIDR not known offline)"
    assert view.row("AMI").startswith("SSM /aws/service/eks/optimized-ami/1.35/")
    assert view.row("AMI").endswith("(release 1.35.6-20260714)")
    assert view.row("EFA").startswith("all-odd-cards: 8 EFA devices")


def test_resource_group_and_no_window(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    by_name = {v.name: v for v in views(shipped_plan("gb200-multi"), "gb200-multi", BEFORE)}
    assert by_name["gb200-multi-fleet"].row("reservation").startswith("resource group arn:aws:resource-groups:")
    assert by_name["gb200-multi-nvl72-3"].row("reservation") == "cr-0c00000000000000c"
    # Every shipped group has a window now; a group the stack gives none reads as such.
    windowless = {v.name: v for v in group_views(shipped_plan("gb200-multi"), {}, BEFORE)}
    assert windowless["gb200-multi-nvl72-3"].row("window") == "none given (no scheduled scaling)"
    assert by_name["gb200-multi-nvl72-3"].row("min/desired/max now") == "0 / 0 / 18"  # before its block


def test_several_blocks_each_get_a_row(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    later = ReservationWindow(
        datetime(2026, 12, 15, 11, 30, tzinfo=timezone.utc), datetime(2026, 12, 29, 11, 30, tzinfo=timezone.utc), 60
    )
    (view,) = group_views(shipped_plan("gb200-x72"), {"gb200-x72-nvl72": [WINDOW, later]}, DURING)
    assert view.row("window 1").startswith("active: ") and view.row("window 2").startswith("future: ")
    assert view.window_states == (ACTIVE, FUTURE)


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_stack_has_every_row(shipped_plan, stack: str) -> None:  # type: ignore[no-untyped-def]
    found = views(shipped_plan(stack), stack, BEFORE)
    assert found, f"{stack}: no GPU group in the plan"
    for view in found:
        assert [label for label, _ in view.rows] == LABELS
        assert all(value and "?" not in value for _, value in view.rows), view.rows


def test_a_group_held_at_0_for_an_upgrade_says_so(plan_with) -> None:  # type: ignore[no-untyped-def]
    group = {
        "name": "nvl72",
        "availabilityZone": "us-east-1-dfw-2a",
        "capacityReservationIds": ["cr-0123456789abcdef0"],
        "reservationWindow": {"start": "2026-12-01T11:30:00Z", "end": "2026-12-15T11:30:00Z"},
        "scaleToZeroForUpgrade": True,
    }
    plan = plan_with("gb200-x72", {"gpuNodeGroups": [group]})
    (view,) = group_views(plan, {"gb200-x72-nvl72": [WINDOW]}, BEFORE)
    assert view.row("min/desired/max now") == "0 / 0 / 18 (held at 0 for an upgrade)"
    assert view.row("min/desired/max at block start") == "no scale-up scheduled (the group is held at 0 for an upgrade)"
    assert view.row("window").startswith("future: ")


def test_a_renewed_group_shows_every_window_its_current_block_and_the_next_switch() -> None:
    import copy

    from helpers.stacks import stack_config
    from ultraserver.config.settings import parse_settings
    from ultraserver.offline import record
    from ultraserver.offline.groups import block_lines, windows_by_group
    from ultraserver.resources.platform import Platform, PlatformArgs

    first = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
    config = copy.deepcopy(stack_config("gb200-x72"))
    group = config["ultraserver-eks:gpuNodeGroups"][0]
    del group["capacityReservationIds"], group["reservationWindow"]
    group["capacityBlocks"] = [
        {"capacityReservationIds": [rid], "start": start.isoformat(), "end": (start + timedelta(days=14)).isoformat()}
        for rid, start in (("cr-0aaaaaaaaaaaaaaaa", first), ("cr-0bbbbbbbbbbbbbbbb", first + timedelta(days=14)))
    ]
    group["handover"] = "switch"  # one node group switched between blocks (standby is the default)
    settings = parse_settings(config, today=first.date())
    now = first + timedelta(days=2)
    plan = record(lambda: Platform("ultraserver", PlatformArgs(settings=settings, now=now)))
    (view,) = group_views(plan, windows_by_group(settings), now, block_lines(settings, now))
    assert view.row("reservation") == "cr-0aaaaaaaaaaaaaaaa"
    assert view.row("capacity block") == (
        "block 1 of 2 (cr-0aaaaaaaaaaaaaaaa) active; next switch: run `pulumi up` between 2026-12-15 10:35Z and "
        "2026-12-15 11:30Z"
    )
    assert view.row("window 1").startswith("active: 2026-12-01T11:30Z") and view.row("window 2").startswith("future")
