"""Values the toolkit sets exist in the pinned charts; bad user overrides are rejected with a clear message."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

import pytest
from ultraserver.builders.device_mode_values import gpu_operator_mode_values
from ultraserver.builders.helm_values import (
    deep_merge,
    dra_driver_values,
    efa_device_plugin_values,
    gpu_operator_values,
    kube_prometheus_stack_values,
)
from ultraserver.facts.hardware import devices
from ultraserver.facts.kubernetes.scheduling import GPU_TOLERATION
from ultraserver.facts.kubernetes.spares import SPARE_TOLERATION
from ultraserver.facts.pins import charts
from ultraserver.problems import ConfigError
from ultraserver.resources.helm_release import (
    DRA_DRIVER_RELEASE,
    EFA_DEVICE_PLUGIN_RELEASE,
    GPU_OPERATOR_RELEASE,
    ReleaseSettings,
    release_values,
)

SYSTEM = {"ultraserver.io/role": "system"}


def test_catalog_pins_the_documented_versions_and_repos() -> None:
    cat = charts.catalog()
    assert (cat[charts.GPU_OPERATOR].version, cat[charts.GPU_OPERATOR].repo) == (
        "v26.7.0",
        "https://helm.ngc.nvidia.com/nvidia",
    )
    # Renamed in 0.4.0 and published as an OCI chart (upgrade.md at tag v0.4.1).
    assert (cat[charts.DRA_DRIVER].version, cat[charts.DRA_DRIVER].repo) == (
        "0.4.1",
        "oci://registry.k8s.io/dra-driver-nvidia/charts",
    )
    assert charts.chart_reference(cat[charts.DRA_DRIVER]) == (
        "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu",
        None,
    )
    # eks-charts publishes this chart version with a leading v.
    assert (cat[charts.EFA_DEVICE_PLUGIN].version, cat[charts.EFA_DEVICE_PLUGIN].repo) == (
        "v0.5.30",
        "https://aws.github.io/eks-charts",
    )
    for entry in cat.values():
        assert len(entry.source_commit) == 40
        assert entry.open_maps <= entry.keys


@pytest.mark.parametrize(
    ("chart", "values"),
    [
        (charts.GPU_OPERATOR, gpu_operator_values(SYSTEM)),
        (charts.DRA_DRIVER, dra_driver_values(SYSTEM)),
        (charts.EFA_DEVICE_PLUGIN, efa_device_plugin_values()),
    ],
)
def test_every_toolkit_value_is_a_key_of_the_pinned_chart(chart: str, values: dict) -> None:
    assert values
    assert charts.unknown_value_paths(chart, values) == []


def test_gpu_operator_leaves_driver_and_toolkit_to_the_ami() -> None:
    values = gpu_operator_values(SYSTEM)
    assert values["driver"]["enabled"] is False
    assert values["toolkit"]["enabled"] is False
    assert values["migManager"]["enabled"] is False
    assert all(values[k]["enabled"] is True for k in ("devicePlugin", "nfd", "gfd"))
    assert GPU_TOLERATION in values["daemonsets"]["tolerations"]
    # A spare keeps its device plugin, GFD and DCGM exporter: the node-facts checks cover it.
    assert SPARE_TOLERATION in values["daemonsets"]["tolerations"]
    assert values["operator"]["nodeSelector"] == SYSTEM


@pytest.mark.parametrize("mode", ["plugins", "dra"])
def test_gpu_operator_never_deploys_its_own_experimental_dra_stack(mode: str) -> None:
    # Set explicitly, not left to the chart default: the toolkit runs the DRA driver as its own release.
    values = deep_merge(gpu_operator_values(SYSTEM), gpu_operator_mode_values(devices.DeviceMode(mode)))
    assert values["gpuCluster"] == {"deployCR": False}
    assert charts.unknown_value_paths(charts.GPU_OPERATOR, {"gpuCluster": {"deployCR": False}}) == []


def test_dra_driver_runs_controller_on_system_nodes_and_plugin_on_gpu_nodes() -> None:
    values = dra_driver_values(SYSTEM)
    assert values["resources"] == {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}}
    assert values["nvidiaDriverRoot"] == "/"
    controller = values["controller"]
    assert controller["tolerations"] == []
    assert controller["nodeSelector"] == SYSTEM
    terms = controller["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"
    ]
    assert terms == [{"matchExpressions": [{"key": "ultraserver.io/role", "operator": "In", "values": ["system"]}]}]
    plugin = values["kubeletPlugin"]
    assert plugin["tolerations"] == [GPU_TOLERATION, SPARE_TOLERATION]
    plugin_terms = plugin["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert plugin_terms["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}
    ]


def test_efa_plugin_tolerates_the_gpu_taint_and_a_spares() -> None:
    assert efa_device_plugin_values()["tolerations"] == [GPU_TOLERATION, SPARE_TOLERATION]


@pytest.mark.parametrize("selector", [{}, {"": "x"}, {"role": 3}])
def test_unusable_system_selector_is_a_config_error(selector: dict) -> None:
    with pytest.raises(ConfigError, match="system_node_selector"):
        gpu_operator_values(selector)


def test_unknown_keys_are_listed_with_their_full_path() -> None:
    values = {"driver": {"enabld": False}, "devicePlugin": {"enabled": True}, "nope": 1}
    assert sorted(charts.unknown_value_paths(charts.GPU_OPERATOR, values)) == ["driver.enabld", "nope"]


def test_a_scalar_key_given_a_map_is_checked_below_it() -> None:
    assert charts.unknown_value_paths(charts.DRA_DRIVER, {"logVerbosity": {"level": 4}}) == ["logVerbosity.level"]


def test_open_maps_accept_any_content() -> None:
    values = {
        "featureGates": {"IMEXDaemonsWithDNSNames": True, "AnyFutureGate": False},
        "controller": {"nodeSelector": {"a/b": "c"}, "affinity": {"podAntiAffinity": {}}},
    }
    assert charts.unknown_value_paths(charts.DRA_DRIVER, values) == []
    # The DRA chart's `resources` is a chart setting, not a Kubernetes resources object: it stays checked.
    assert charts.unknown_value_paths(charts.DRA_DRIVER, {"resources": {"limits": {}}}) == ["resources.limits"]
    # Read by the gpu-operator template although values.yaml does not list it.
    assert charts.unknown_value_paths(charts.GPU_OPERATOR, {"operator": {"nodeSelector": {"x": "y"}}}) == []


def test_bad_override_message_names_setting_chart_version_and_fix() -> None:
    settings = ReleaseSettings(values={"kubeletPlugin": {"tolerationz": []}}, settings_key="charts.draDriver.values")
    with pytest.raises(ConfigError) as err:
        release_values(DRA_DRIVER_RELEASE, dra_driver_values(SYSTEM), settings)
    message = str(err.value)
    assert "charts.draDriver.values" in message
    assert "'kubeletPlugin.tolerationz'" in message
    assert "dra-driver-nvidia-gpu 0.4.1" in message
    assert "did you mean 'kubeletPlugin.tolerations'" in message


def test_hint_lists_valid_siblings_when_nothing_is_close() -> None:
    with pytest.raises(ConfigError) as err:
        charts.check_values(charts.EFA_DEVICE_PLUGIN, {"image": {"zzzzzz": "x"}}, "efa values")
    assert "valid keys under 'image': repository, tag" in str(err.value)


def test_every_bad_key_is_reported_at_once() -> None:
    with pytest.raises(ConfigError) as err:
        charts.check_values(charts.GPU_OPERATOR, {"a": 1, "b": 2}, "gpu values")
    assert len([str(p) for p in err.value.items]) == 2


def test_null_override_is_rejected_because_pulumi_would_drop_it() -> None:
    settings = ReleaseSettings(values={"controller": {"affinity": None}})
    with pytest.raises(ConfigError, match="values.controller.affinity: got None; allowed: a value"):
        release_values(DRA_DRIVER_RELEASE, dra_driver_values(SYSTEM), settings)


def test_non_positive_timeout_is_rejected() -> None:
    with pytest.raises(ConfigError, match="timeout_seconds: got 0; allowed: a positive number of seconds"):
        release_values(EFA_DEVICE_PLUGIN_RELEASE, {}, ReleaseSettings.model_construct(timeout_seconds=0))


def test_user_override_is_merged_over_toolkit_values() -> None:
    override = {"daemonsets": {"tolerations": []}, "dcgmExporter": {"enabled": False}, "driver": {"version": "x"}}
    values = release_values(GPU_OPERATOR_RELEASE, gpu_operator_values(SYSTEM), ReleaseSettings(values=override))
    assert values["daemonsets"]["tolerations"] == []
    assert values["dcgmExporter"] == {"enabled": False, "serviceMonitor": {"enabled": False}}
    assert values["driver"] == {"enabled": False, "version": "x"}


def test_other_version_skips_the_key_check() -> None:
    settings = ReleaseSettings(version="v25.10.0", values={"newKeyIn2510": True})
    assert release_values(GPU_OPERATOR_RELEASE, {}, settings) == {"newKeyIn2510": True}


def test_deep_merge_merges_maps_replaces_lists_and_leaves_inputs_alone() -> None:
    base: dict[str, Any] = {"a": {"b": 1, "c": [1, 2]}, "d": 1}
    merged = deep_merge(base, {"a": {"c": [3], "e": {"f": 1}}, "d": {"g": 2}})
    assert merged == {"a": {"b": 1, "c": [3], "e": {"f": 1}}, "d": {"g": 2}}
    assert base == {"a": {"b": 1, "c": [1, 2]}, "d": 1}
    merged["a"]["c"].append(9)
    assert base["a"]["c"] == [1, 2]


def test_dcgm_exporter_is_on_and_its_service_monitor_only_on_request() -> None:
    assert gpu_operator_values(SYSTEM)["dcgmExporter"] == {"enabled": True, "serviceMonitor": {"enabled": False}}
    with_stack = gpu_operator_values(SYSTEM, service_monitor=True)
    assert with_stack["dcgmExporter"]["serviceMonitor"] == {"enabled": True}
    assert charts.unknown_value_paths(charts.GPU_OPERATOR, with_stack) == []


def test_prometheus_stack_is_pinned_with_its_repo_and_selects_every_service_monitor() -> None:
    pin = charts.pinned(charts.KUBE_PROMETHEUS_STACK)
    assert (pin.version, pin.repo) == ("88.5.3", "https://prometheus-community.github.io/helm-charts")
    values = kube_prometheus_stack_values(SYSTEM)
    assert charts.unknown_value_paths(charts.KUBE_PROMETHEUS_STACK, values) == []
    # Its own keys are checked; those of dependencies fetched when it is packaged (grafana ...) are open.
    typo = {"grafana": {"anything": 1}, "prometheus": {"prometheusSpec": {"nodeSelectr": {}}}}
    assert charts.unknown_value_paths(charts.KUBE_PROMETHEUS_STACK, typo) == ["prometheus.prometheusSpec.nodeSelectr"]
    assert values["prometheus"]["prometheusSpec"]["serviceMonitorSelectorNilUsesHelmValues"] is False
    assert values["prometheusOperator"]["nodeSelector"] == SYSTEM


def test_a_chart_read_at_a_release_tag_is_pinned_at_that_tags_version() -> None:
    """A chart pinned from a git copy names the release tag it was read at: a version that was never released (like
    kube-prometheus-stack 81.4.5, only on a pull-request ref) has no tag."""
    raw = json.loads(resources.files("ultraserver.facts").joinpath("data/chart_keys.json").read_text())
    tagged = {name: e for name, e in raw["charts"].items() if e["source"].get("tag")}
    assert charts.KUBE_PROMETHEUS_STACK in tagged
    for name, entry in tagged.items():
        assert entry["source"]["tag"].rsplit("-", 1)[-1].lstrip("v") == entry["version"].lstrip("v"), name
