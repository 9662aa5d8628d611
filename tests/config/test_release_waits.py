"""atomic on a release with DaemonSets on every GPU node is refused at plan time: Helm would wait despite skipAwait."""

from __future__ import annotations

import pytest
from helpers.stacks import stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.problems import ConfigError


def settings_with(kubernetes: dict) -> None:
    config = dict(stack_config("gb200-x72"))
    config["ultraserver-eks:kubernetes"] = kubernetes
    parse_settings(config)


@pytest.mark.parametrize("release", ["gpuOperator", "draDriver", "efaDevicePlugin"])
def test_atomic_on_a_gpu_node_release_is_refused(release: str) -> None:
    with pytest.raises(ConfigError, match=rf"kubernetes\.{release}\.atomic.*install\.go:289"):
        settings_with({release: {"atomic": True}})


def test_atomic_stays_allowed_where_the_release_waits_on_system_nodes() -> None:
    settings_with({"kueue": {"atomic": True}, "gpuOperator": {"atomic": False}})
