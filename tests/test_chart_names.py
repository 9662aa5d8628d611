"""One name means one thing: a chart's name constant in facts/charts.py names that chart wherever it appears, and the
Helm release targets of the charts carry names of their own (`*_RELEASE`)."""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

import ultraserver
from ultraserver.config.model import RELEASE_KEYS
from ultraserver.facts import charts
from ultraserver.resources.helm_release import ChartTarget

CHART_NAMES = {
    name: value
    for name, value in vars(charts).items()
    if name.isupper() and isinstance(value, str) and value in charts.catalog()
}
"""facts/charts.py's constants that hold a pinned chart's name, by constant name."""


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
        f"{module.__name__}.{name} is {type(value).__name__} {value!r}, but facts.charts.{name} is chart "
        f"{CHART_NAMES[name]!r}"
        for module in _modules()
        for name, value in vars(module).items()
        if name in CHART_NAMES and value != CHART_NAMES[name]
    ]
    assert clashes == []


def test_each_chart_release_target_is_named_for_itself() -> None:
    targets = {
        f"{module.__name__}.{name}": value
        for module in _modules()
        for name, value in vars(module).items()
        if isinstance(value, ChartTarget)
    }
    assert {t.chart for t in targets.values()} == set(RELEASE_KEYS.values())
    assert [name for name in targets if not name.endswith("_RELEASE")] == []
