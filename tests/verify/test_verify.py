"""`ultraserver verify` driven through a fake Kubernetes API: verdicts per UltraServer and check, exit codes, JSON."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from helpers.fake_cluster import FakeCluster, healthy_cluster, nvbandwidth_output, sample
from helpers.stacks import ROOT
from ultraserver import cli
from ultraserver.rehearse.run import default_moment
from ultraserver.verify import clients
from ultraserver.verify.checks import run_checks
from ultraserver.verify.expect import StackExpectation, expectation
from ultraserver.verify.report import format_verdicts


def expected_of(stack: str) -> StackExpectation:
    return expectation(cli.stack_settings(ROOT, stack))


def by_key(verdicts: list) -> dict[tuple[str, str], object]:
    return {(v.ultraserver, v.check): v for v in verdicts}


def run_cli(monkeypatch: pytest.MonkeyPatch, cluster: FakeCluster, stack: str, *extra: str) -> int:
    """verify of the fake cluster, an hour into the stack's first full-size window (outside every window no GPU
    check is judged: nothing should run then)."""
    monkeypatch.setattr(clients, "connect", lambda kubeconfig: cluster)
    now = default_moment(expected_of(stack)).isoformat()
    return cli.main(["verify", "--stack", stack, "--project-dir", str(ROOT), "--kubeconfig", "k", "--now", now, *extra])


def test_all_healthy_passes_with_the_published_gb200_output(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = expected_of("gb200-x72")
    cluster = healthy_cluster(expected, nvlink_nodes=2)
    # The launcher log is NVIDIA's published 2-node GB200 run, verbatim.
    (key,) = [k for k in cluster.logs]
    cluster.logs[key] = sample("nvbandwidth-gb200-2nodes-nvidia-docs.txt")
    out = tmp_path / "verdicts.json"
    assert run_cli(monkeypatch, cluster, "gb200-x72", "--json", str(out)) == 0
    report = json.loads(out.read_text())
    assert report["passed"] is True
    assert {(c["ultraserver"], c["check"], c["verdict"]) for c in report["checks"]} == {
        ("cluster", "dra-device-classes", "PASSED"),
        ("nvl72", "node-facts", "PASSED"),
        ("nvl72", "nvlink", "PASSED"),
    }
    text = capsys.readouterr().out
    assert "32 cross-node GPU pairs on 2 nodes, lowest 797.65 GB/s" in text
    assert "3 of 3 checks passed" in text
    # One UltraServer: no EFA check, and the report says so instead of counting it as passed.
    assert "note: efa: not checked" in text
    assert report["notChecked"] == [n for n in report["notChecked"] if n.startswith("efa: not checked")] != []


def test_every_ultraserver_of_the_multi_stack_is_judged() -> None:
    expected = expected_of("gb200-multi")
    verdicts = run_checks(healthy_cluster(expected, nvlink_nodes=4), expected)
    assert all(v.passed for v in verdicts), format_verdicts(verdicts)
    nvlink = sorted(v.ultraserver for v in verdicts if v.check == "nvlink")
    fleet_facts = sorted(
        v.ultraserver for v in verdicts if v.check == "node-facts" and v.ultraserver.startswith("fleet/")
    )
    assert len(fleet_facts) == 8
    # Each fleet job's verdict carries the UltraServer (clique) it ran on, named like the node-facts verdicts.
    assert nvlink == sorted([f"nvl72-{i}" for i in range(1, 5)] + fleet_facts)
    assert by_key(verdicts)[("fleet", "nvlink-coverage")].evidence == "8 of 8 UltraServers tested by 8 jobs"
    assert by_key(verdicts)[("fleet", "ultraservers")].evidence == "144 nodes in 8 cliques (expected 144 in 8)"


def test_one_node_short_of_efa_fails_that_ultraserver_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = expected_of("gb200-multi")
    cluster = healthy_cluster(expected, nvlink_nodes=4)
    index = next(i for i, n in enumerate(cluster.node_list) if n.labels["ultraserver.io/ultraserver"] == "nvl72-2")
    node = cluster.node_list[index]
    cluster.node_list[index] = dataclasses.replace(node, allocatable={**node.allocatable, "vpc.amazonaws.com/efa": "7"})
    assert run_cli(monkeypatch, cluster, "gb200-multi") == 1
    verdicts = run_checks(cluster, expected)
    failed = [v for v in verdicts if not v.passed]
    assert [(v.ultraserver, v.check) for v in failed] == [("nvl72-2", "node-facts")]
    (problem,) = failed[0].problems
    assert problem.key == f"node {node.name} allocatable vpc.amazonaws.com/efa"
    assert problem.value == "7" and problem.allowed.startswith("8 ")
    text = capsys.readouterr().out
    assert "nvl72-2 node-facts FAILED" in text and "fix: check the EFA device plugin" in text


@pytest.mark.parametrize(
    ("log", "reason"),
    [
        (sample("nvbandwidth-failures-github-issues.txt").split("# ---- B")[0], "got no IMEX channel"),
        (sample("nvbandwidth-failures-github-issues.txt").split("# ---- B")[1], "not in one NVLink domain"),
        (
            "nvbandwidth Version: v0.7\n\nERROR: Testcase multinode_device_to_device_memcpy_reed_ce not found!\n\n"
            "NOTE: The reported results may not reflect the full capabilities of the platform.\n",
            "does not know testcase 'multinode_device_to_device_memcpy_reed_ce'",
        ),
        ("", "holds no bandwidth matrix"),
    ],
    ids=["no-imex-channel", "not-one-nvlink-domain", "wrong-testcase", "empty-log"],
)
def test_an_ultraserver_without_a_matrix_fails_with_the_log_tail_and_the_others_are_judged(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], log: str, reason: str
) -> None:
    expected = expected_of("gb200-multi")
    cluster = healthy_cluster(expected, nvlink_nodes=4)
    cluster.logs[(expected.imex_namespace, "nvbandwidth-nvl72-3-launcher-abcde")] = log
    assert run_cli(monkeypatch, cluster, "gb200-multi") == 1
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    verdicts = run_checks(cluster, expected)
    failed = [v for v in verdicts if not v.passed]
    assert [(v.ultraserver, v.check) for v in failed] == [("nvl72-3", "nvlink")]
    assert reason in failed[0].evidence
    assert list(failed[0].log_tail) == [line for line in log.splitlines() if line.strip()][-12:]
    assert sum(v.check == "nvlink" and v.passed for v in verdicts) == 11


def test_a_kubernetes_api_error_on_one_log_fails_only_that_check() -> None:
    expected = expected_of("gb200-multi")
    cluster = healthy_cluster(expected, nvlink_nodes=4)
    cluster.broken_logs = {"nvbandwidth-fleet-5-launcher-abcde"}
    failed = [v for v in run_checks(cluster, expected) if not v.passed]
    assert [(v.ultraserver, v.check) for v in failed] == [("fleet#5", "nvlink"), ("fleet", "nvlink-coverage")]
    assert "HTTP 500" in failed[0].problems[0].value
    (untested,) = failed[1].problems
    assert untested.value == "no nvbandwidth job ran here"


def test_unfinished_or_missing_launcher_fails_instead_of_passing() -> None:
    expected = expected_of("gb200-x72")
    cluster = healthy_cluster(expected, nvlink_nodes=2)
    (selector,) = [k for k in cluster.pod_map if k[1].startswith("job-name=")]
    cluster.pod_map[selector] = [dataclasses.replace(cluster.pod_map[selector][0], phase="Running")]
    (verdict,) = [v for v in run_checks(cluster, expected) if v.check == "nvlink"]
    assert not verdict.passed and verdict.problems[0].value == "Running"
    cluster.pod_map[selector] = []
    (verdict,) = [v for v in run_checks(cluster, expected) if v.check == "nvlink"]
    assert not verdict.passed and verdict.problems[0].value == "no launcher pod"


def test_api_unreachable_fails_every_check_without_a_traceback_and_exits_4(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = expected_of("gb200-multi")
    cluster = FakeCluster(down=True)
    out = tmp_path / "v.json"
    assert run_cli(monkeypatch, cluster, "gb200-multi", "--json", str(out)) == 4  # API unreachable (EXIT_CODES)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.out + captured.err
    # The connection error is printed once, then referred to.
    assert captured.out.count("connection refused") == 1
    assert captured.out.count("the same problem as above") == 19
    checks = json.loads(out.read_text())["checks"]
    assert checks and all(c["verdict"] == "FAILED" for c in checks)
    assert all("connection refused" in c["problems"][0]["value"] for c in checks)
    # device classes, node facts per group, nvlink per UltraServer, fleet coverage, EFA
    assert len(checks) == 1 + 5 + 12 + 1 + 1
    assert expected.groups[-1].name == "fleet"


def test_fleet_clique_short_of_a_node_and_missing_clique_label_fail() -> None:
    expected = expected_of("gb200-multi")
    cluster = healthy_cluster(expected, nvlink_nodes=4)
    fleet = [i for i, n in enumerate(cluster.node_list) if n.labels["ultraserver.io/ultraserver"] == "fleet"]
    node = cluster.node_list[fleet[0]]
    cluster.node_list[fleet[0]] = dataclasses.replace(node, labels={"ultraserver.io/ultraserver": "fleet"})
    verdicts = run_checks(cluster, expected)
    failed = {(v.ultraserver, v.check): v for v in verdicts if not v.passed}
    clique = node.labels["nvidia.com/gpu.clique"]
    assert set(failed) == {("fleet/no-clique", "node-facts"), (f"fleet/{clique}", "node-facts")}
    assert failed[(f"fleet/{clique}", "node-facts")].problems[0].value == 17


def test_missing_device_class_and_plugin_pod_fail() -> None:
    expected = expected_of("gb200-x72")
    cluster = healthy_cluster(expected, nvlink_nodes=2)
    cluster.classes = cluster.classes[:1]
    (plugins_key,) = [k for k in cluster.pod_map if "kubelet-plugin" in k[1]]
    cluster.pod_map[plugins_key] = cluster.pod_map[plugins_key][1:]
    failed = {(v.ultraserver, v.check): v for v in run_checks(cluster, expected) if not v.passed}
    assert set(failed) == {("cluster", "dra-device-classes"), ("nvl72", "node-facts")}
    assert failed[("cluster", "dra-device-classes")].problems[0].key == (
        "DeviceClass compute-domain-default-channel.nvidia.com"
    )
    (problem,) = failed[("nvl72", "node-facts")].problems
    assert problem.key.endswith("DRA kubelet plugin")


def test_slow_cross_node_pairs_fail_with_the_pairs_named() -> None:
    expected = expected_of("gb200-x72")
    cluster = healthy_cluster(expected, nvlink_nodes=2)
    (key,) = list(cluster.logs)
    cluster.logs[key] = nvbandwidth_output(2, cross=350.0)
    (verdict,) = [v for v in run_checks(cluster, expected) if v.check == "nvlink"]
    assert not verdict.passed
    assert verdict.problems[0].key == "MPIJob nvbandwidth-nvl72 GPU0->GPU4"
    assert verdict.problems[-1].value == "24 more slow pairs"


def test_unusable_kubeconfig_is_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["verify", "--stack", "gb200-x72", "--project-dir", str(ROOT), "--kubeconfig", "/no/such/file"])
    assert code == 2
    err = capsys.readouterr().err
    assert "neither an existing file nor a kubeconfig document" in err and "Traceback" not in err


def test_unwritable_json_is_refused_before_the_cluster_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The kubeconfig is unusable too; the --json path is judged first, so the message names it.
    target = tmp_path / "missing" / "verdicts.json"
    code = cli.main(
        ["verify", "--stack", "gb200-x72", "--project-dir", str(ROOT), "--kubeconfig", "/no/such/file"]
        + ["--json", str(target)]
    )
    err = capsys.readouterr().err
    assert code == 2 and "does not exist; fix: create it" in err and "kubeconfig" not in err


def test_unreachable_endpoint_through_the_real_client_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A kubeconfig pointing at a closed local port: the real client fails fast, verify fails every check.
    path = tmp_path / "kubeconfig"
    path.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9', insecure-skip-tls-verify: true}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    code = cli.main(["verify", "--stack", "gb200-x72", "--project-dir", str(ROOT), "--kubeconfig", str(path)])
    captured = capsys.readouterr()
    assert code == 4
    assert "Traceback" not in captured.out + captured.err
    assert "listing nodes through kubeconfig" in captured.out


def test_efa_socket_fallback_fails_the_cross_ultraserver_check_only() -> None:
    expected = expected_of("gb200-multi")
    assert expected.efa_job == "nccl-efa" and expected.efa_ultraservers == 2
    cluster = healthy_cluster(expected, nvlink_nodes=4)
    cluster.logs[(expected.efa_namespace, "nccl-efa-launcher-x")] = sample("nccl-debug-socket-fallback-eks.txt")
    failed = [v for v in run_checks(cluster, expected) if not v.passed]
    assert [(v.ultraserver, v.check) for v in failed] == [("across-ultraservers", "efa")]
    assert failed[0].problems[0].value == "TCP sockets (NET/Socket) on rank 0 (host multi-node-nccl-test-worker-0)"
    assert any("via NET/Socket/0" in line for line in failed[0].log_tail)


def test_node_facts_only_reads_no_job_logs() -> None:
    expected = expected_of("gb200-multi")
    cluster = healthy_cluster(expected, nvlink_nodes=4)
    cluster.logs.clear()
    verdicts = run_checks(cluster, expected, node_facts_only=True)
    assert verdicts and all(v.passed for v in verdicts)
    assert {v.check for v in verdicts} == {"dra-device-classes", "node-facts", "ultraservers"}


def test_two_fleet_jobs_on_one_ultraserver_leave_another_untested() -> None:
    expected = expected_of("gb200-multi")
    cluster = healthy_cluster(expected, nvlink_nodes=4)
    ns = expected.imex_namespace
    # Job 3 started after job 2 had finished and landed on job 2's UltraServer (anti-affinity no longer applied).
    cluster.logs[(ns, "nvbandwidth-fleet-3-launcher-abcde")] = cluster.logs[(ns, "nvbandwidth-fleet-2-launcher-abcde")]
    verdicts = run_checks(cluster, expected)
    failed = [v for v in verdicts if not v.passed]
    assert [(v.ultraserver, v.check) for v in failed] == [("fleet", "nvlink-coverage")]
    (problem,) = failed[0].problems
    third = sorted(
        {
            n.labels["nvidia.com/gpu.clique"]
            for n in cluster.node_list
            if n.labels["ultraserver.io/ultraserver"] == "fleet"
        }
    )[2]
    assert problem.key == f"fleet/{third}"
    assert failed[0].evidence == "7 of 8 UltraServers tested by 8 jobs"


def test_an_efa_run_inside_one_ultraserver_fails() -> None:
    expected = expected_of("gb200-multi")
    cluster = healthy_cluster(expected, nvlink_nodes=4)
    same = [n.name for n in cluster.node_list if n.labels["ultraserver.io/ultraserver"] == "nvl72-1"][:2]
    key = (expected.efa_namespace, "nccl-efa-launcher-x")
    body = "\n".join(line for line in cluster.logs[key].splitlines() if not line.startswith("ultraserver-node: "))
    cluster.logs[key] = "".join(f"ultraserver-node: {n}\n" for n in same) + body
    (verdict,) = [v for v in run_checks(cluster, expected) if v.check == "efa"]
    assert not verdict.passed
    (problem,) = verdict.problems
    assert problem.value == "1 cliques from 2 reported nodes"


def test_kubeconfig_env_is_read_like_kubectl_merging_its_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The cluster is in one file, the current context in another: only a merge of both (as kubectl does) has both.
    clusters = tmp_path / "clusters"
    clusters.write_text(
        "apiVersion: v1\nkind: Config\n"
        "clusters: [{name: c, cluster: {server: 'https://127.0.0.1:9', insecure-skip-tls-verify: true}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n"
    )
    context = tmp_path / "context"
    context.write_text("apiVersion: v1\nkind: Config\ncurrent-context: c\n")
    listed = f"{tmp_path / 'missing'}{os.pathsep}{clusters}{os.pathsep}{context}"
    monkeypatch.setenv("KUBECONFIG", listed)
    code = cli.main(["verify", "--stack", "gb200-x72", "--project-dir", str(ROOT)])
    captured = capsys.readouterr()
    assert code == 4, captured.err
    assert f"$KUBECONFIG={listed} (its files merged, as kubectl merges them)" in " ".join(captured.out.split())


def test_kubeconfig_env_naming_no_file_is_bad_input_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "nowhere"))
    code = cli.main(["verify", "--stack", "gb200-x72", "--project-dir", str(ROOT)])
    err = capsys.readouterr().err
    assert code == 2
    assert f"$KUBECONFIG={tmp_path / 'nowhere'}" in err and "names no existing file" in err
    assert "~/.kube/config" not in err
