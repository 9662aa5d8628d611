"""The stack-file JSON Schema and docs/settings.md come from the settings model and stay current."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from types import ModuleType

import jsonschema
import pytest
import yaml
from helpers.modules import load_file
from helpers.stacks import STACKS
from ultraserver.config.schema import schema_text, stack_schema

ROOT = Path(__file__).resolve().parent.parent.parent
SCHEMA = ROOT / "stacks" / "stack.schema.json"


def regen_docs() -> ModuleType:
    """scripts/regen_docs.py as a module."""
    return load_file(ROOT / "scripts" / "regen_docs.py", "regen_docs")


def stack_file(stack: str) -> dict:
    return yaml.safe_load((ROOT / "stacks" / f"Pulumi.{stack}.yaml").read_text())


def test_committed_schema_is_current() -> None:
    """Regenerate with: PYTHONPATH=components python scripts/regen_docs.py"""
    assert SCHEMA.read_text() == schema_text()


def test_settings_reference_is_current() -> None:
    """Regenerate with: PYTHONPATH=components python scripts/regen_docs.py"""
    doc = (ROOT / "docs" / "settings.md").read_text()
    assert "<!-- settings:ultraserver.config.model.Settings -->" in doc
    assert regen_docs().render(doc) == doc


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_stack_names_and_passes_the_schema(stack: str) -> None:
    path = ROOT / "stacks" / f"Pulumi.{stack}.yaml"
    assert path.read_text().splitlines()[0] == "# yaml-language-server: $schema=./stack.schema.json"
    jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text())).validate(stack_file(stack))


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda c: c["ultraserver-eks:cluster"].update(nmae="x"), "nmae"),
        (lambda c: c.update({"ultraserver-eks:clusters": {}}), "ultraserver-eks:clusters"),
        (lambda c: c["ultraserver-eks:gpuNodeGroups"][0].update(mode="karpenter"), "karpenter"),
        (lambda c: c["ultraserver-eks:imexCheck"].update(nodes=1), "1"),
    ],
)
def test_schema_rejects_what_settings_reject(change, expected: str) -> None:  # type: ignore[no-untyped-def]
    document = copy.deepcopy(stack_file("gb200-x72"))
    change(document["config"])
    errors = list(jsonschema.Draft202012Validator(stack_schema()).iter_errors(document))
    assert errors and any(expected in e.message for e in errors), [e.message for e in errors]


def test_schema_accepts_all_imex_nodes_and_other_namespaces() -> None:
    document = copy.deepcopy(stack_file("gb200-x72"))
    document["config"]["ultraserver-eks:imexCheck"]["nodes"] = "all"
    document["config"]["aws:profile"] = "dev"
    jsonschema.Draft202012Validator(stack_schema()).validate(document)
