"""IMEX check inputs: one nvbandwidth job per UltraServer."""

from __future__ import annotations

import pytest
from ultraserver.builders.nvbandwidth_job import launcher_command, mpijob_manifest
from ultraserver.config.views import ImexTarget
from ultraserver.problems import ConfigError
from ultraserver.resources.imex_check import ImexCheckArgs, job_args


def test_job_args_one_job_per_ultraserver() -> None:
    args = ImexCheckArgs(
        targets=[ImexTarget("us0", {"us": "0"}, 9), ImexTarget("us1", {"us": "1"}, 18)],
        nodes=4,
        launcher_node_selector={"role": "system"},
    )
    jobs = job_args(args)
    assert [(j.name, j.max_nodes, dict(j.worker_node_selector)) for j in jobs] == [
        ("nvbandwidth-us0", 9, {"us": "0"}),
        ("nvbandwidth-us1", 18, {"us": "1"}),
    ]
    assert all(j.nodes == 4 and j.namespace == "imex-check" for j in jobs)
    assert all(dict(j.launcher_node_selector) == {"role": "system"} for j in jobs)


def test_job_args_reports_every_problem() -> None:
    args = ImexCheckArgs(
        targets=[ImexTarget("US_0", {}), ImexTarget("a", {}), ImexTarget("a", {})],
        namespace="Bad",
        threshold_gbps=-1,
    )
    with pytest.raises(ConfigError) as err:
        job_args(args)
    text = str(err.value)
    assert "imex_check.namespace: got 'Bad'; allowed: a namespace name" in text
    assert "imex_check.targets: got 'US_0'; allowed: an UltraServer name" in text
    assert "imex_check.targets: got ['a']; allowed: each name once" in text
    assert "imex_check.threshold_gbps: got -1; allowed: a positive GB/s" in text


def test_a_grouped_fleet_gets_one_job_per_ultraserver_on_distinct_cliques() -> None:
    args = ImexCheckArgs(targets=[ImexTarget("fleet", {"us": "fleet"}, 18, ultraservers=3)], nodes=2)
    jobs = job_args(args)
    assert [j.name for j in jobs] == ["nvbandwidth-fleet-1", "nvbandwidth-fleet-2", "nvbandwidth-fleet-3"]
    spec = mpijob_manifest(jobs[1])["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
    assert spec["metadata"]["labels"]["ultraserver.io/imex-fleet"] == "fleet"
    (avoid,) = spec["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert avoid["topologyKey"] == "nvidia.com/gpu.clique"
    assert avoid["labelSelector"]["matchExpressions"] == [
        {"key": "ultraserver.io/imex-fleet", "operator": "In", "values": ["fleet"]},
        {"key": "ultraserver.io/imex-check", "operator": "NotIn", "values": ["nvbandwidth-fleet-2"]},
    ]
    # The clique affinity to its own workers stays: one job, one NVLink domain.
    (own,) = spec["spec"]["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert own["topologyKey"] == "nvidia.com/gpu.clique"


def test_a_single_ultraserver_job_has_no_anti_affinity() -> None:
    (job,) = job_args(ImexCheckArgs(targets=[ImexTarget("us0", {"us": "0"}, 18)]))
    affinity = mpijob_manifest(job)["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["affinity"]
    assert "podAntiAffinity" not in affinity


@pytest.mark.parametrize(("target", "workers"), [(ImexTarget("a", {}, 18), 18), (ImexTarget("b", {}, 9), 9)])
def test_nodes_all_spans_every_instance(target: ImexTarget, workers: int) -> None:
    (job,) = job_args(ImexCheckArgs(targets=[target], nodes=None))
    manifest = mpijob_manifest(job)
    assert manifest["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == workers
    command = launcher_command(job)
    assert command[command.index("-np") + 1] == str(4 * workers)
    (script,) = manifest["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["args"]
    assert f"-np {workers} /bin/sh" in script


def test_nodes_all_follows_a_group_below_full_size() -> None:
    (job,) = job_args(ImexCheckArgs(targets=[ImexTarget("a", {}, 18, nodes_per_ultraserver=6)], nodes=None))
    assert job.nodes == 6


def test_launcher_retries_are_bounded_and_explicit() -> None:
    (job,) = job_args(ImexCheckArgs(targets=[ImexTarget("a", {}, 18)]))
    assert mpijob_manifest(job)["spec"]["runPolicy"] == {"cleanPodPolicy": "Running", "backoffLimit": 2}
