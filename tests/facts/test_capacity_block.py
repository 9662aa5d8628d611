"""Capacity Block reservation targets, group sizes and the reservation window's scheduled actions."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from ultraserver.facts.aws import limits
from ultraserver.facts.capacity import capacity_blocks as cb
from ultraserver.facts.capacity import successive_blocks
from ultraserver.facts.capacity.capacity_blocks import ReservationWindow
from ultraserver.problems import WARNING, ConfigError

START = datetime(2026, 3, 2, 11, 30, tzinfo=timezone.utc)
END = datetime(2026, 3, 9, 11, 30, tzinfo=timezone.utc)


def test_sizes() -> None:
    assert cb.full_size("u-p6e-gb200x36", 1) == 9
    assert cb.full_size("u-p6e-gb200x72", 3) == 54
    with pytest.raises(ConfigError, match="ultraserverType: got 'u-p6e-gb200x4'; allowed: one of u-p6e-gb200x36"):
        cb.full_size("u-p6e-gb200x4", 1)
    with pytest.raises(ConfigError, match="ultraserverCount"):
        cb.full_size("u-p6e-gb200x72", 0)


def test_quota_warning_names_the_quota_and_how_to_raise_it() -> None:
    assert limits.managed_node_group_problem(30, "cluster") is None
    problem = limits.managed_node_group_problem(100, "cluster")
    assert problem is not None and problem.level == WARNING and problem.key == "cluster"
    assert "at most 30, the default EKS quota 'Managed node groups per cluster' (L-6D54EA21)" in problem.allowed
    assert (
        "request-service-quota-increase --service-code eks --quota-code L-6D54EA21 --desired-value 100" in problem.fix
    )
    assert "self-managed" in problem.fix


def test_scheduled_actions() -> None:
    up, down = cb.scheduled_actions(ReservationWindow(START, END), 18)
    assert (up.start_time, up.min_size, up.max_size, up.desired_capacity) == (START, 0, 18, 18)
    assert (down.start_time, down.min_size, down.max_size, down.desired_capacity) == (
        END - timedelta(minutes=65),
        0,
        18,
        0,
    )
    assert down.start_time_iso == "2026-03-09T10:25:00Z"
    assert up.name != down.name


def test_the_default_scale_down_comes_five_minutes_before_the_ultraserver_reclaim_and_wastes_twenty() -> None:
    window = ReservationWindow(START, END)
    assert window.reclaim_at == END - timedelta(minutes=60) == cb.reclaim_at(END, cb.ULTRASERVER)
    assert cb.reclaim_at(END, cb.INSTANCE) == END - timedelta(minutes=30)
    assert window.reclaim_at - window.scale_down_at == timedelta(minutes=5)
    # The drain's cut-off comes DRAIN_NOTICE_MINUTES before the scale-down: 20 paid minutes unused, checkpoint included.
    assert window.reclaim_at - (window.scale_down_at - timedelta(minutes=cb.DRAIN_NOTICE_MINUTES)) <= timedelta(
        minutes=20
    )
    # EKS's own managed-group action comes after the reclaim has begun: it is no drain for an UltraServer block.
    assert END - cb.EKS_MANAGED_SCALEDOWN_LEAD > window.reclaim_at


@pytest.mark.parametrize("lead", [29, 30, 60, 64, True, "90"])
def test_a_lead_that_leaves_less_than_the_drain_floor_before_the_reclaim_is_refused(lead: object) -> None:
    problem = cb.scale_down_lead_problem(lead, "k")
    assert problem is not None and problem.key == "k" and problem.value == lead
    assert problem.allowed.startswith("65 or more: EC2 starts terminating an UltraServer block's instances 60 minutes")
    assert cb.scale_down_lead_problem(65) is None and cb.scale_down_lead_problem(90) is None


def test_scheduled_actions_in_utc_and_custom_lead() -> None:
    tokyo = timezone(timedelta(hours=9))
    window = ReservationWindow(START.astimezone(tokyo), END.astimezone(tokyo), scale_down_lead_minutes=80)
    up, down = cb.scheduled_actions(window, 9)
    assert up.start_time_iso == "2026-03-02T11:30:00Z"
    assert down.start_time_iso == "2026-03-09T10:10:00Z"


def test_past_actions_are_left_out() -> None:
    actions = cb.scheduled_actions(ReservationWindow(START, END), 18, now=START + timedelta(hours=1))
    assert [a.desired_capacity for a in actions] == [0]
    assert cb.scheduled_actions(ReservationWindow(START, END), 18, now=END) == []


@pytest.mark.parametrize(
    ("window", "message"),
    [
        (ReservationWindow(START.replace(tzinfo=None), END), "reservationWindow.start.*time zone"),
        (
            ReservationWindow(START, END, scale_down_lead_minutes=60),
            "scaleDownLeadMinutes: got 60; allowed: 65 or more",
        ),
        (ReservationWindow(END, START), "minutes; allowed: a time after start"),
        (ReservationWindow(START, START + timedelta(minutes=50)), "minutes; allowed: a time after start"),
    ],
)
def test_bad_windows(window: ReservationWindow, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        cb.scheduled_actions(window, 18)


def test_size_now_follows_the_window() -> None:
    window = ReservationWindow(START, END)
    assert cb.size_now(window, 18, START - timedelta(seconds=1)) == 0
    assert cb.size_now(window, 18, START) == 18
    assert cb.size_now(window, 18, END - timedelta(minutes=66)) == 18
    assert cb.size_now(window, 18, END - timedelta(minutes=65)) == 0
    assert cb.size_now(None, 18, END) == 18


def _block(rid: str, start: datetime, days: int = 14, lead: int = 90) -> cb.CapacityBlock:
    return cb.CapacityBlock((rid,), ReservationWindow(start, start + timedelta(days=days), lead))


def test_current_block_moves_on_once_the_scale_down_has_settled() -> None:
    first = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
    blocks = [_block("cr-0000000000000000a", first), _block("cr-0000000000000000b", first + timedelta(days=14))]
    scale_down = first + timedelta(days=14, minutes=-90)
    settled = scale_down + timedelta(minutes=cb.SWITCH_SETTLE_MINUTES)
    assert cb.current_block(blocks, first - timedelta(days=3)) == 0
    # At the scale-down and just after it the instances may still be running: no template switch yet.
    assert cb.current_block(blocks, scale_down) == 0
    assert cb.current_block(blocks, settled - timedelta(seconds=1)) == 0
    assert cb.current_block(blocks, settled) == 1
    assert cb.switch_window(blocks, 0) == (settled, first + timedelta(days=14))
    assert cb.current_block(blocks, first + timedelta(days=60)) == 1  # all over: the last one


def test_a_block_starting_before_the_previous_one_settles_is_refused() -> None:
    first = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
    # Lead 80: scale-down 80 minutes before the end; the next block starts 75 minutes before it (inside the settling).
    before = _block("cr-0000000000000000a", first, lead=80)
    after = _block("cr-0000000000000000b", first + timedelta(days=14, minutes=-75))
    (problem,) = successive_blocks.sequence_problems([before, after])
    assert problem.key == "capacityBlocks[1].start"
    assert "has scaled to 0 and settled" in problem.allowed and "plus 10 minutes" in problem.allowed


def test_back_to_back_blocks_are_a_valid_sequence_and_overlap_is_not() -> None:
    first = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
    back_to_back = [_block("cr-0000000000000000a", first), _block("cr-0000000000000000b", first + timedelta(days=14))]
    assert successive_blocks.sequence_problems(back_to_back) == []
    overlapping = [back_to_back[1], back_to_back[0]]
    (problem,) = successive_blocks.sequence_problems(overlapping)
    assert str(problem).startswith(
        "capacityBlocks[1].start: got '2026-12-01T11:30:00+00:00'; allowed: a start after block 0 has scaled to 0"
    )


def test_a_block_starting_at_the_previous_scale_down_is_refused() -> None:
    # Auto Scaling refuses two scheduled actions of a group at one time, and the switch needs a moment at 0.
    first = _block("cr-0000000000000000a", datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc))
    assert first.usable_end is not None
    same_moment = _block("cr-0000000000000000b", first.usable_end)
    (problem,) = successive_blocks.sequence_problems([first, same_moment])
    assert "a start after block 0 has scaled to 0 and settled" in problem.allowed


def test_block_schedule_covers_the_current_and_later_blocks_with_unique_names_and_times() -> None:
    first = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
    blocks = [_block("cr-0000000000000000a", first), _block("cr-0000000000000000b", first + timedelta(days=14))]
    before = cb.block_schedule(blocks, 18, first - timedelta(days=1))
    assert [(a.name, a.desired_capacity) for a in before] == [
        ("capacity-block-20261201T1130Z-start", 18),
        ("capacity-block-20261201T1130Z-end", 0),
        ("capacity-block-20261215T1130Z-start", 18),
        ("capacity-block-20261215T1130Z-end", 0),
    ]
    assert len({a.start_time for a in before}) == len({a.name for a in before}) == 4
    between = cb.block_schedule(blocks, 18, first + timedelta(days=14, minutes=-30))
    assert [a.name for a in between] == ["capacity-block-20261215T1130Z-start", "capacity-block-20261215T1130Z-end"]
    assert cb.block_schedule(blocks, 18, first + timedelta(days=60)) == []


def test_switch_window_runs_from_the_settled_scale_down_to_the_next_start() -> None:
    first = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
    blocks = [_block("cr-0000000000000000a", first), _block("cr-0000000000000000b", first + timedelta(days=14))]
    settled = first + timedelta(days=14, minutes=-90 + cb.SWITCH_SETTLE_MINUTES)
    assert cb.switch_window(blocks, 0) == (settled, first + timedelta(days=14))
    assert cb.switch_window(blocks, 1) is None


def test_more_blocks_than_an_auto_scaling_group_holds_actions_for_are_refused() -> None:
    first = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
    blocks = [_block(f"cr-{n:017x}", first + timedelta(days=2 * n), days=1) for n in range(63)]
    assert successive_blocks.schedule_count_problems(blocks[:62]) == []
    (problem,) = successive_blocks.schedule_count_problems(blocks)
    assert str(problem) == (
        "capacityBlocks: got 63 blocks (126 scheduled actions); allowed: at most 62 blocks: an Auto Scaling group "
        "holds 125 scheduled actions; fix: list fewer blocks and add later ones after earlier ones end"
    )
