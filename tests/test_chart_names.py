"""One name means one thing: a chart's name constant in facts/pins/charts.py names that chart wherever it appears, and
the
Helm release targets of the charts carry names of their own (`*_RELEASE`)."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path
from types import ModuleType

import ultraserver
from ultraserver.config.kubernetes_model import RELEASE_KEYS
from ultraserver.facts.pins import charts
from ultraserver.resources.helm_release import ChartTarget

CHART_NAMES = {
    name: value
    for name, value in vars(charts).items()
    if name.isupper() and isinstance(value, str) and value in charts.catalog()
}
"""facts/pins/charts.py's constants that hold a pinned chart's name, by constant name."""


def _modules() -> list[ModuleType]:
    """Every module of the package (not __main__, which runs the CLI)."""
    return [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(ultraserver.__path__, "ultraserver.")
        if not info.name.endswith("__main__")
    ]


def test_every_pinned_chart_has_a_name_constant() -> None:
    assert set(CHART_NAMES.values()) == set(charts.catalog())


def test_a_chart_name_constant_means_the_chart_in_every_module() -> None:
    clashes = [
        f"{module.__name__}.{name} is {type(value).__name__} {value!r}, but facts.pins.charts.{name} is chart "
        f"{CHART_NAMES[name]!r}"
        for module in _modules()
        for name, value in vars(module).items()
        if name in CHART_NAMES and value != CHART_NAMES[name]
    ]
    assert clashes == []


def test_no_module_but_facts_charts_binds_a_chart_name_constant() -> None:
    """A second `GPU_OPERATOR = "gpu-operator"` (or an alias of the facts constant) is a second home for the name."""
    package = Path(ultraserver.__file__).parent
    home = package / "facts" / "pins" / "charts.py"
    bound = [
        f"{path.relative_to(package)}:{node.lineno} binds {target.id}"
        for path in sorted(package.rglob("*.py"))
        if path != home
        for node in ast.parse(path.read_text()).body
        if isinstance(node, (ast.Assign, ast.AnnAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name) and target.id in CHART_NAMES
    ]
    assert bound == []


def test_each_chart_release_target_is_named_for_itself() -> None:
    targets = {
        f"{module.__name__}.{name}": value
        for module in _modules()
        for name, value in vars(module).items()
        if isinstance(value, ChartTarget)
    }
    assert {t.chart for t in targets.values()} == set(RELEASE_KEYS.values())
    assert [name for name in targets if not name.endswith("_RELEASE")] == []
