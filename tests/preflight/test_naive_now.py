"""run_preflight refuses a ``now`` without a time zone with a clear error (EC2's timestamps are aware)."""

from __future__ import annotations

import pytest
from helpers.capacity import clients
from helpers.preflight import NOW, stubbed, target
from ultraserver.preflight.checks import run_preflight

NAIVE = NOW.replace(tzinfo=None)


def test_preflight_refuses_a_naive_now() -> None:
    ec2, _ = stubbed("ec2")
    with pytest.raises(ValueError, match="without a time zone; allowed: an aware datetime"):
        run_preflight(target(), clients(ec2), now=NAIVE)
