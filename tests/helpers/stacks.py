"""The shipped stacks."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ultraserver.offline.project import load_project
from ultraserver.offline.project import stack_config as read

ROOT = Path(__file__).resolve().parent.parent.parent
# Every plan in the tests runs at this moment, so results do not change as the shipped stacks' block dates pass
# (the program sizes capacity-block groups and drops past scheduled actions against the clock).
TEST_NOW = datetime(2026, 11, 23, 2, 50, tzinfo=timezone.utc)
STACKS = ["gb200-multi", "gb200-x36", "gb200-x72", "gb200-x72-dra"]
"""The stacks this repository ships, named explicitly: a user's own stack file in stacks/ (a copy being edited, an
empty file) is not the tests' business. tests/test_shipped_stacks.py keeps the list equal to the tracked files."""


def stack_config(stack: str) -> dict[str, Any]:
    """A shipped stack's config as the program receives it (objects as JSON strings)."""
    config, _ = read(load_project(ROOT), stack)
    return {k: json.loads(v) if v[:1] in "{[" else v for k, v in config.items()}
