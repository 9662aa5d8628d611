"""Dotted version numbers (Kubernetes 1.33, chart v25.3.4, add-on v1.18.5) as comparable tuples."""

from __future__ import annotations

from typing import Any


def version_tuple(value: Any) -> tuple[int, ...] | None:
    """'v25.3.4', '25.8.0' or '1.33' as a comparable tuple; None when not a dotted number."""
    if not isinstance(value, str):
        return None
    text = value.strip().lstrip("vV")
    parts = text.split(".")
    if not text or not all(p.isascii() and p.isdigit() for p in parts):  # int() takes other scripts' digits
        return None
    return tuple(int(p) for p in parts)


def version_at_least(value: Any, minimum: str) -> bool:
    """True when value parses and is >= minimum (missing trailing parts count as zero)."""
    have, want = version_tuple(value), version_tuple(minimum)
    if have is None or want is None:
        return False
    width = max(len(have), len(want))
    return have + (0,) * (width - len(have)) >= want + (0,) * (width - len(want))
