"""`kubernetes.chartMirror`: every Helm release pulls its chart from the mirror (the Release's chart and
repositoryOpts), at its pinned version; a mirror that is not an https:// or oci:// URL is refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import date
from typing import Any

import pytest
from helpers.stacks import stack_config
from ultraserver.config.settings import KubernetesSettings, parse_settings
from ultraserver.facts.pins import charts
from ultraserver.offline import Plan
from ultraserver.offline.resource import HELM_RELEASE
from ultraserver.policy.device_mode import dra_mode
from ultraserver.policy.kueue import kueue_configuration
from ultraserver.policy.model import releases_of
from ultraserver.problems import ConfigError

KUBERNETES = "ultraserver-eks:kubernetes"
# gb200-x36: self-managed nodes, so the Node Termination Handler too; OCI (Kueue, DRA driver) and https charts.
STACK = "gb200-x36"


def releases(plan_with: Callable[..., Plan], mirror: str | None) -> dict[str, dict[str, Any]]:
    """Chart name -> the Release's inputs, with ``mirror`` as the stack's chartMirror (None: unset)."""
    kubernetes = dict(stack_config(STACK).get(KUBERNETES) or {})
    if mirror is not None:
        kubernetes["chartMirror"] = mirror
    plan = plan_with(STACK, {"kubernetes": json.dumps(kubernetes)})
    found = {}
    for release in plan.of_type(HELM_RELEASE):
        found[str(release.inputs["chart"]).rpartition("/")[2]] = release.inputs
    return found


def test_an_https_mirror_serves_every_chart_by_name(plan_with: Callable[..., Plan]) -> None:
    mirror = "https://charts.example.com/mirror"
    found = releases(plan_with, mirror)
    assert {charts.KUEUE, charts.DRA_DRIVER, charts.GPU_OPERATOR, charts.NODE_TERMINATION_HANDLER} <= set(found)
    for name, inputs in found.items():
        # OCI charts too: the mirror is a Helm repository holding each chart under its name.
        assert inputs["chart"] == name and inputs["repositoryOpts"] == {"repo": mirror}, name
        assert inputs["version"] == charts.pinned(name).version


def test_an_oci_mirror_holds_each_chart_under_its_path(plan_with: Callable[..., Plan]) -> None:
    mirror = "oci://123456789012.dkr.ecr.us-east-1.amazonaws.com/helm-mirror"
    found = releases(plan_with, mirror)
    for name, inputs in found.items():
        assert inputs["chart"] == f"{mirror}/{name}" and "repositoryOpts" not in inputs, name
        assert inputs["version"] == charts.pinned(name).version


def test_without_a_mirror_each_chart_comes_from_its_own_repository(plan_with: Callable[..., Plan]) -> None:
    for name, inputs in releases(plan_with, None).items():
        chart, repo = charts.chart_reference(charts.pinned(name))
        assert inputs["chart"] == chart and inputs.get("repositoryOpts", {}).get("repo") == repo, name


def test_a_program_gets_the_mirror_on_every_release_of_its_kubernetes_settings() -> None:
    settings = KubernetesSettings(chart_mirror="oci://registry.example.com/charts")
    for field in ("gpu_operator", "dra_driver", "efa_device_plugin", "dranet", "node_termination_handler", "kueue"):
        assert getattr(settings, field).chart_mirror == "oci://registry.example.com/charts", field
    assert "chartMirror" not in json.dumps(settings.gpu_operator.model_dump(by_alias=True))


@pytest.mark.parametrize(
    "mirror",
    [
        "http://charts.example.com",  # no TLS
        "charts.example.com",
        "s3://bucket/charts",
        "oci://registry.example.com/charts\n",
        "https://ch\u0430rts.example.com",  # a Cyrillic a
        "https://charts.example.com/a b",
    ],
)
def test_a_mirror_that_is_not_an_https_or_oci_url_is_refused(mirror: str) -> None:
    config = dict(stack_config(STACK))
    config[KUBERNETES] = {**(config.get(KUBERNETES) or {}), "chartMirror": mirror}
    with pytest.raises(ConfigError) as refused:
        parse_settings(config, today=date(2026, 11, 23))
    (problem,) = refused.value.items
    assert problem.key.endswith("kubernetes.chartMirror") and "an https:// Helm repository URL" in problem.allowed


@pytest.mark.parametrize("mirror", ["https://charts.example.com/mirror", "oci://registry.example.com/charts"])
def test_the_policies_find_the_releases_of_a_mirrored_plan(plan_with: Callable[..., Plan], mirror: str) -> None:
    kubernetes = dict(stack_config("gb200-x72-dra").get(KUBERNETES) or {})
    plain = plan_with("gb200-x72-dra", {"kubernetes": json.dumps(kubernetes)}).resources
    mirrored = plan_with("gb200-x72-dra", {"kubernetes": json.dumps({**kubernetes, "chartMirror": mirror})}).resources
    # Kueue's configuration (admission replay, TAS placement), DRA mode (DRANET) and Kueue's presence are read from
    # the Releases whatever form their chart reference takes.
    assert kueue_configuration(plain) is not None and kueue_configuration(mirrored) == kueue_configuration(plain)
    assert dra_mode(mirrored) and dra_mode(plain)
    for chart in (charts.KUEUE, charts.DRANET, charts.GPU_OPERATOR):
        assert len(releases_of(mirrored, chart)) == len(releases_of(plain, chart)) == 1, chart
