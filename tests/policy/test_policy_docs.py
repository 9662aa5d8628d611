"""docs/policies.md lists every rule as the code defines it."""

from __future__ import annotations

from pathlib import Path

import pytest
from ultraserver.policy import RULES
from ultraserver.policy.docs import END, START, render

DOC = Path(__file__).resolve().parents[2] / "docs" / "policies.md"


def test_rules_table_is_current() -> None:
    """The generated table matches the rules (regenerate with scripts/regen_docs.py)."""
    text = DOC.read_text()
    assert render(text) == text
    for rule in RULES:
        assert f"| `{rule.name}` | {rule.level} |" in text


def test_render_needs_markers() -> None:
    """A document without the markers is an error, not a silent no-op."""
    with pytest.raises(ValueError, match="markers"):
        render("# no table here\n")
    assert render(f"a\n{START}\nold\n{END}\nb\n").startswith(f"a\n{START}\n| Rule |")
