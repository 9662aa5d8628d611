"""``verify`` must not pass a broken UltraServer: each case breaks one thing in an otherwise healthy cluster, and the
one check that judges it fails (and only that one)."""

from __future__ import annotations

import dataclasses

import pytest
from helpers.fake_cluster import FakeCluster, healthy_cluster, nccl_output, sample
from helpers.stacks import ROOT
from ultraserver import cli
from ultraserver.builders.node_report import NODE_REPORT_PREFIX
from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL, GPU_PRESENT_LABEL, GPU_TAINT_KEY, ULTRASERVER_LABEL
from ultraserver.facts.pins.gpu_operator import APP_LABEL, OPERAND_SELECTOR
from ultraserver.verify.checks import run_checks
from ultraserver.verify.clients import Pod
from ultraserver.verify.expect import StackExpectation, expectation
from ultraserver.verify.fabric import launcher_selector
from ultraserver.verify.verdict import EFA, NCCL, NODE_FACTS, NVLINK, Verdict


def expected_of(stack: str) -> StackExpectation:
    return expectation(cli.stack_settings(ROOT, stack))


def failed(cluster: FakeCluster, expected: StackExpectation) -> list[Verdict]:
    return [v for v in run_checks(cluster, expected) if not v.passed]


def test_a_not_ready_gpu_node_fails_its_ultraserver() -> None:
    expected = expected_of("gb200-x72")
    cluster = healthy_cluster(expected, nvlink_nodes=2)
    assert failed(cluster, expected) == []
    node = cluster.node_list[5]
    cluster.node_list[5] = dataclasses.replace(node, ready=False)
    (verdict,) = failed(cluster, expected)
    assert (verdict.ultraserver, verdict.check) == ("nvl72", NODE_FACTS)
    (problem,) = verdict.problems
    assert (problem.key, problem.value, problem.allowed) == (f"node {node.name}", "NotReady", "Ready")


def test_nvbandwidth_workers_in_two_clique_domains_fail_the_nvlink_check() -> None:
    expected = expected_of("gb200-multi")
    cluster = healthy_cluster(expected, nvlink_nodes=4)
    assert failed(cluster, expected) == []
    other = next(n for n in cluster.node_list if n.labels[ULTRASERVER_LABEL] == "nvl72-2")
    key = next(k for k in cluster.logs if k[1].startswith("nvbandwidth-nvl72-1-"))
    lines = cluster.logs[key].splitlines(keepends=True)
    # The last worker the launcher names ran on another UltraServer; the matrix itself is healthy.
    last = max(i for i, line in enumerate(lines) if line.startswith(NODE_REPORT_PREFIX))
    lines[last] = f"{NODE_REPORT_PREFIX}{other.name}\n"
    cluster.logs[key] = "".join(lines)
    (verdict,) = failed(cluster, expected)
    assert (verdict.ultraserver, verdict.check) == ("nvl72-1", NVLINK)
    (problem,) = verdict.problems
    assert problem.key == "MPIJob nvbandwidth-nvl72-1 cliques"
    assert other.labels[CLIQUE_LABEL] in problem.value and len(problem.value) == 2


def _nccl_cluster(log: str) -> tuple[FakeCluster, StackExpectation]:
    expected = expected_of("gb200-x72-dra")
    cluster = healthy_cluster(expected, nvlink_nodes=2)
    ((_, job),) = expected.nccl_jobs
    launcher = Pod(f"{job}-launcher-x", expected.nccl_namespace, "sys-0", "Succeeded", False, "1")
    cluster.pod_map[(expected.nccl_namespace, launcher_selector(job))] = [launcher]
    cluster.logs[(expected.nccl_namespace, launcher.name)] = log
    return cluster, expected


def test_out_of_bounds_values_fail_the_per_ultraserver_nccl_check() -> None:
    healthy = nccl_output(busbw=900.0)
    cluster, expected = _nccl_cluster(healthy)
    assert failed(cluster, expected) == []
    # The rows say 0 wrong values; only the footer counts them.
    cluster, expected = _nccl_cluster(healthy.replace("Out of bounds values : 0 OK", "Out of bounds values : 7 FAILED"))
    (verdict,) = failed(cluster, expected)
    assert (verdict.ultraserver, verdict.check) == ("nvl72", NCCL)
    (problem,) = verdict.problems
    assert (problem.key, problem.value, problem.allowed) == ("MPIJob nccl-nvl72 wrong values", 7, "0")


def _mixed_efa_log(log: str) -> str:
    """The healthy EFA log with a second rank that chose TCP sockets."""
    return log.replace(
        "[1,0]<stdout>:w-0:26:26 [0] NCCL INFO Using network Libfabric",
        "[1,0]<stdout>:w-0:26:26 [0] NCCL INFO Using network Libfabric\n"
        "[1,1]<stdout>:w-1:31:31 [0] NCCL INFO Using network Socket\n"
        "[1,1]<stdout>:w-1:31:31 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [receive] via NET/Socket/0",
    )


def test_an_efa_run_where_some_ranks_used_tcp_sockets_fails_naming_them_and_the_causes() -> None:
    expected = expected_of("gb200-multi")
    cluster = healthy_cluster(expected, nvlink_nodes=4)
    key = (expected.efa_namespace, f"{expected.efa_job}-launcher-x")
    cluster.logs[key] = _mixed_efa_log(cluster.logs[key])
    (verdict,) = failed(cluster, expected)
    assert (verdict.ultraserver, verdict.check) == ("across-ultraservers", EFA)
    (problem,) = verdict.problems
    assert problem.value == "TCP sockets (NET/Socket) on rank 1 (host w-1); Libfabric (EFA) on rank 0"
    assert "NVreg_GrdmaPciTopoCheckOverride" in problem.fix and "/proc/driver/nvidia/params" in problem.fix
    assert "NVIDIA/aicr#668" in problem.fix and "UNVERIFIED" in problem.fix
    assert "network EFA and sockets" in verdict.evidence


