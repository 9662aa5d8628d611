"""docs/permissions.md: one IAM policy per live command, generated from facts/aws/permissions.py; plan calls no AWS."""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import ModuleType

from helpers.modules import load_file
from helpers.permissions import recorded_operations
from ultraserver.facts.aws.permissions import COMMAND_ACTIONS, OPERATION_ACTIONS, policy_document
from ultraserver.offline import run_plan

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "permissions.md"


def generator() -> ModuleType:
    """scripts/regen_docs.py as a module."""
    return load_file(ROOT / "scripts" / "regen_docs.py", "regen_docs")


def test_committed_doc_matches_the_table() -> None:
    """Regenerate with: PYTHONPATH=components python scripts/regen_docs.py"""
    text = DOC.read_text()
    assert generator().render(text) == text


def test_the_doc_holds_each_commands_policy_as_json() -> None:
    policies = [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", DOC.read_text(), re.S)]
    assert policies == [policy_document(c) for c in COMMAND_ACTIONS if COMMAND_ACTIONS[c]]


def test_every_action_is_of_an_operation_and_only_extend_yes_buys() -> None:
    known = set(OPERATION_ACTIONS.values())
    assert {a for actions in COMMAND_ACTIONS.values() for a in actions} == known
    buying = {c for c, actions in COMMAND_ACTIONS.items() if "ec2:PurchaseCapacityBlockExtension" in actions}
    assert buying == {"extend --yes"}
    assert COMMAND_ACTIONS["plan"] == ()


def test_plan_calls_no_aws_api() -> None:
    with recorded_operations() as seen:
        run_plan(ROOT, "gb200-x72")
    assert seen == []
