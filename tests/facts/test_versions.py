"""Dotted versions compare as numbers, with or without a leading v."""

from __future__ import annotations

import pytest
from ultraserver.facts.pins.charts import version_at_least, version_tuple


@pytest.mark.parametrize(
    ("text", "parsed"),
    [("1.33", (1, 33)), ("v25.3.4", (25, 3, 4)), ("V1.18.5", (1, 18, 5)), ("1.33-eks", None), ("", None), (133, None)],
)
def test_version_tuple(text: object, parsed: tuple[int, ...] | None) -> None:
    assert version_tuple(text) == parsed


@pytest.mark.parametrize(
    ("value", "minimum", "ok"),
    [("1.33", "1.33", True), ("1.9", "1.33", False), ("v25.3", "25.3.0", True), ("25.2.9", "v25.3", False)],
)
def test_version_at_least(value: str, minimum: str, ok: bool) -> None:
    assert version_at_least(value, minimum) is ok


def test_unparsable_version_is_never_enough() -> None:
    assert not version_at_least("latest", "1.0")
