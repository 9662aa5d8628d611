"""What each pinned chart's templates read, and the values key paths a values tree sets that no template reads.

The data (data/chart_template_reads.json) is derived by scripts/regen_upstream_fixtures.py from each chart's templates
at the pinned version (its subcharts included); every entry names the repository, tag or commit and chart folder it
was read from. A key no template reads does nothing: the chart renders the same objects with or without it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any


@dataclass(frozen=True)
class TemplateReads:
    """The values paths one chart version's templates read."""

    version: str
    """Chart version the templates were read at (the pin when the data is current)."""
    source: Mapping[str, str]
    """Repository, commit (and tag) and chart folder the templates were read from."""
    paths: frozenset[str]
    """Every values key path a template reads or tests."""
    whole: frozenset[str]
    """Paths whose whole value, subtree included, a template uses (toYaml, range, `with` then `.`)."""

    def reads(self, path: str) -> bool:
        """Whether a template reads this path, itself or as part of a parent used whole."""
        parts = path.split(".")
        return path in self.paths or any(".".join(parts[:n]) in self.whole for n in range(1, len(parts)))


@cache
def template_reads() -> dict[str, TemplateReads]:
    """Template reads per chart name (only the charts whose templates were derived)."""
    raw = json.loads(resources.files("ultraserver.facts").joinpath("data/chart_template_reads.json").read_text())
    return {
        name: TemplateReads(
            entry["version"], entry["source"], frozenset(entry["reads"]), frozenset(entry["wholeReads"])
        )
        for name, entry in raw["charts"].items()
    }


def _unread(reads: TemplateReads, values: Mapping[str, Any], prefix: str) -> list[str]:
    found: list[str] = []
    for key, value in values.items():
        path = f"{prefix}{key}"
        if path in reads.whole:
            continue
        below = isinstance(value, Mapping) and value and any(p.startswith(path + ".") for p in reads.paths)
        if below:
            found.extend(_unread(reads, value, path + "."))
        elif not reads.reads(path):
            found.append(path)
    return found


def unread_paths(chart: str, values: Mapping[str, Any]) -> list[str]:
    """Key paths `values` sets that no template of the chart reads, at the version its data was derived for. A map
    is followed into where templates read keys below it (a subchart's values); otherwise it is one value (a node
    selector's labels are its content, not keys)."""
    return _unread(template_reads()[chart], values, "")
