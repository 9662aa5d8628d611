"""A chart's Helm reference names the chart again, from its own source or from a mirror."""

from __future__ import annotations

import pytest
from ultraserver.facts.pins import charts


@pytest.mark.parametrize("mirror", ["", "https://charts.example.com/helm", "oci://registry.example.com:5000/mirror/"])
def test_chart_of_reads_back_each_pinned_chart(mirror: str) -> None:
    for name, entry in charts.catalog().items():
        reference, _ = charts.chart_reference(entry, mirror)
        assert charts.chart_of(reference) == name
