"""docs/components.md documents every component, with tables generated from the code."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import re
from pathlib import Path
from types import ModuleType

import pulumi
import pytest
import ultraserver
from helpers.modules import load_file

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "components.md"


def generator() -> ModuleType:
    """scripts/regen_docs.py as a module."""
    return load_file(ROOT / "scripts" / "regen_docs.py", "regen_docs")


def components() -> set[str]:
    """Names of the concrete components the package defines (each registers an ultraserver:index type)."""
    found = set()
    for info in pkgutil.walk_packages(ultraserver.__path__, "ultraserver."):
        if info.name.endswith(".__main__"):
            continue  # importing it runs the CLI
        module = importlib.import_module(info.name)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and issubclass(cls, pulumi.ComponentResource):
                if f'"ultraserver:index:{name}"' in inspect.getsource(cls):
                    found.add(name)
    return found


def test_committed_doc_matches_the_code() -> None:
    """Regenerate with: PYTHONPATH=components python scripts/regen_docs.py"""
    text = DOC.read_text()
    assert generator().render(text) == text


def test_every_component_has_a_section() -> None:
    headings = " ".join(re.findall(r"^## (.+)$", DOC.read_text(), re.M))
    found = components()
    assert {"Network", "Cluster", "GpuNodeGroup", "KubernetesLayer", "ComputeDomain", "Platform"} <= found
    assert not {name for name in found if name not in headings}


def test_stale_tables_are_rewritten_from_the_dataclass() -> None:
    gen = generator()
    stale = "a\n<!-- args:ultraserver.resources.node_role.NodeRoleArgs -->\n| old |\n<!-- end -->\nb\n"
    fresh = gen.render(stale)
    assert "| old |" not in fresh and fresh.startswith("a\n") and fresh.endswith("<!-- end -->\nb\n")
    assert "| `instance_profile` | `bool` | `False` | Also create an instance profile" in fresh


def test_render_needs_markers() -> None:
    with pytest.raises(ValueError, match="markers"):
        generator().render("# nothing generated here\n")
