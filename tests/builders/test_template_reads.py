"""Every values key the toolkit sets for a chart is read by one of the chart's templates at the pinned version.

A key no template reads does nothing (a renamed or removed value keeps "working" silently). The reads are derived
from the templates by scripts/regen_upstream_fixtures.py into facts/data/chart_template_reads.json.
"""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest
from helpers.stacks import STACKS, stack_config
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
from ultraserver.config.settings import parse_settings, settings_warnings
from ultraserver.facts.hardware import devices
from ultraserver.facts.pins import chart_templates, charts

SYSTEM = {"ultraserver.io/role": "system"}
TODAY = date(2026, 11, 25)

BUILT: list[tuple[str, str, dict[str, Any]]] = [
    *(
        (
            f"{charts.GPU_OPERATOR} {mode}",
            charts.GPU_OPERATOR,
            deep_merge(
                gpu_operator_values(SYSTEM, service_monitor=True), gpu_operator_mode_values(devices.DeviceMode(mode))
            ),
        )
        for mode in devices.MODES
    ),
    *(
        (
            f"{charts.DRA_DRIVER} {mode}",
            charts.DRA_DRIVER,
            deep_merge(dra_driver_values(SYSTEM), dra_driver_mode_values(devices.DeviceMode(mode))),
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


def test_the_plan_warns_on_a_value_no_template_reads_and_not_on_one_they_read() -> None:
    # kueue 0.19.2: values.yaml has metricsService.labels, but no template reads it (the chart's
    # kueue.metricsService.labels helper builds its own labels); controllerManager.replicas is read.
    reads = chart_templates.template_reads()[charts.KUEUE]
    assert "metricsService.labels" in charts.pinned(charts.KUEUE).keys and not reads.reads("metricsService.labels")
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:kubernetes"] = {
        "kueue": {"values": {"metricsService": {"labels": {"team": "ml"}}, "controllerManager": {"replicas": 3}}}
    }
    warnings = [str(w) for w in settings_warnings(parse_settings(config, stack="gb200-x72"), TODAY)]
    unread = [w for w in warnings if "no template reads it" in w]
    assert len(unread) == 1 and unread[0].startswith("ultraserver-eks:kubernetes.kueue.values.metricsService.labels")


def test_the_shipped_stacks_set_no_value_no_template_reads() -> None:
    for stack in STACKS:
        warnings = settings_warnings(parse_settings(stack_config(stack), stack=stack), TODAY)
        assert not [w for w in warnings if "no template reads it" in str(w)], stack
