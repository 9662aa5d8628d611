"""nvbandwidth MPIJob builder, output parser and the cross-node bandwidth rule."""

from __future__ import annotations

import shlex

import pytest
from helpers.fake_cluster import sample
from helpers.manifests import pair_manifests
from helpers.nvbandwidth_samples import GPUS, matrix_values, nvbandwidth_log
from ultraserver.builders.nvbandwidth_job import (
    TESTCASE,
    NvbandwidthJobArgs,
    mpijob_manifest,
)
from ultraserver.facts.kubernetes.scheduling import GPU_TOLERATION
from ultraserver.facts.pins.manifests import NVBANDWIDTH_IMAGE
from ultraserver.problems import ConfigError
from ultraserver.verify.fabric import reported_nodes
from ultraserver.verify.nvbandwidth import BandwidthOutputError, check_bandwidth, parse_bandwidth_matrix


def test_parser_reads_matrix_testcase_and_sum() -> None:
    matrix = parse_bandwidth_matrix(nvbandwidth_log(matrix_values()))
    assert matrix.size == GPUS
    assert matrix.testcase == TESTCASE
    assert matrix.values[0][0] is None
    assert matrix.values[0][1] == 821.30
    assert matrix.values[0][4] == 798.02
    assert matrix.values[7][3] == 798.02
    expected_sum = 24 * 821.30 + 32 * 798.02  # 2 nodes x 12 intra-node pairs, 32 cross-node pairs
    assert matrix.sum_gbps == pytest.approx(expected_sum, abs=0.01)


def test_healthy_two_node_run_passes() -> None:
    result = check_bandwidth(parse_bandwidth_matrix(nvbandwidth_log(matrix_values())))
    assert result.passed
    assert result.nodes == 2
    assert result.cross_node_pairs == 32
    assert result.min_cross_node_gbps == 798.02
    assert result.failures == ()
    assert result.summary().startswith("IMEX check passed: 32 cross-node GPU pairs on 2 nodes")


def test_one_slow_cross_node_link_fails_and_is_named() -> None:
    log = nvbandwidth_log(matrix_values(overrides={(1, 6): "350.10"}))
    result = check_bandwidth(parse_bandwidth_matrix(log), threshold_gbps=700.0)
    assert not result.passed
    assert [(f.source, f.target, f.gbps) for f in result.failures] == [(1, 6, 350.10)]
    assert result.min_cross_node_gbps == 350.10
    assert "GPU1->GPU6 350.10" in result.summary()


def test_slow_links_inside_a_node_do_not_count() -> None:
    log = nvbandwidth_log(matrix_values(overrides={(0, 1): "100.00"}))
    assert check_bandwidth(parse_bandwidth_matrix(log)).passed


def test_missing_cross_node_path_fails() -> None:
    log = nvbandwidth_log(matrix_values(overrides={(5, 2): "N/A"}))
    result = check_bandwidth(parse_bandwidth_matrix(log))
    assert not result.passed
    assert [(f.source, f.target, f.gbps) for f in result.failures] == [(5, 2, None)]


def test_whole_run_below_threshold_fails_every_pair() -> None:
    result = check_bandwidth(parse_bandwidth_matrix(nvbandwidth_log(matrix_values(cross=45.0))))
    assert not result.passed
    assert len(result.failures) == 32
    assert "and 24 more" in result.summary()


def test_threshold_is_respected_both_ways() -> None:
    matrix = parse_bandwidth_matrix(nvbandwidth_log(matrix_values()))
    assert check_bandwidth(matrix, threshold_gbps=798.02).passed
    assert not check_bandwidth(matrix, threshold_gbps=798.03).passed


def test_single_node_run_cannot_pass() -> None:
    cells = [row[:4] for row in matrix_values()[:4]]
    result = check_bandwidth(parse_bandwidth_matrix(nvbandwidth_log(cells)))
    assert not result.passed
    assert "fewer than two nodes" in result.summary()


def test_size_not_matching_gpus_per_node_cannot_pass() -> None:
    result = check_bandwidth(parse_bandwidth_matrix(nvbandwidth_log(matrix_values())), gpus_per_node=3)
    assert not result.passed
    (problem,) = result.problems
    assert "not a whole number of 3-GPU nodes" in problem.value and problem.allowed == "a multiple of 3 GPUs"


def test_sum_line_is_optional() -> None:
    assert parse_bandwidth_matrix(nvbandwidth_log(matrix_values(), with_sum=False)).sum_gbps is None


@pytest.mark.parametrize(
    ("log", "message"),
    [
        ("", "no bandwidth matrix"),
        ("ERROR: no IMEX channel available\nmpirun exited\n", "log ends with: ERROR: no IMEX channel"),
        (nvbandwidth_log(matrix_values()).split("\n  5 ")[0], "only 5 rows"),
        (nvbandwidth_log(matrix_values(overrides={(2, 3): "fast"}), with_sum=False), "line .*column 3: 'fast'"),
        (nvbandwidth_log(matrix_values(overrides={(2, 3): "-1.0"})), "expected a valid bandwidth"),
        (nvbandwidth_log(matrix_values()).replace("         7\n", "         8\n", 1), "expected column indices"),
        (nvbandwidth_log(matrix_values()).replace("\n  3 ", "\n  9 ", 1), "expected row 3"),
        (nvbandwidth_log(matrix_values()).replace("   N/A\n", "\n", 1), "expected row 7 with 8 values"),
    ],
)
def test_malformed_output_is_a_clear_error(log: str, message: str) -> None:
    with pytest.raises(BandwidthOutputError, match=message):
        parse_bandwidth_matrix(log)


