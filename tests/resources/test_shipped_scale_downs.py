"""Every shipped stack scales each group to 0 before EC2 starts reclaiming its UltraServer block (60 minutes before
the block's end), late enough to waste little and early enough that a late scheduled action still lands first: EC2
Auto Scaling runs a scheduled action up to two minutes after its time ("Scheduled scaling", Considerations), and the
instances' termination takes minutes to begin, so at least 5 minutes (the drain itself runs before the scale-down)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from helpers.stacks import STACKS, stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.facts.capacity.capacity_blocks import reclaim_at
from ultraserver.offline import record
from ultraserver.resources.platform import Platform, PlatformArgs

SCHEDULE = "aws:autoscaling/schedule:Schedule"


@pytest.mark.parametrize("stack", STACKS)
def test_each_scale_down_comes_at_least_5_minutes_before_the_reclaim(stack: str) -> None:
    config = stack_config(stack)
    windows = [
        w
        for group in config["ultraserver-eks:gpuNodeGroups"]
        for w in group.get("capacityBlocks") or [group.get("reservationWindow") or {}]
        if "end" in w
    ]
    if not windows:
        pytest.skip(f"{stack} has no reservation window: it schedules nothing")
    ends = [datetime.fromisoformat(w["end"]) for w in windows]
    starts = [datetime.fromisoformat(w["start"]) for w in windows]
    now = min(starts) - timedelta(days=1)
    settings = parse_settings(config, today=now.date())
    plan = record(lambda: Platform("ultraserver", PlatformArgs(settings=settings, now=now)))
    downs = [r.inputs for r in plan.of_type(SCHEDULE) if r.inputs["desiredCapacity"] == 0]
    assert downs, stack
    for action in downs:
        at = datetime.fromisoformat(action["startTime"].replace("Z", "+00:00"))
        end = min(e for e in ends if e > at)
        assert timedelta(minutes=5) <= reclaim_at(end) - at <= timedelta(minutes=15), (
            stack,
            at,
            end,
        )  # and not wasteful
