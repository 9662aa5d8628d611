"""verify, status, the rehearsal and the in-cluster drift check share one answer to "should this group run now"."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from helpers.stacks import STACKS, stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.facts.capacity.capacity_blocks import NODE_JOIN_GRACE_MINUTES
from ultraserver.incluster import drift
from ultraserver.verify.expect import expectation


def moments(start: datetime, scale_down: datetime, end: datetime) -> list[tuple[datetime, bool]]:
    """Moments around one block, each with whether the group should be at full size then (from the block's own
    times and the grace EKS's join takes, not from the code under test)."""
    grace = timedelta(minutes=NODE_JOIN_GRACE_MINUTES)
    second = timedelta(seconds=1)
    return [
        (start - timedelta(days=1), False),
        (start, False),
        (start + grace - second, False),
        (start + grace, True),
        (scale_down - second, True),
        (scale_down, False),
        (end - second, False),
        (end + timedelta(days=1), False),
    ]


@pytest.mark.parametrize("stack", STACKS)
def test_verify_and_the_drift_check_agree_on_what_should_run(stack: str) -> None:
    settings = parse_settings(stack_config(stack))
    groups = {g.name: g for g in expectation(settings).groups}
    checked = 0
    for group in settings.gpu_node_groups:
        for block in group.blocks:
            if block.window is None:
                continue
            for name in groups:
                if not name.startswith(group.name):
                    continue
                g = groups[name]
                for at, due in moments(block.window.start, block.window.scale_down_at, block.window.end):
                    if any(b.window and b.window.start <= at < b.window.end for b in group.blocks if b is not block):
                        continue  # inside the next block of the same group
                    assert g.running(at) == drift.running(g.to_json(), at) == due, (name, at)
                    checked += 1
    windowless = [g for g in groups.values() if not g.windows]
    for g in windowless:
        assert g.running(datetime.fromisoformat("2030-01-01T00:00:00+00:00"))
    assert checked or windowless
