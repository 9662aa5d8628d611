"""The shipped stacks."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml
from ultraserver.offline.project import load_project
from ultraserver.offline.project import stack_config as read

ROOT = Path(__file__).resolve().parent.parent.parent
# Every plan in the tests runs at this moment, so results do not change as the shipped stacks' block dates pass
# (the program sizes capacity-block groups and drops past scheduled actions against the clock).
TEST_NOW = datetime(2026, 11, 23, 2, 50, tzinfo=timezone.utc)
SHIPPED = ROOT / "stacks" / "shipped-stacks.txt"
STACKS = [n for line in SHIPPED.read_text(encoding="utf-8").splitlines() if (n := line.strip()) and n[0] != "#"]
"""The stacks this repository ships, named in stacks/shipped-stacks.txt (as for the docs' table and .ci/run): a
user's own stack file in stacks/ (a copy being edited, an empty file) is not in it, so the tests that walk the
shipped stacks never fail because it exists; tests/test_your_stacks.py checks it instead."""
OWN_STACKS = sorted(
    name
    for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
    if (name := p.name.removeprefix("Pulumi.").removesuffix(".yaml")) not in STACKS
)
"""The stack files in stacks/ that are not shipped: a user's own (README step 2)."""


def stack_config(stack: str) -> dict[str, Any]:
    """A shipped stack's config as the program receives it (objects as JSON strings)."""
    config, _ = read(load_project(ROOT), stack)
    return {k: json.loads(v) if v[:1] in "{[" else v for k, v in config.items()}


SPARES_STACK = "x72-spares"


def spares_project(tmp_path: Path) -> Path:
    """A copy of the project whose stack x72-spares is gb200-x72 with two spares per UltraServer (and gb200-x72
    itself, without spares)."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "stacks").mkdir()
    shutil.copy(ROOT / "stacks" / "Pulumi.gb200-x72.yaml", tmp_path / "stacks")
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.gb200-x72.yaml").read_text())
    document["config"]["ultraserver-eks:gpuNodeGroups"][0]["sparesPerUltraServer"] = 2
    (tmp_path / "stacks" / f"Pulumi.{SPARES_STACK}.yaml").write_text(yaml.safe_dump(document))
    return tmp_path


def project_config(project: Path, stack: str) -> dict[str, Any]:
    """A stack's config in a project copy, as the program receives it."""
    config, _ = read(load_project(project), stack)
    return {k: yaml.safe_load(v) if v[:1] in "{[" else v for k, v in config.items()}
