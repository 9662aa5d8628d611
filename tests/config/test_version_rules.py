"""Stacks stay on the tested version set: chart and add-on overrides outside it are refused, or warned when accepted."""

from __future__ import annotations

import copy
import dataclasses
from datetime import date
from typing import Any

import pytest
from helpers.cli import run_main
from helpers.stacks import STACKS, stack_config
from ultraserver.config.settings import parse_settings, settings_warnings
from ultraserver.config.version_rules import chart_kubernetes_versions
from ultraserver.config.views import installed_releases
from ultraserver.facts.pins import addons, charts
from ultraserver.problems import ConfigError

TODAY = date(2026, 11, 25)


def _config(**sections: Any) -> dict[str, Any]:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config.update({f"ultraserver-eks:{k}": v for k, v in sections.items()})
    return config


def test_a_chart_version_outside_the_set_is_refused_listing_the_known_versions() -> None:
    pinned = charts.pinned(charts.KUEUE).version
    with pytest.raises(ConfigError) as err:
        parse_settings(_config(kubernetes={"kueue": {"version": "0.13.0"}}), today=TODAY)
    text = str(err.value)
    assert "ultraserver-eks:kubernetes.kueue.version: got '0.13.0'" in text
    assert f"tested version set: {pinned}" in text and "acceptUntestedVersions: true" in text


def test_the_pinned_chart_version_written_out_is_accepted_with_or_without_a_v() -> None:
    pinned = charts.pinned(charts.GPU_OPERATOR).version
    other_form = pinned[1:] if pinned.startswith("v") else f"v{pinned}"
    for version in (pinned, other_form):
        settings = parse_settings(_config(kubernetes={"gpuOperator": {"version": version}}), today=TODAY)
        assert not [w for w in settings_warnings(settings, TODAY) if "gpuOperator.version" in str(w)]


def test_accepting_untested_versions_turns_the_refusal_into_a_warning() -> None:
    config = _config(kubernetes={"kueue": {"version": "0.13.0"}}, addons={"coredns": "v1.11.1-eksbuild.9"})
    config["ultraserver-eks:acceptUntestedVersions"] = True
    warnings = [str(w) for w in settings_warnings(parse_settings(config, today=TODAY), TODAY)]
    assert any("kueue.version: got '0.13.0'" in w and "accepted as untested" in w for w in warnings)
    assert any("addons.coredns: got 'v1.11.1-eksbuild.9'" in w for w in warnings)


def test_an_add_on_version_outside_the_set_names_the_pin_of_the_cluster_minor() -> None:
    with pytest.raises(ConfigError) as err:
        parse_settings(_config(addons={"kubeProxy": "v1.33.10-eksbuild.2"}), today=TODAY)
    text = str(err.value)
    assert "addons.kubeProxy: got 'v1.33.10-eksbuild.2'" in text
    assert addons.pinned_version(addons.KUBE_PROXY, "1.35") in text


def test_the_pinned_add_on_version_is_accepted() -> None:
    pin = addons.pinned_version(addons.COREDNS, "1.35")
    settings = parse_settings(_config(addons={"coredns": pin}), today=TODAY)
    assert settings.addons.coredns == pin


def _constrain(monkeypatch: pytest.MonkeyPatch, chart: str, constraint: str) -> None:
    """Give one pinned chart another Chart.yaml kubeVersion for the test."""
    changed = charts.catalog() | {chart: dataclasses.replace(charts.pinned(chart), kube_version=constraint)}
    monkeypatch.setattr(charts, "catalog", lambda: changed)


def test_a_kubernetes_version_outside_an_installed_charts_kube_version_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _constrain(monkeypatch, charts.GPU_OPERATOR, ">=1.25.0-0 <1.35.0-0")
    with pytest.raises(ConfigError) as err:
        parse_settings(_config(), today=TODAY)
    text = str(err.value)
    pinned = charts.pinned(charts.GPU_OPERATOR).version
    assert "ultraserver-eks:cluster.kubernetesVersion: got '1.35'" in text
    assert (
        f"chart gpu-operator {pinned} accepts (its Chart.yaml kubeVersion '>=1.25.0-0 <1.35.0-0'): 1.33, 1.34" in text
    )
    assert 'fix: set kubernetesVersion: "1.34"' in text


