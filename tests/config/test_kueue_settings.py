"""kubernetes.kueue: on by default with GPU groups, namespaces checked, chart values keys checked."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers.stacks import STACKS, stack_config
from ultraserver.config.settings import parse_settings, settings_warnings
from ultraserver.config.views import kueue_enabled
from ultraserver.problems import ConfigError

KEY = "ultraserver-eks:kubernetes"


def with_kueue(kueue: dict[str, Any], stack: str = "gb200-x72") -> dict[str, Any]:
    config = copy.deepcopy(stack_config(stack))
    config[KEY] = {**(config.get(KEY) or {}), "kueue": kueue}
    return config


def problems(kueue: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as info:
        parse_settings(with_kueue(kueue), stack="gb200-x72")
    return "\n".join([str(p) for p in info.value.items])


@pytest.mark.parametrize("stack", STACKS)
def test_kueue_is_on_by_default_in_every_shipped_stack(stack: str) -> None:
    settings = parse_settings(stack_config(stack), stack=stack)
    assert settings.kubernetes.kueue.enabled is None and kueue_enabled(settings)
    assert settings.kubernetes.kueue.local_queue_namespaces == ("default",)


def test_kueue_follows_the_gpu_groups_unless_set() -> None:
    config = with_kueue({})
    config["ultraserver-eks:gpuNodeGroups"] = []
    assert not kueue_enabled(parse_settings(config, stack="gb200-x72"))
    assert not kueue_enabled(parse_settings(with_kueue({"enabled": False}), stack="gb200-x72"))
    settings = parse_settings(with_kueue({"localQueueNamespaces": ["team-a", "team-b"]}), stack="gb200-x72")
    assert settings.kubernetes.kueue.local_queue_namespaces == ("team-a", "team-b")


def test_namespaces_must_be_dns_labels_and_appear_once() -> None:
    text = problems({"localQueueNamespaces": ["Team_A"]})
    assert "ultraserver-eks:kubernetes.kueue.localQueueNamespaces[0]" in text and "Team_A" in text
    text = problems({"localQueueNamespaces": ["a", "a"]})
    assert "ultraserver-eks:kubernetes.kueue.localQueueNamespaces" in text and "each namespace once" in text


def test_kube_system_gets_no_local_queue_kueue_never_manages_it() -> None:
    text = problems({"localQueueNamespaces": ["default", "kube-system"]})
    assert "ultraserver-eks:kubernetes.kueue.localQueueNamespaces" in text and "kube-system" in text


def test_chart_values_keys_are_checked_like_the_other_releases() -> None:
    text = problems({"values": {"controllerManager": {"nodeSelectr": {"a": "b"}}}})
    assert "ultraserver-eks:kubernetes.kueue.values.controllerManager.nodeSelectr" in text
    settings = parse_settings(with_kueue({"values": {"controllerManager": {"replicas": 2}}}), stack="gb200-x72")
    assert settings.kubernetes.kueue.values == {"controllerManager": {"replicas": 2}}
    assert settings.kubernetes.kueue.settings_key == "ultraserver-eks:kubernetes.kueue"


def test_a_replaced_configuration_must_keep_the_mpijob_integration() -> None:
    config = "integrations:\n  frameworks:\n  - batch/job\n"
    text = problems({"values": {"managerConfig": {"controllerManagerConfigYaml": config}}})
    assert "managerConfig.controllerManagerConfigYaml" in text and "kubeflow.org/mpijob" in text
    text = problems({"values": {"managerConfig": {"controllerManagerConfigYaml": "- [not a mapping"}}})
    assert "not a YAML mapping" in text
    good = config + "  - kubeflow.org/mpijob\n"
    settings = parse_settings(
        with_kueue({"values": {"managerConfig": {"controllerManagerConfigYaml": good}}}), stack="gb200-x72"
    )
    # Without the excluded prefixes, jobs requesting CPU or memory would wait: a warning, not an error.
    (warning,) = [w for w in settings_warnings(settings) if "excludeResourcePrefixes" in str(w)]
    assert "cpu" in str(warning) and warning.level == "warning"
    full = good + "resources:\n  excludeResourcePrefixes: [cpu, memory, ephemeral-storage]\n"
    settings = parse_settings(
        with_kueue({"values": {"managerConfig": {"controllerManagerConfigYaml": full}}}), stack="gb200-x72"
    )
    assert not [w for w in settings_warnings(settings) if "kueue" in str(w)]


def test_a_replaced_configuration_enabling_pod_webhooks_is_warned_about() -> None:
    config = "integrations:\n  frameworks: [batch/job, kubeflow.org/mpijob, pod, deployment]\n"
    config += "resources:\n  excludeResourcePrefixes: [cpu, memory, ephemeral-storage]\n"
    settings = parse_settings(
        with_kueue({"values": {"managerConfig": {"controllerManagerConfigYaml": config}}}), stack="gb200-x72"
    )
    (warning,) = [w for w in settings_warnings(settings) if "fail closed" in str(w)]
    assert "'deployment', 'pod'" in str(warning) and warning.level == "warning"
