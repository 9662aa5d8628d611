"""Rules on the stack's chart releases: value overrides name keys the pinned charts have and read, and a release
that runs on GPU nodes is not atomic."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import Any

from pydantic.alias_generators import to_camel

from ultraserver.config.kubernetes_model import RELEASE_KEYS
from ultraserver.config.model import Settings, key
from ultraserver.facts.pins import chart_templates
from ultraserver.facts.pins import charts as chart_facts
from ultraserver.problems import WARNING, Problem


def chart_values(s: Settings, today: date) -> list[Problem]:
    """Value overrides name keys the pinned charts have."""
    found = []
    pinned = set(chart_facts.catalog())
    for field, chart in RELEASE_KEYS.items():
        release = getattr(s.kubernetes, field)
        for path in chart_facts.null_paths(release.values):
            found.append(
                Problem(
                    key(s, f"kubernetes.{to_camel(field)}.values.{path}"),
                    None,
                    "a value (Pulumi drops nulls, so the chart default would stay)",
                    "set the value you want (a list replaces the chart's list, a map is merged into the chart's map)",
                )
            )
        if chart not in pinned or release.version not in (None, chart_facts.pinned(chart).version):
            continue  # another chart version has other keys; the release builder checks the pinned one only
        unknown = chart_facts.unknown_value_paths(chart, release.values)
        for path in unknown:
            found.append(
                Problem(
                    key(s, f"kubernetes.{to_camel(field)}.values.{path}"),
                    path,
                    f"a value key of the pinned {chart} chart",
                    "fix the key or remove it (see the chart's values.yaml)",
                )
            )
    return found


def unread_chart_values(s: Settings, today: date) -> list[Problem]:
    """A warning for each known value key no template of the pinned chart reads (static analysis of the templates,
    facts/pins/chart_templates.py): setting it changes nothing. `ultraserver plan --render` judges this by rendering."""
    found = []
    for field, chart in RELEASE_KEYS.items():
        release = getattr(s.kubernetes, field)
        if release.version in (None, chart_facts.pinned(chart).version):
            found += _unread_values(s, field, chart, release.values)
    return found


def _unread_values(s: Settings, field: str, chart: str, values: Mapping[str, Any]) -> list[Problem]:
    if chart not in chart_templates.template_reads():
        return []
    unknown = chart_facts.unknown_value_paths(chart, values)
    version = chart_facts.pinned(chart).version
    return [
        Problem(
            key(s, f"kubernetes.{to_camel(field)}.values.{path}"),
            path,
            f"a value some template of {chart} {version} reads (this key is in its values.yaml, but no template "
            "reads it, so it changes nothing)",
            "remove it, or set the value the templates read instead (see the chart's templates)",
            WARNING,
        )
        for path in chart_templates.unread_paths(chart, values)
        if not any(path == u or path.startswith(u + ".") or u.startswith(path + ".") for u in unknown)
    ]


def release_waits(s: Settings, today: date) -> list[Problem]:
    """A release whose DaemonSets run on GPU nodes skips Helm's wait, so it may not be atomic (Helm waits whenever a
    release is atomic: facts/pins/charts.py)."""
    found = []
    for field, chart in RELEASE_KEYS.items():
        release = getattr(s.kubernetes, field)
        if chart in chart_facts.ON_GPU_NODES and "atomic" in release.model_fields_set and release.atomic:
            found.append(
                Problem(
                    key(s, f"kubernetes.{to_camel(field)}.atomic"),
                    True,
                    "false: the release skips Helm's wait (its DaemonSets run on every GPU node), and Helm waits for "
                    "every pod whenever a release is atomic (helm pkg/action/install.go:289)",
                    "remove atomic (the toolkit makes this release non-atomic)",
                )
            )
    return found
