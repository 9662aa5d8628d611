"""Plain data of the drain's warning queue: the EventBridge rule's pattern.

Capacity Block expiration warnings go to an EventQueue that only the rule may send to, and that only the drain's Pod
Identity role may read from and delete on (``event_queue.READER_ACTIONS``; ``warning_queue.py`` reads it in the
cluster).
"""

from __future__ import annotations

from typing import Any

from ultraserver.facts.capacity import capacity_events as events

EXPIRATION_DETAIL_TYPES = tuple(t for t in events.CAPACITY_BLOCK_DETAIL_TYPES if "Expiration Warning" in t)
"""Both spellings of the expiration warning (which one EC2 sends is unverified: capacity_events)."""


def warning_event_pattern() -> dict[str, Any]:
    """Every Capacity Block expiration warning of the account and region: the script keeps those of its blocks (a
    reservation filter here would miss the blocks ``extend`` adds without a deploy)."""
    return {"source": [events.EC2_SOURCE], "detail-type": list(EXPIRATION_DETAIL_TYPES)}
