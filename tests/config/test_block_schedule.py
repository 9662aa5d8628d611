"""Reservation windows follow the rules AWS applies to Capacity Blocks (sources in
facts/capacity/capacity_blocks.py): a zone on every time, an end at 11:30 UTC, no longer than the longest block AWS
sells,
and an ended window warns like an ended capacityBlocks entry."""

from __future__ import annotations

import copy
from datetime import date, datetime, timedelta, timezone
from typing import Any

import pytest
from helpers.stacks import STACKS, stack_config
from ultraserver.config.settings import parse_settings, settings_warnings
from ultraserver.facts.capacity import capacity_blocks
from ultraserver.facts.capacity.capacity_blocks import ReservationWindow
from ultraserver.problems import ConfigError

TODAY = date(2026, 11, 23)
GROUP = "ultraserver-eks:gpuNodeGroups[0]"


def with_window(start: str, end: str) -> dict[str, Any]:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:gpuNodeGroups"][0]["reservationWindow"] = {"start": start, "end": end}
    return config


def refusal(config: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_settings(config, today=TODAY)
    return str(caught.value)


def test_window_time_without_time_zone_is_refused() -> None:
    message = refusal(with_window("2026-12-01T11:30:00", "2026-12-15T11:30:00Z"))
    assert f"{GROUP}.reservationWindow.start: got '2026-12-01T11:30:00'" in message
    assert "allowed: a time with its time zone" in message
    assert "fix: write 2026-12-01T11:30:00Z if it is UTC" in message


def test_window_end_off_the_capacity_block_schedule_is_refused_with_the_fix() -> None:
    message = refusal(with_window("2026-12-01T11:30:00Z", "2026-12-15T12:00:00Z"))
    assert f"{GROUP}.reservationWindow.end: got '2026-12-15T12:00:00+00:00'" in message
    assert "allowed: 11:30 UTC, when every Capacity Block ends" in message
    assert "e.g. 2026-12-15T11:30:00Z" in message


def test_an_end_at_1130_utc_in_another_zone_and_an_immediate_start_are_accepted() -> None:
    settings = parse_settings(with_window("2026-12-01T04:55:00Z", "2026-12-15T12:30:00+01:00"), today=TODAY)
    assert settings.gpu_node_groups[0].reservation_window is not None


def test_window_longer_than_the_longest_capacity_block_is_refused() -> None:
    message = refusal(with_window("2026-12-01T11:30:00Z", "2027-12-01T11:30:00Z"))
    assert f"{GROUP}.reservationWindow: got '365 days'; allowed: at most 182 days" in message


def test_the_longest_capacity_block_is_accepted() -> None:
    start = datetime(2026, 12, 1, 4, 55, tzinfo=timezone.utc)  # bought to start at once: a partial first day
    end = datetime(2027, 6, 1, 11, 30, tzinfo=timezone.utc)  # 182 days after the first 11:30 UTC
    assert end - start > timedelta(days=capacity_blocks.MAX_BLOCK_DAYS)
    assert capacity_blocks.aws_schedule_problems(ReservationWindow(start, end), "w") == []


def test_an_ended_reservation_window_warns_like_an_ended_capacity_block() -> None:
    settings = parse_settings(with_window("2026-11-01T11:30:00Z", "2026-11-15T11:30:00Z"), today=TODAY)
    warnings = [p for p in settings_warnings(settings, today=TODAY) if p.key.startswith(GROUP)]
    assert [p.key for p in warnings if "has not ended" in p.allowed] == [f"{GROUP}.reservationWindow.end"]


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_windows_are_on_the_capacity_block_schedule(stack: str) -> None:
    settings = parse_settings(stack_config(stack), today=TODAY)
    for group in settings.gpu_node_groups:
        for block in group.blocks:
            if block.window is not None:
                assert capacity_blocks.aws_schedule_problems(block.window, group.name) == []
