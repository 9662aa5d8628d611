"""ultraserver.clock: the wall clock unless a plan pins a moment; pins nest and undo themselves."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from ultraserver import clock


def test_pins_nest_and_unwind() -> None:
    outer = clock.now()  # the session's pinned moment (tests/conftest.py)
    later = outer + timedelta(days=30)
    with clock.pinned(later):
        assert clock.now() == later
        with clock.pinned(None):  # None keeps whatever holds
            assert clock.now() == later
    assert clock.now() == outer


def test_a_moment_without_a_zone_is_refused() -> None:
    with pytest.raises(ValueError, match="has no time zone"), clock.pinned(datetime(2026, 12, 1)):
        pass
    assert clock.now().tzinfo == timezone.utc