def test_the_published_socket_fallback_names_the_rank_it_saw() -> None:
    expected = expected_of("gb200-multi")
    cluster = healthy_cluster(expected, nvlink_nodes=4)
    cluster.logs[(expected.efa_namespace, f"{expected.efa_job}-launcher-x")] = sample(
        "nccl-debug-socket-fallback-eks.txt"
    )
    (verdict,) = failed(cluster, expected)
    # Rank 1 wrote no transport line before the excerpt ends; only rank 0 is named.
    assert verdict.problems[0].value == "TCP sockets (NET/Socket) on rank 0 (host multi-node-nccl-test-worker-0)"


def _fail_launchers(cluster: FakeCluster, namespace: str, job: str) -> str:
    """Mark the job's launcher pods Failed, keeping their (healthy) logs; the failed pod's name."""
    key = (namespace, launcher_selector(job))
    cluster.pod_map[key] = [dataclasses.replace(p, phase="Failed") for p in cluster.pod_map[key]]
    return max(cluster.pod_map[key], key=lambda p: p.created).name


def test_a_failed_launcher_fails_its_check_even_when_its_log_reads_as_healthy() -> None:
    expected = expected_of("gb200-multi")
    cluster = healthy_cluster(expected, nvlink_nodes=4)
    assert failed(cluster, expected) == []
    nvlink_job = next(g for g in expected.groups if g.name == "nvl72-1").nvlink_jobs[0]
    broken = {
        ("nvl72-1", NVLINK): (expected.imex_namespace, _fail_launchers(cluster, expected.imex_namespace, nvlink_job)),
        ("across-ultraservers", EFA): (
            expected.efa_namespace,
            _fail_launchers(cluster, expected.efa_namespace, expected.efa_job),
        ),
    }
    verdicts = failed(cluster, expected)
    assert {(v.ultraserver, v.check) for v in verdicts} == set(broken)
    for verdict in verdicts:
        namespace, pod = broken[(verdict.ultraserver, verdict.check)]
        (problem,) = verdict.problems
        assert (problem.key, problem.value) == (f"launcher {namespace}/{pod}", "Failed")
        assert f"kubectl -n {namespace} logs {pod}" in problem.fix


def test_a_failed_nccl_launcher_fails_the_per_ultraserver_nccl_check() -> None:
    cluster, expected = _nccl_cluster(nccl_output(busbw=900.0))
    ((_, job),) = expected.nccl_jobs
    pod = _fail_launchers(cluster, expected.nccl_namespace, job)
    (verdict,) = failed(cluster, expected)
    assert (verdict.ultraserver, verdict.check) == ("nvl72", NCCL)
    assert [p.key for p in verdict.problems] == [f"launcher {expected.nccl_namespace}/{pod}"]


NEAR_MISSES = {
    "cordoned": (lambda n: dataclasses.replace(n, unschedulable=True), "cordoned"),
    "untainted": (lambda n: dataclasses.replace(n, taints=()), f"taint {GPU_TAINT_KEY}"),
    "memory-pressure": (lambda n: dataclasses.replace(n, pressure=("MemoryPressure",)), "MemoryPressure"),
    "no-gpu-present": (
        lambda n: dataclasses.replace(n, labels={k: v for k, v in n.labels.items() if k != GPU_PRESENT_LABEL}),
        f"label {GPU_PRESENT_LABEL}",
    ),
}


@pytest.mark.parametrize("case", sorted(NEAR_MISSES))
def test_a_ready_gpu_node_that_takes_no_job_fails_its_ultraserver(case: str) -> None:
    expected = expected_of("gb200-x72")
    cluster = healthy_cluster(expected, nvlink_nodes=2)
    assert failed(cluster, expected) == []
    change, key = NEAR_MISSES[case]
    node = cluster.node_list[3]
    cluster.node_list[3] = change(node)
    assert cluster.node_list[3].ready
    (verdict,) = failed(cluster, expected)
    assert (verdict.ultraserver, verdict.check) == ("nvl72", NODE_FACTS)
    (problem,) = verdict.problems
    assert problem.key == f"node {node.name} {key}"


def test_a_gpu_operator_operand_gone_from_one_node_fails_its_ultraserver() -> None:
    expected = expected_of("gb200-x72")
    assert "nvidia-dcgm-exporter" in expected.gpu_operands
    cluster = healthy_cluster(expected, nvlink_nodes=2)
    node = cluster.node_list[7].name
    key = (expected.gpu_operator_namespace, OPERAND_SELECTOR)
    cluster.pod_map[key] = [
        p for p in cluster.pod_map[key] if not (p.node_name == node and p.labels[APP_LABEL] == "nvidia-dcgm-exporter")
    ]
    (verdict,) = failed(cluster, expected)
    (problem,) = verdict.problems
    assert problem.key == f"node {node} GPU Operator operands"
    assert problem.value == "no running and ready pod of nvidia-dcgm-exporter"


def test_an_operand_the_stack_turns_off_is_not_expected() -> None:
    settings = cli.stack_settings(ROOT, "gb200-x72")
    values = {"dcgmExporter": {"enabled": False}}
    gpu_operator = settings.kubernetes.gpu_operator.model_copy(update={"values": values})
    kubernetes = settings.kubernetes.model_copy(update={"gpu_operator": gpu_operator})
    expected = expectation(settings.model_copy(update={"kubernetes": kubernetes}))
    assert "nvidia-dcgm-exporter" not in expected.gpu_operands and "gpu-feature-discovery" in expected.gpu_operands
