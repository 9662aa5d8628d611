"""The EFA check's MPIJob: workers over distinct UltraServers, whole nodes with every EFA device, EFA-only NCCL."""

from __future__ import annotations

import copy
import shlex

import pytest
from helpers.stacks import stack_config
from ultraserver.builders.efa_check import (
    EfaCheckArgs,
    efa_check_args,
    efa_mpijob_manifest,
    launcher_command,
)
from ultraserver.config.settings import parse_settings
from ultraserver.facts.hardware.devices import DeviceMode, NodeDevices
from ultraserver.facts.pins.manifests import NCCL_TESTS_IMAGE
from ultraserver.problems import ConfigError


def settings_with(stack: str, efa_check: dict | None = None):  # type: ignore[no-untyped-def]
    config = copy.deepcopy(stack_config(stack))
    if efa_check is not None:
        config["ultraserver-eks:efaCheck"] = efa_check
    return parse_settings(config, stack=stack)


def test_multi_stack_checks_efa_across_two_ultraservers_of_one_layout() -> None:
    args = efa_check_args(settings_with("gb200-multi"), DeviceMode())
    assert args is not None
    # The fleet (8 UltraServers, one-per-nci-group: 4 EFA devices) is the largest set sharing one layout.
    assert args.node_groups == ["fleet"] and args.efa_devices == 4
    assert args.min_bus_bandwidth_gbps == 800.0  # 1600 Gbit/s x 0.5
    assert (args.ultraservers, args.nodes_per_ultraserver, args.workers) == (2, 1, 2)


def test_single_ultraserver_stack_has_no_efa_check_by_default() -> None:
    assert efa_check_args(settings_with("gb200-x72"), DeviceMode()) is None


def test_enabling_it_on_one_ultraserver_is_an_error_naming_the_key() -> None:
    with pytest.raises(
        ConfigError, match=r"ultraserver-eks:efaCheck.ultraservers: got 2; allowed: at most the stack's 1 UltraServers"
    ):
        efa_check_args(settings_with("gb200-x72", {"enabled": True}), DeviceMode())


def test_settings_override_counts_and_threshold() -> None:
    args = efa_check_args(
        settings_with("gb200-multi", {"ultraservers": 4, "nodesPerUltraserver": 2, "minBusBandwidthGbps": 1000}),
        DeviceMode(),
    )
    assert args is not None and (args.workers, args.min_bus_bandwidth_gbps) == (8, 1000.0)
    assert efa_check_args(settings_with("gb200-multi", {"enabled": False}), DeviceMode()) is None


def test_bad_efa_check_settings_are_rejected() -> None:
    with pytest.raises(ConfigError) as err:
        settings_with("gb200-multi", {"ultraservers": 1, "nodesPerUltraserver": 0, "minBusBandwidthGbps": "fast"})
    text = str(err.value)
    assert "efaCheck.ultraservers: got 1" in text
    assert "efaCheck.nodesPerUltraserver: got 0" in text
    assert "efaCheck.minBusBandwidthGbps: got 'fast'" in text


def test_manifest_requests_whole_nodes_spreads_over_cliques_and_logs_the_network() -> None:
    job = efa_mpijob_manifest(
        EfaCheckArgs(
            node_groups=["fleet"],
            node_devices=NodeDevices(
                "p6e-gb200.36xlarge",
                4,
                (1, 1, 1, 1),
            ),
            min_bus_bandwidth_gbps=800.0,
        )
    )
    spec = job["spec"]
    assert spec["runPolicy"] == {"cleanPodPolicy": "Running", "backoffLimit": 2}
    worker = spec["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 2
    (container,) = worker["template"]["spec"]["containers"]
    assert container["image"] == NCCL_TESTS_IMAGE
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 4, "vpc.amazonaws.com/efa": 4}
    (spread,) = worker["template"]["spec"]["topologySpreadConstraints"]
    assert (spread["topologyKey"], spread["minDomains"], spread["maxSkew"]) == ("nvidia.com/gpu.clique", 2, 1)
    assert "resourceClaims" not in worker["template"]["spec"]  # no IMEX channel: no MNNVL between nodes
    launcher = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]
    (script,) = launcher["args"]
    assert script.startswith("/opt/amazon/openmpi/bin/mpirun --allow-run-as-root --map-by ppr:1:node -np 2 /bin/sh")
    args = launcher_command(
        EfaCheckArgs(
            node_groups=["fleet"],
            node_devices=NodeDevices(
                "p6e-gb200.36xlarge",
                4,
                (1, 1, 1, 1),
            ),
            min_bus_bandwidth_gbps=800.0,
        )
    )
    assert f"exec {shlex.join(args)}" in script
    assert args[args.index("-np") + 1] == "8"
    for env in ("NCCL_DEBUG=INFO", "FI_PROVIDER=efa", "NCCL_MNNVL_ENABLE=0"):
        assert env in args
    perf = args.index("/opt/nccl-tests/build/all_reduce_perf")
    assert args[perf + 1 : perf + 5] == ["-b", "1G", "-e", "16G"]


def test_manifest_rejects_a_single_ultraserver() -> None:
    with pytest.raises(ConfigError, match="efa_check.ultraservers"):
        efa_mpijob_manifest(
            EfaCheckArgs(
                node_groups=["a"],
                node_devices=NodeDevices(
                    "p6e-gb200.36xlarge",
                    4,
                    (1, 1, 1, 1),
                ),
                min_bus_bandwidth_gbps=8,
                ultraservers=1,
            )
        )
