"""sparesPerUltraServer in the offline plan: Kueue's quota and the checks' sizes come from the active nodes only."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from helpers.stacks import stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.problems import ConfigError

KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
MPIJOB = "kubernetes:kubeflow.org/v2beta1:MPIJob"


def with_spares(spares: Any, stack: str = "gb200-x72", **group: Any) -> dict[str, Any]:
    """The stack's config with every GPU group holding ``spares``; the checks over every active node."""
    config = copy.deepcopy(stack_config(stack))
    config["ultraserver-eks:gpuNodeGroups"] = [
        {**g, "sparesPerUltraServer": spares, **group} for g in config["ultraserver-eks:gpuNodeGroups"]
    ]
    config["ultraserver-eks:imexCheck"] = {"enabled": True, "nodes": "all"}
    config["ultraserver-eks:ncclCheck"] = {"enabled": True}
    return config


def quota(plan: Any) -> dict[str, int]:
    (queue,) = plan.of_type(KUEUE + "ClusterQueue")
    flavor = queue.inputs["spec"]["resourceGroups"][0]["flavors"][0]
    return {r["name"]: r["nominalQuota"] for r in flavor["resources"]}


def workers(plan: Any) -> dict[str, int]:
    return {
        j.inputs["metadata"]["name"]: j.inputs["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"]
        for j in plan.of_type(MPIJOB)
    }


def test_two_spares_of_an_x72_leave_16_nodes_and_64_gpus_to_kueue_and_the_checks(plan_with: Any) -> None:
    config = with_spares(2)
    overrides = {k: config[k] for k in ("ultraserver-eks:gpuNodeGroups", "ultraserver-eks:imexCheck")}
    overrides["ultraserver-eks:ncclCheck"] = config["ultraserver-eks:ncclCheck"]
    spared, plain = (
        plan_with("gb200-x72", overrides),
        plan_with(
            "gb200-x72",
            {**overrides, "ultraserver-eks:gpuNodeGroups": with_spares(0)["ultraserver-eks:gpuNodeGroups"]},
        ),
    )
    # The whole UltraServer without spares: 18 nodes of 4 GPUs; two held back leave 16 nodes, 64 GPUs.
    assert quota(plain)["nvidia.com/gpu"] == 72
    assert quota(spared)["nvidia.com/gpu"] == 64
    per_node_efa = quota(plain)["vpc.amazonaws.com/efa"] // 18
    assert quota(spared)["vpc.amazonaws.com/efa"] == 16 * per_node_efa
    channels = [k for k in quota(spared) if "compute-domain" in k]
    assert channels and all(quota(spared)[k] == 16 for k in channels)
    assert set(workers(plain).values()) == {18}, workers(plain)
    assert set(workers(spared).values()) == {16}, workers(spared)
    # The node group itself still runs every instance: the spares are joined and checked.
    (group,) = [r for r in spared.of_type("aws:eks/nodeGroup:NodeGroup") if "nvl72" in r.name]
    assert group.inputs["scalingConfig"]["maxSize"] == 18


@pytest.mark.parametrize("spares", [18, 19])
def test_spares_must_leave_an_active_node_in_each_ultraserver(spares: int) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(with_spares(spares), stack="gb200-x72")
    (line,) = [str(p) for p in info.value.items]
    assert "gpuNodeGroups[0].sparesPerUltraServer" in line and f"{spares}" in line and "0 to 17" in line


def test_spares_count_against_the_nodes_a_group_runs_when_it_runs_fewer() -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(with_spares(4, desiredSize=4), stack="gb200-x72")
    assert "0 to 3" in str(info.value.items[0]) and "desiredSize" in str(info.value.items[0])
    settings = parse_settings(with_spares(3, desiredSize=4), stack="gb200-x72")
    assert settings.gpu_node_groups[0].active_nodes_per_ultraserver == 1


@pytest.mark.parametrize("bad", [-1, "two", 1.5, True])
def test_a_spare_count_that_is_not_a_count_is_refused_by_its_key(bad: Any) -> None:
    with pytest.raises(ConfigError) as info:
        parse_settings(with_spares(bad), stack="gb200-x72")
    assert "sparesPerUltraServer" in str(info.value.items[0])


def test_checks_asking_for_more_nodes_than_the_active_ones_are_refused() -> None:
    config = with_spares(2)
    config["ultraserver-eks:imexCheck"] = {"enabled": True, "nodes": 17}
    with pytest.raises(ConfigError) as info:
        parse_settings(config, stack="gb200-x72")
    assert "imexCheck.nodes" in str(info.value.items[0]) and "16" in str(info.value.items[0])


def test_plan_shows_the_spares_cost_per_block_beside_the_expected_replacement_time() -> None:
    from ultraserver.offline.groups import spare_lines

    settings = parse_settings(with_spares(2), stack="gb200-x72")
    window = settings.gpu_node_groups[0].blocks[0].window
    assert window is not None
    hours = (window.end - window.start).total_seconds() / 3600
    (line,) = spare_lines(settings).values()
    # Two idle nodes of 4 GPUs for the whole block.
    assert f"{2 * 4 * hours:.0f} GPU-hours per block" in line
    assert "within 3.8 min" in line and "checkpoint" in line
    assert spare_lines(parse_settings(with_spares(0), stack="gb200-x72")) == {}


def test_the_drain_cronjob_runs_the_spares_controller_and_may_publish_its_alerts(plan_with: Any) -> None:
    plan = plan_with("gb200-x72", {"ultraserver-eks:gpuNodeGroups": with_spares(2)["ultraserver-eks:gpuNodeGroups"]})
    (cron,) = [
        c for c in plan.of_type("kubernetes:batch/v1:CronJob") if c.inputs["metadata"]["name"] == "reclaim-drain"
    ]
    container = cron.inputs["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert json.loads(env["SPARES"]) == [{"group": "nvl72", "grouped": False, "reboot": False, "spares": 2}]
    assert "ALERT_TOPIC_ARN" in env and env["AWS_REGION"] == "us-east-1"
    maps = [m for m in plan.of_type("kubernetes:core/v1:ConfigMap") if m.inputs["metadata"]["name"] == "reclaim-drain"]
    assert "spares.py" in maps[0].inputs["data"]
