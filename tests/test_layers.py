"""The package's layers import one way, as the table in the package docstring says.

Also layout rules that keep modules small enough to read: at most 400 lines each.
"""

from __future__ import annotations

import ast
from pathlib import Path

from ultraserver import LAYERS

PACKAGE = Path(__file__).resolve().parent.parent / "components" / "ultraserver"


# What each layer may import of ours (its own layer included).
ALLOWED: dict[str, set[str]] = {
    **{layer: set(allowed) | {layer} for layer, allowed in LAYERS.items()},
    "__init__": {"problems", "facts", "config", "builders", "resources", "offline"},
    "__main__": {"cli"},
}
# Layers that must not load Pulumi (the policy rules run inside the policy pack; only pack.py may).
PULUMI_FREE = {"problems", "clock", "incluster", "facts", "config", "builders", "preflight", "verify", "status"}
PULUMI_FREE_MODULES = {"offline/resource.py", "offline/order.py"} | {
    str(p.relative_to(PACKAGE)) for p in (PACKAGE / "policy").glob("*.py") if p.name != "pack.py"
}


def layer_of(path: Path) -> str:
    rel = path.relative_to(PACKAGE)
    return rel.parts[0] if len(rel.parts) > 1 else rel.stem


def imports_of(path: Path) -> list[str]:
    """Every module name the file imports, at any depth (function-level imports included)."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: use absolute imports"
            # `from ultraserver import clock` imports the module ultraserver.clock, not the package's __init__.
            if node.module == "ultraserver":
                found += [f"ultraserver.{alias.name}" for alias in node.names]
            else:
                found.append(node.module or "")
    return found


MODULES = sorted(PACKAGE.rglob("*.py"))


def backwards(layer: str, modules: list[str]) -> list[str]:
    """The imports of ours a module of `layer` may not make."""
    bad = []
    for module in modules:
        if module != "ultraserver" and not module.startswith("ultraserver."):
            continue
        target = module.split(".")[1] if "." in module else "__init__"
        if target != layer and target not in ALLOWED[layer]:
            bad.append(module)
    return bad


def test_imports_run_one_way() -> None:
    unknown = [str(p.relative_to(PACKAGE)) for p in MODULES if layer_of(p) not in ALLOWED]
    assert unknown == [], "modules outside the known layers; add their layers to this test"
    found = {str(p.relative_to(PACKAGE)): bad for p in MODULES if (bad := backwards(layer_of(p), imports_of(p)))}
    assert found == {}


PULUMI_FREE_PATHS = [
    p for p in MODULES if layer_of(p) in PULUMI_FREE or str(p.relative_to(PACKAGE)) in PULUMI_FREE_MODULES
]


def pulumi_imports(path: Path) -> list[str]:
    """The Pulumi (and protobuf) modules a file imports."""
    return [m for m in imports_of(path) if m.split(".")[0].startswith("pulumi") or m.startswith("google.protobuf")]


def test_lower_layers_do_not_load_pulumi() -> None:
    found = {str(p.relative_to(PACKAGE)): pulumi for p in PULUMI_FREE_PATHS if (pulumi := pulumi_imports(p))}
    assert found == {}


def test_the_pulumi_check_sees_an_import(tmp_path: Path) -> None:
    module = tmp_path / "sample.py"
    module.write_text("import pulumi_aws as aws\nfrom ultraserver.facts import ami\n")
    assert pulumi_imports(module) == ["pulumi_aws"]


def test_the_check_catches_a_backwards_import(tmp_path: Path) -> None:
    module = tmp_path / "sample.py"
    module.write_text(
        "def f():\n    from ultraserver.resources.cluster import Cluster\n    from ultraserver.facts import ami\n"
    )
    assert backwards("facts", imports_of(module)) == ["ultraserver.resources.cluster"]
    assert backwards("config", ["ultraserver.builders.nodeconfig"]) == ["ultraserver.builders.nodeconfig"]


def test_nothing_imports_the_cli() -> None:
    importers = [
        str(p.relative_to(PACKAGE))
        for p in MODULES
        if p.name != "__main__.py"
        and layer_of(p) != "cli"
        and any(m == "ultraserver.cli" or m.startswith("ultraserver.cli.") for m in imports_of(p))
    ]
    assert importers == []


MAX_LINES = 400
# Modules another change is splitting; drop an entry when its split lands (the last test below says when).
OVERSIZED_UNTIL_SPLIT: set[str] = set()


def line_count(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_no_module_is_over_400_lines() -> None:
    found = {
        rel: count
        for p in MODULES
        if (rel := str(p.relative_to(PACKAGE))) not in OVERSIZED_UNTIL_SPLIT and (count := line_count(p)) > MAX_LINES
    }
    assert found == {}, f"split these modules (at most {MAX_LINES} lines each)"


def test_oversized_exceptions_are_still_needed() -> None:
    fixed = sorted(rel for rel in OVERSIZED_UNTIL_SPLIT if line_count(PACKAGE / rel) <= MAX_LINES)
    assert fixed == [], f"{fixed} fit in {MAX_LINES} lines now; remove them from OVERSIZED_UNTIL_SPLIT"


def test_test_module_names_are_unique() -> None:
    """pytest imports test modules by basename (rootdir conftest, prepend mode): two equal names collide."""
    tests = Path(__file__).resolve().parent
    names = [p.name for p in tests.rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []


def test_the_layer_table_is_read_from_the_docstring() -> None:
    assert len(LAYERS) >= 12 and LAYERS["facts"] == ("problems", "arguments")
    assert LAYERS["incluster"] == ()  # the in-cluster programs import nothing of ours but each other
    assert "resources" in LAYERS["offline"] and "builders" not in LAYERS["policy"]
    assert set(ALLOWED) == set(LAYERS) | {"__init__", "__main__"}