def test_a_kube_version_without_a_pre_release_is_refused_on_eks(monkeypatch: pytest.MonkeyPatch) -> None:
    _constrain(monkeypatch, charts.EFA_DEVICE_PLUGIN, ">= 1.25.0")
    with pytest.raises(ConfigError) as err:
        parse_settings(_config(), today=TODAY)
    text = str(err.value)
    assert "kubeVersion '>= 1.25.0'): none the toolkit pins; EKS reports its version as a SemVer pre-release" in text
    assert "use a toolkit release whose aws-efa-k8s-device-plugin chart supports this Kubernetes version" in text


def test_the_plan_refuses_it_with_exit_2_and_no_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    _constrain(monkeypatch, charts.KUEUE, ">=1.36.0-0")
    result = run_main("plan", "--stack", "gb200-x72")
    assert result.code == 2
    assert (
        "cluster.kubernetesVersion" in result.stderr + result.stdout and "chart kueue" in result.stderr + result.stdout
    )
    assert "Traceback" not in result.stderr + result.stdout


def test_a_chart_the_stack_does_not_install_is_not_held_against_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # gb200-x72 runs the device plugins (no DRANET), has no self-managed groups (no NTH) and no Prometheus stack.
    for chart in (charts.DRANET, charts.NODE_TERMINATION_HANDLER, charts.KUBE_PROMETHEUS_STACK):
        _constrain(monkeypatch, chart, "<1.16.0-0")
    settings = parse_settings(_config(), today=TODAY)
    assert chart_kubernetes_versions(settings, TODAY) == []
    with pytest.raises(ConfigError, match="chart kube-prometheus-stack"):
        parse_settings(_config(kubernetes={"prometheusStack": {"enabled": True}}), today=TODAY)


def test_an_overridden_chart_version_is_left_to_the_untested_version_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    _constrain(monkeypatch, charts.KUEUE, ">=1.36.0-0")
    config = _config(kubernetes={"kueue": {"version": "0.19.3"}})
    config["ultraserver-eks:acceptUntestedVersions"] = True
    assert chart_kubernetes_versions(parse_settings(config, today=TODAY), TODAY) == []


@pytest.mark.parametrize("stack", STACKS)
def test_the_shipped_stacks_run_charts_that_accept_their_kubernetes_version(stack: str) -> None:
    settings = parse_settings(stack_config(stack), stack=stack, today=TODAY)
    assert installed_releases(settings)
    assert chart_kubernetes_versions(settings, TODAY) == []


@pytest.mark.parametrize("version", ["25.8.0", "25.12.0", "v25.3.2", "0.3.0"])
def test_the_dra_driver_cannot_go_back_to_the_old_chart_even_untested(version: str) -> None:
    """The chart was renamed at 0.4.0 (calendar versions 25.x before) and 0.4.0 is forward-only (upgrade.md)."""
    config = _config(kubernetes={"draDriver": {"version": version}})
    config["ultraserver-eks:acceptUntestedVersions"] = True
    with pytest.raises(ConfigError) as err:
        parse_settings(config, today=TODAY)
    text = str(err.value)
    assert f"ultraserver-eks:kubernetes.draDriver.version: got {version!r}" in text
    assert "0.4.0 or later" in text and "docs/dra-driver-upgrade.md" in text


def test_a_newer_dra_driver_release_is_only_untested() -> None:
    config = _config(kubernetes={"draDriver": {"version": "0.5.0"}})
    config["ultraserver-eks:acceptUntestedVersions"] = True
    warnings = [str(w) for w in settings_warnings(parse_settings(config, today=TODAY), TODAY)]
    assert any("draDriver.version: got '0.5.0'" in w and "accepted as untested" in w for w in warnings)


def test_kubernetes_below_the_dra_drivers_prerequisite_warns() -> None:
    config = _config()
    config["ultraserver-eks:cluster"]["kubernetesVersion"] = "1.33"
    warned = [str(w) for w in settings_warnings(parse_settings(config, today=TODAY), TODAY)]
    assert any("cluster.kubernetesVersion: got '1.33'" in w and "v1.34.2+" in w for w in warned)
    shipped = [str(w) for w in settings_warnings(parse_settings(_config(), today=TODAY), TODAY)]
    assert not any("v1.34.2+" in w for w in shipped)