def test_mpijob_spans_n_nodes_with_four_gpus_each() -> None:
    args = NvbandwidthJobArgs(
        name="nvb-us0",
        namespace="imex",
        nodes=9,
        max_nodes=9,
        worker_node_selector={"us": "0"},
        launcher_node_selector={"role": "system"},
    )
    job = mpijob_manifest(args)
    spec = job["spec"]
    assert job["apiVersion"] == "kubeflow.org/v2beta1" and job["kind"] == "MPIJob"
    assert spec["slotsPerWorker"] == 4
    assert spec["launcherCreationPolicy"] == "WaitForWorkersReady"
    launcher = spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    (lc,) = launcher["containers"]
    assert lc["image"] == NVBANDWIDTH_IMAGE
    assert lc["command"] == ["/bin/sh", "-c"]
    (script,) = lc["args"]
    report, run = script.splitlines()
    # First every worker names its node (one rank per node), then the bandwidth run replaces the shell.
    assert report.startswith("mpirun --map-by ppr:1:node -np 9 /bin/sh -c ") and report.endswith(" || true")
    command = shlex.split(run)
    assert command[:2] == ["exec", "mpirun"]
    assert command[command.index("-np") + 1] == "36"
    assert command[command.index("--map-by") + 1] == "ppr:4:node"
    assert command[-3:] == ["nvbandwidth", "-t", "multinode_device_to_device_memcpy_read_ce"]
    (worker_container,) = spec["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"]
    assert worker_container["env"] == [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}]
    assert worker_container["args"][0].endswith("&& exec /usr/sbin/sshd -De -f /home/mpiuser/.sshd_config")
    assert launcher["nodeSelector"] == {"role": "system"}
    assert "tolerations" not in launcher
    worker = spec["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 9
    wspec = worker["template"]["spec"]
    (wc,) = wspec["containers"]
    assert wc["resources"]["limits"] == {"nvidia.com/gpu": 4}
    (claim,) = wc["resources"]["claims"]
    (pod_claim,) = wspec["resourceClaims"]
    assert claim["name"] == pod_claim["name"]
    assert pod_claim["resourceClaimTemplateName"] == "nvb-us0-compute-domain-channel"
    assert wspec["tolerations"] == [GPU_TOLERATION]
    assert wspec["nodeSelector"] == {"us": "0"}
    (term,) = wspec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == "nvidia.com/gpu.clique"
    labels = worker["template"]["metadata"]["labels"]
    assert {e["key"]: e["values"][0] for e in term["labelSelector"]["matchExpressions"]} == labels


def test_manifests_pair_the_domain_with_the_job() -> None:
    domain, job = pair_manifests(NvbandwidthJobArgs(name="nvb", namespace="imex"))
    assert domain["kind"] == "ComputeDomain"
    assert domain["metadata"]["namespace"] == job["metadata"]["namespace"] == "imex"
    template = domain["spec"]["channel"]["resourceClaimTemplate"]["name"]
    worker = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    assert worker["resourceClaims"][0]["resourceClaimTemplateName"] == template
    assert job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"] == 2


@pytest.mark.parametrize(("nodes", "max_nodes"), [(1, 18), (19, 18), (10, 9), (0, 9), (True, 9)])
def test_node_count_must_fit_the_ultraserver(nodes: int, max_nodes: int) -> None:
    with pytest.raises(
        ConfigError, match=f"imex_check.nodes: got {nodes!r}; allowed: 2 to {max_nodes}, .* fix: give 2 to {max_nodes}"
    ):
        mpijob_manifest(NvbandwidthJobArgs(name="nvb", namespace="imex", nodes=nodes, max_nodes=max_nodes))


def test_bad_threshold_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="threshold_gbps"):
        check_bandwidth(parse_bandwidth_matrix(nvbandwidth_log(matrix_values())), threshold_gbps=0)


def test_parser_reads_nvidias_published_gb200_run() -> None:
    """NVIDIA's published 2-node x 4 GB200 output (row labels re-indented by the docs) parses and passes."""
    matrix = parse_bandwidth_matrix(sample("nvbandwidth-gb200-2nodes-nvidia-docs.txt"))
    assert matrix.size == 8 and matrix.testcase == TESTCASE
    assert matrix.sum_gbps == 44685.29
    assert matrix.values[2][7] == 797.65 and matrix.values[7][7] is None
    result = check_bandwidth(matrix)
    assert result.passed and result.min_cross_node_gbps == 797.65


def test_reported_nodes_are_read_from_the_launcher_log() -> None:
    log = "ultraserver-node: ip-b\nultraserver-node: ip-a\n" + nvbandwidth_log(matrix_values())
    assert reported_nodes(log) == ["ip-a", "ip-b"]
    assert parse_bandwidth_matrix(log).size == GPUS
