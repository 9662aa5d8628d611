"""Every values key the toolkit sets for a chart is read by one of the chart's templates at the pinned version.

A key no template reads does nothing (a renamed or removed value keeps "working" silently). The reads are derived
from the templates by scripts/regen_upstream_fixtures.py into facts/data/chart_template_reads.json.
"""

from __future__ import annotations

from typing import Any

import pytest
from ultraserver.builders.device_mode_values import dra_driver_mode_values, dranet_values, gpu_operator_mode_values
from ultraserver.builders.helm_values import (
    deep_merge,
    dra_driver_values,
    efa_device_plugin_values,
    gpu_operator_values,
    kube_prometheus_stack_values,
)
from ultraserver.builders.kueue import kueue_values
from ultraserver.builders.node_termination import QUEUE_URL_KEY, handler_values
from ultraserver.facts import chart_templates, charts, devices

SYSTEM = {"ultraserver.io/role": "system"}

BUILT: list[tuple[str, str, dict[str, Any]]] = [
    *(
        (
            f"{charts.GPU_OPERATOR} {mode}",
            charts.GPU_OPERATOR,
            deep_merge(gpu_operator_values(SYSTEM, service_monitor=True), gpu_operator_mode_values(mode)),
        )
        for mode in devices.MODES
    ),
    *(
        (
            f"{charts.DRA_DRIVER} {mode}",
            charts.DRA_DRIVER,
            deep_merge(dra_driver_values(SYSTEM), dra_driver_mode_values(mode)),
        )
        for mode in devices.MODES
    ),
    (charts.EFA_DEVICE_PLUGIN, charts.EFA_DEVICE_PLUGIN, efa_device_plugin_values()),
    (charts.DRANET, charts.DRANET, dranet_values()),
    (
        charts.NODE_TERMINATION_HANDLER,
        charts.NODE_TERMINATION_HANDLER,
        {**handler_values("us-east-1", SYSTEM), QUEUE_URL_KEY: "https://sqs.us-east-1.amazonaws.com/1/q"},
    ),
    (charts.KUEUE, charts.KUEUE, kueue_values(SYSTEM, unmanaged_namespaces=["kube-system"])),
    (charts.KUBE_PROMETHEUS_STACK, charts.KUBE_PROMETHEUS_STACK, kube_prometheus_stack_values(SYSTEM)),
]


@pytest.mark.parametrize(("chart", "values"), [(c, v) for _, c, v in BUILT], ids=[i for i, _, _ in BUILT])
def test_every_key_the_toolkit_sets_is_read_by_a_template(chart: str, values: dict[str, Any]) -> None:
    unread = chart_templates.unread_paths(chart, values)
    assert unread == [], f"{chart} {charts.pinned(chart).version}: no template reads {', '.join(unread)}"


def test_the_reads_are_of_each_charts_pinned_version() -> None:
    reads = chart_templates.template_reads()
    assert {c for _, c, _ in BUILT} <= set(reads)
    for chart, entry in reads.items():
        assert entry.version == charts.pinned(chart).version, chart
        assert entry.source["commit"] and entry.source["path"], chart


def test_a_key_no_template_reads_is_named() -> None:
    values = {"driver": {"enabled": False, "notAValue": 1}, "toolkit": {"enabled": False}}
    assert chart_templates.unread_paths(charts.GPU_OPERATOR, values) == ["driver.notAValue"]


def test_a_map_read_whole_covers_its_content_and_a_subchart_map_is_followed() -> None:
    reads = chart_templates.template_reads()[charts.GPU_OPERATOR]
    # templates/operator.yaml: `with .Values.operator.nodeSelector` then toYaml of `.`.
    assert "operator.nodeSelector" in reads.whole
    values = {"operator": {"nodeSelector": {"any/label": "x"}}, "daemonsets": {"tolerations": [{"key": "k"}]}}
    assert chart_templates.unread_paths(charts.GPU_OPERATOR, values) == []
    # The node-feature-discovery subchart's templates read its keys under the subchart's name.
    subchart = {"node-feature-discovery": {"master": {"nodeSelector": {"a": "b"}, "notAValue": 1}}}
    assert chart_templates.unread_paths(charts.GPU_OPERATOR, subchart) == ["node-feature-discovery.master.notAValue"]
