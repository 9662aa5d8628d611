"""The shipped stacks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ultraserver.offline.project import load_project
from ultraserver.offline.project import stack_config as read

ROOT = Path(__file__).resolve().parent.parent.parent
STACKS = ["gb200-multi", "gb200-x36", "gb200-x72", "gb200-x72-dra"]
"""The stacks this repository ships, named explicitly: a user's own stack file in stacks/ (a copy being edited, an
empty file) is not the tests' business. tests/test_shipped_stacks.py keeps the list equal to the tracked files."""


def stack_config(stack: str) -> dict[str, Any]:
    """A shipped stack's config as the program receives it (objects as JSON strings)."""
    config, _ = read(load_project(ROOT), stack)
    return {k: json.loads(v) if v[:1] in "{[" else v for k, v in config.items()}
