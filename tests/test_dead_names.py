"""No dead names: every public top-level name of the package is used by the shipped code.

"Used" means named (as a name, an attribute, an import or an exact string such as a lazy export) somewhere in
components/, scripts/, policies/, kubernetes-layer/, examples/ or the root __main__.py, outside its own definition.
Tests do not count: a name only the tests use is dead. Names of the curated API (``ultraserver.__all__``) are used by
programs, and ``ALLOWED`` lists the few others that are used from outside Python, each with the reason.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import ultraserver

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "components" / "ultraserver"
USERS = ("components", "scripts", "policies", "kubernetes-layer", "examples")
ALLOWED: dict[str, str] = {
    "LAYERS": "the layer table read from the package docstring; tests/test_layers.py enforces it",
    "CAPACITY_RESERVATION_STATES": "EC2's whole enum (sourced); tests hold the status judge against every value",
    "CAPACITY_BLOCK_STATES": "EC2's whole enum (sourced); tests hold the status judge against every value",
    "INTERCONNECT_STATUSES": "EC2's whole enum (sourced); tests hold the status judge against every value",
    "EXTENSION_STATUSES": "EC2's whole enum (sourced); tests hold it against the botocore model",
    "SCHEDULED_ACTION_NAME": "an AWS limit the tests hold the generated action names against",
    "SNS_TOPIC_NAME": "an AWS limit the tests hold the generated topic name prefix against",
    "EXIT_TABLE": "read by scripts/regen_docs.py through its marker in docs/plan.md (every command's exit codes)",
}
"""Public names no shipped code reads, and why they stay."""


def definitions(tree: ast.Module) -> Iterator[tuple[str, ast.stmt]]:
    """Top-level public names a module defines, with the statement that defines each."""
    for node in tree.body:
        targets: list[ast.expr] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if not node.name.startswith("_"):
                yield node.name, node
            continue
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name) and not name.id.startswith("_"):
                    yield name.id, node


def mentions(tree: ast.AST, skip: range = range(0)) -> set[str]:
    """Every name a tree mentions outside the lines in ``skip``."""
    found = set()
    for node in ast.walk(tree):
        if getattr(node, "lineno", None) in skip:
            continue
        if isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.ImportFrom):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            found.add(node.value)
    return found


def dead_names(sources: dict[Path, str], package: Path, exported: set[str]) -> list[str]:
    """``path:line: name`` of each public top-level name of ``package`` that no source mentions elsewhere."""
    trees = {path: ast.parse(text) for path, text in sources.items()}
    everywhere: dict[str, set[Path]] = {}
    for path, tree in trees.items():
        for name in mentions(tree):
            everywhere.setdefault(name, set()).add(path)
    dead = []
    for path, tree in trees.items():
        if package not in path.parents:
            continue
        for name, node in definitions(tree):
            if name in exported or everywhere.get(name, set()) - {path}:
                continue
            if name not in mentions(tree, range(node.lineno, (node.end_lineno or node.lineno) + 1)):
                dead.append(f"{path.relative_to(package)}:{node.lineno}: {name}")
    return dead


def shipped_sources() -> dict[Path, str]:
    files = [path for folder in USERS for path in (ROOT / folder).rglob("*.py")] + [ROOT / "__main__.py"]
    return {path: path.read_text() for path in files}


def test_the_finder_sees_a_dead_name_and_only_that() -> None:
    pkg = Path("/p/ultraserver")
    sources = {
        pkg / "a.py": "USED = 1\nDEAD = USED\nSELF = 2\nX = SELF\ndef dead():\n    return dead()\nA, B = 1, 2\n",
        pkg / "b.py": "from a import X\nprint(X, 'A')\n",
        Path("/p/scripts/s.py"): "import a\na.B\n",
    }
    assert dead_names(sources, pkg, exported=set()) == ["a.py:2: DEAD", "a.py:5: dead"]
    assert dead_names(sources, pkg, exported={"DEAD"}) == ["a.py:5: dead"]


def test_no_public_name_is_dead() -> None:
    dead = [
        d for d in dead_names(shipped_sources(), PACKAGE, set(ultraserver.__all__)) if d.split(": ")[1] not in ALLOWED
    ]
    assert not dead, (
        "defined but never used outside the tests (delete them, or allow one with a reason):\n" + "\n".join(dead)
    )


def test_every_allowed_name_exists_and_is_still_unused() -> None:
    dead = {d.split(": ")[1] for d in dead_names(shipped_sources(), PACKAGE, set(ultraserver.__all__))}
    assert set(ALLOWED) <= dead, f"no longer dead, remove from ALLOWED: {sorted(set(ALLOWED) - dead)}"
