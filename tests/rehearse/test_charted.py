"""The rehearsal serves the DeviceClasses and kubelet plugin pods the plan's charts make, not what verify expects.

Its rules over the values (rehearse/charted.py, facts/hardware/devices.py) are held here to the packaged charts as a
real Helm renders them, value by value.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from helpers.render import helm_and_charts
from helpers.stacks import ROOT, stack_config
from ultraserver import clock
from ultraserver.builders.helm_values import deep_merge
from ultraserver.config.settings import parse_settings
from ultraserver.facts.pins.charts import DRA_DRIVER, DRANET
from ultraserver.offline import served_apis
from ultraserver.offline.engine import run_plan
from ultraserver.offline.helm_template import ReleaseInput, Templater, parse, release_inputs
from ultraserver.rehearse.charted import from_rendered, from_values
from ultraserver.rehearse.report import format_rehearsal
from ultraserver.rehearse.run import default_moment, rehearse
from ultraserver.verify.expect import expectation
from ultraserver.verify.verdict import DEVICE_CLASSES, NODE_FACTS

CD_OFF = {"resources": {"computeDomains": {"enabled": False}}}


def _release(shipped_plan: Any, chart: str) -> ReleaseInput:
    return next(r for r in release_inputs(shipped_plan("gb200-x72-dra")) if r.chart == chart)


@pytest.mark.parametrize(
    ("chart", "override"),
    [
        (DRA_DRIVER, {}),
        (DRA_DRIVER, CD_OFF),
        (DRA_DRIVER, {"resources": {"gpus": {"enabled": False}}}),
        (DRA_DRIVER, {"resources": {"gpus": {"enabled": False}, "computeDomains": {"enabled": False}}}),
        (DRA_DRIVER, {"nameOverride": ""}),
        (DRA_DRIVER, {"selectorLabelsOverride": {"app": "plugin"}, "namespaceOverride": "elsewhere"}),
        (DRANET, {}),
        (DRANET, {"deviceClass": {"create": False}}),
        (DRANET, {"deviceClass": {"name": "efa.example.com"}}),
    ],
)
def test_the_rules_give_what_the_packaged_chart_renders(shipped_plan: Any, chart: str, override: dict) -> None:
    helm, charts = helm_and_charts()
    planned = _release(shipped_plan, chart)
    release = dataclasses.replace(planned, values=deep_merge(dict(planned.values), override))
    templater = Templater(helm, charts, "1.35")
    flag = served_apis.api_versions_flag(served_apis.builtin_apis("1.35"))
    rendered = from_rendered([o.body for o in parse(templater.text(release, release.values, flag))])
    derived = from_values([release])
    assert sorted(derived.device_classes) == sorted(rendered.device_classes)
    assert derived.kubelet_plugin == rendered.kubelet_plugin


def test_compute_domains_turned_off_in_the_dra_chart_do_not_rehearse_green() -> None:
    overrides = {"ultraserver-eks:kubernetes": {"draDriver": {"values": CD_OFF}}}
    settings = parse_settings({**stack_config("gb200-x72"), **overrides})
    moment = default_moment(expectation(settings))
    with clock.pinned(moment):
        plan = run_plan(ROOT, "gb200-x72", overrides, now=moment)
    rehearsal = rehearse(ROOT, "gb200-x72", settings, [], moment, plan)
    assert rehearsal.code == 1, format_rehearsal(rehearsal)
    verdicts = {(v.ultraserver, v.check): v for v in rehearsal.stages[0].verdicts}
    classes = verdicts[("cluster", DEVICE_CLASSES)]
    assert not classes.passed and "compute-domain-default-channel.nvidia.com" in str(classes.problems)
    # In plugins mode the toolkit turns the DRA driver's GPUs off: with ComputeDomains off too, the chart renders no
    # kubelet plugin, and no GPU node has its plugin pod.
    assert not verdicts[("nvl72", NODE_FACTS)].passed
