"""The chart policies take their minimum versions from facts: the EKS UltraServer guide and the vendor's support."""

from __future__ import annotations

from typing import Any

import pytest
from ultraserver.facts.pins import charts
from ultraserver.facts.pins import version_set as vs
from ultraserver.facts.pins.charts import version_at_least
from ultraserver.policy import RULES
from ultraserver.policy.charts import check_gpu_operator_version
from ultraserver.policy.model import HELM_RELEASE

RULE = {rule.name: rule for rule in RULES}


def _gpu_operator(version: str) -> list[str]:
    props: dict[str, Any] = {"chart": charts.GPU_OPERATOR, "version": version}
    return check_gpu_operator_version(HELM_RELEASE, props, RULE["gpu-operator-version"].defaults)


def _lines(ended: bool) -> list[tuple[int, int]]:
    lines = vs.CHART_SUPPORT[charts.GPU_OPERATOR]
    return [line.line for line in lines if (line.status == vs.END_OF_SUPPORT) is ended]


@pytest.mark.parametrize("line", _lines(ended=True))
def test_a_gpu_operator_release_past_end_of_support_is_refused(line: tuple[int, int]) -> None:
    (problem,) = _gpu_operator(f"v{line[0]}.{line[1]}.9")
    assert (problem.key, problem.value) == ("version", f"v{line[0]}.{line[1]}.9")
    assert problem.fix.startswith(f"pin {vs.minimum_version(charts.GPU_OPERATOR)} or later")


@pytest.mark.parametrize("line", _lines(ended=False))
def test_every_gpu_operator_line_still_supported_passes(line: tuple[int, int]) -> None:
    assert _gpu_operator(f"v{line[0]}.{line[1]}.0") == []


def test_the_gpu_operator_minimum_is_the_newer_of_the_guide_and_the_support_floor() -> None:
    minimum = RULE["gpu-operator-version"].defaults["minVersion"]
    assert minimum == vs.minimum_version(charts.GPU_OPERATOR)
    assert version_at_least(minimum, vs.GUIDE_MINIMUMS[charts.GPU_OPERATOR])
    assert vs.chart_support(charts.GPU_OPERATOR, minimum) != vs.END_OF_SUPPORT


@pytest.mark.parametrize("chart", sorted(vs.GUIDE_MINIMUMS))
def test_each_pinned_chart_meets_the_minimum_its_policy_enforces(chart: str) -> None:
    minimum = vs.minimum_version(chart)
    assert minimum and version_at_least(charts.pinned(chart).version, minimum), (chart, minimum)


def test_supported_floor_is_the_first_release_of_the_oldest_line_not_past_end_of_support(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    lines = tuple(
        vs.SupportLine(line, status, "test", vs.CHECKED)
        for line, status in (((3, 1), vs.SUPPORTED), ((2, 9), vs.DEPRECATED), ((2, 4), vs.END_OF_SUPPORT))
    )
    monkeypatch.setattr(vs, "CHART_SUPPORT", {"some-chart": lines})
    assert vs.supported_floor("some-chart") == "2.9.0"
    assert vs.minimum_version("some-chart") == "2.9.0"
    assert vs.supported_floor("no-policy-chart") is None and vs.minimum_version("no-policy-chart") is None
