"""ultraserver.clock: the wall clock unless a plan pins a moment; pins nest and undo themselves."""

from __future__ import annotations

from datetime import date, datetime, timedelta, timezone

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


def test_moment_on_is_the_clock_on_its_own_day_and_midnight_on_another() -> None:
    moment = datetime(2026, 12, 15, 11, 31, tzinfo=timezone.utc)
    with clock.pinned(moment):
        assert clock.moment_on(date(2026, 12, 15)) == moment
        assert clock.moment_on(date(2026, 12, 20)) == datetime(2026, 12, 20, tzinfo=timezone.utc)
