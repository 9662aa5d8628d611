"""A private name (``_name``) stays in its module: no module of the package imports or reads another's."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "components" / "ultraserver"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def absolute(node: ast.ImportFrom, here: str, is_package: bool) -> str:
    """The module an ``from ... import`` names, with relative imports resolved."""
    if not node.level:
        return node.module or ""
    base = here.split(".")[: len(here.split(".")) - node.level + (1 if is_package else 0)]
    return ".".join([*base, *([node.module] if node.module else [])])


def borrowed(source: str, here: str, is_package: bool = False) -> list[str]:
    """Private names of other package modules that ``source`` (module ``here``) imports or reads as attributes."""
    tree = ast.parse(source)
    modules: set[str] = set()  # local names bound to a package module
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("ultraserver"):
                    modules.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            origin = absolute(node, here, is_package)
            if not origin.startswith("ultraserver") or origin == here:
                continue
            for alias in node.names:
                if private(alias.name):
                    found.append(f"from {origin} import {alias.name}")
                else:
                    modules.add(alias.asname or alias.name)  # may be a module; attributes of others are not private
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            chain = node.value
            while isinstance(chain, ast.Attribute):
                chain = chain.value
            if isinstance(chain, ast.Name) and chain.id in modules:
                found.append(f"{ast.unparse(node)}")
    return found


def test_the_finder_sees_each_form() -> None:
    code = (
        "import ultraserver.facts.pins.ami as ami\n"
        "from ultraserver.facts import efa\n"
        "from ultraserver.verify.verdict import _api, PUBLIC\n"
        "from . import _sibling\n"
        "x = efa._layout(1) + ami._K8S + PUBLIC + efa.layout_for\n"
        "self._own = 1\n"
    )
    assert sorted(borrowed(code, "ultraserver.verify.fabric")) == sorted(
        [
            "from ultraserver.verify.verdict import _api",
            "from ultraserver.verify import _sibling",
            "efa._layout",
            "ami._K8S",
        ]
    )


def test_no_module_borrows_a_private_name() -> None:
    found = {
        str(p.relative_to(PACKAGE)): names
        for p in sorted(PACKAGE.rglob("*.py"))
        if (names := borrowed(p.read_text(), module_name(p), p.name == "__init__.py"))
    }
    assert found == {}, "these modules use private names of other modules; make them public"
