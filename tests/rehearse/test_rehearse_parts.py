"""The pieces of a rehearsal read the plan: node registration from the launch templates, runs from the MPIJobs."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from helpers.cli import run_main
from helpers.stacks import ROOT, stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.facts.kubernetes.scheduling import GPU_TAINT_EFFECT, GPU_TAINT_KEY, GPU_TAINT_VALUE, ULTRASERVER_LABEL
from ultraserver.offline.resource import LAUNCH_TEMPLATE
from ultraserver.rehearse import logs
from ultraserver.rehearse.cluster import INSTANCE_LABEL, plugin_pods
from ultraserver.rehearse.faults import Injected
from ultraserver.rehearse.registration import registration, registrations
from ultraserver.rehearse.run import Rehearsal, build, default_moment, drift_expected, stack_plan
from ultraserver.rehearse.stage import Stage
from ultraserver.verify.expect import expectation
from ultraserver.verify.nccl import parse_nccl_output
from ultraserver.verify.nvbandwidth import parse_bandwidth_matrix


def test_nodes_register_with_the_labels_and_taint_of_their_launch_template(shipped_plan: object) -> None:
    found = registrations(shipped_plan("gb200-multi").of_type(LAUNCH_TEMPLATE))  # type: ignore[operator]
    assert set(found) == {"nvl72-1", "nvl72-2", "nvl72-3", "nvl72-4", "fleet"}
    for name, registered in found.items():
        assert registered.labels[ULTRASERVER_LABEL] == name
        assert registered.taints == ({"key": GPU_TAINT_KEY, "value": GPU_TAINT_VALUE, "effect": GPU_TAINT_EFFECT},)


def test_kubelet_flags_with_several_labels_and_taints() -> None:
    found = registration(["--node-labels=a=1,b=x=y", "--register-with-taints=k=v:NoSchedule,j=:NoExecute", "--v=2"])
    assert found.labels == {"a": "1", "b": "x=y"}
    assert found.taints == (
        {"key": "k", "value": "v", "effect": "NoSchedule"},
        {"key": "j", "value": "", "effect": "NoExecute"},
    )


def test_generated_nvbandwidth_output_is_one_rank_per_gpu_of_the_named_hosts() -> None:
    text = logs.nvbandwidth_output(["n1", "n2", "n3"], 4)
    matrix = parse_bandwidth_matrix(text)
    assert matrix.size == 12 and "Process 11 (n3): device 3" in text
    assert matrix.values[0][4] == logs.CROSS_NODE_GBYTES and matrix.values[0][1] == logs.INTRA_NODE_GBYTES


def test_generated_all_reduce_output_has_the_commands_sizes() -> None:
    sizes = logs.message_sizes(1 << 30, 16 << 30, 2)
    hosts = [f"n{rank // 4}" for rank in range(8)]
    run = parse_nccl_output(logs.nccl_output(hosts, sizes, 750.0, socket_hosts={"n1"}))
    assert [r.size_bytes for r in run.rows] == sizes == [1 << 30, 2 << 30, 4 << 30, 8 << 30, 16 << 30]
    assert run.uses_socket and run.uses_efa and run.out_of_bounds == 0 and {r.best_busbw for r in run.rows} == {750.0}
    text = logs.nccl_output(hosts, sizes, 750.0, socket_hosts={"n1"})
    assert "[1,4]<stdout>:n1:30:30 [0] NCCL INFO Using network Socket" in text
    assert "[1,3]<stdout>:n0:29:29 [3] NCCL INFO Using network Libfabric" in text


def test_rehearse_command_passes_a_healthy_stack_and_names_a_notready_node() -> None:
    healthy = run_main("rehearse", "--stack", "gb200-x72", "--project-dir", str(ROOT))
    assert healthy.code == 0, healthy.stdout + healthy.stderr
    assert (
        "): cluster dra-device-classes, nvl72 node-facts, nvl72 nvlink, nvl72 acceptance, drift check" in healthy.stdout
    )
    # The fault named by the checks is the toolkit responding as it must: exit 0.
    broken = run_main("rehearse", "--stack", "gb200-x72", "--project-dir", str(ROOT), "--break", "notready")
    assert broken.code == 0, broken.stdout + broken.stderr
    node = broken.stdout.split("Injected notready: node ")[1].split()[0]
    assert f"FAILED nvl72 node-facts: node {node}: got 'NotReady'" in broken.stdout
    assert f"fix: kubectl describe node {node}" in broken.stdout
    assert f"Fault notready on {node}: named by the checks above" in broken.stdout


def test_rehearse_refuses_a_fault_outside_the_catalogue() -> None:
    refused = run_main("rehearse", "--stack", "gb200-x72", "--project-dir", str(ROOT), "--break", "fire")
    assert refused.code == 2
    assert "--break: got 'fire'; allowed: one of notready, efa, clique, imex, socket, missing-node" in refused.stderr


@pytest.mark.parametrize(
    ("stack", "plugins"),
    [
        ("gb200-x72", {"gpu-operator", "aws-efa-k8s-device-plugin", "nvidia-dra-driver-gpu"}),
        ("gb200-x72-dra", {"gpu-operator", "aws-dranet", "nvidia-dra-driver-gpu"}),
    ],
)
def test_every_gpu_node_runs_the_plugins_of_the_plans_device_mode(stack: str, plugins: set[str]) -> None:
    settings = parse_settings(stack_config(stack))
    moment = default_moment(expectation(settings))
    cluster, _ = build(settings, stack_plan(ROOT, stack, settings, moment), moment, [])
    pods = plugin_pods(cluster, cluster.releases)
    operands = set(expectation(settings).gpu_operands)  # what the stack's ClusterPolicy deploys on each GPU node
    for node in cluster.gpu_nodes:
        on_node = [p["metadata"]["labels"] for p in pods if p["spec"]["nodeName"] == node.name]
        owners = {labels.get(INSTANCE_LABEL) or labels.get("app.kubernetes.io/managed-by") for labels in on_node}
        assert owners - {None} == plugins
        assert {labels.get("app") for labels in on_node if labels.get("app.kubernetes.io/managed-by")} == operands
        # The DRA driver's kubelet plugin carries its chart's instance label (rehearse/charted.py).
        assert len(on_node) == len(plugins) - 1 + len(operands)


def test_the_drift_check_runs_with_the_expected_groups_its_cronjob_carries() -> None:
    settings = parse_settings(stack_config("gb200-x72"))
    moment = default_moment(expectation(settings))
    cluster, _ = build(settings, stack_plan(ROOT, "gb200-x72", settings, moment), moment, [])
    assert drift_expected(cluster.objects) == [g.to_json() for g in expectation(settings).groups]
    assert drift_expected([o for o in cluster.objects if o["kind"] != "CronJob"]) is None


@pytest.mark.parametrize("module", ["kmock", "cryptography"])
def test_without_the_emulator_the_command_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))
    refused = run_main("rehearse", "--stack", "gb200-x72", "--project-dir", str(ROOT))
    assert refused.code == 2
    assert f"{module} is not installed" in refused.stderr and "pip install 'ultraserver[rehearse]'" in refused.stderr


def test_a_fault_counts_as_named_only_when_its_node_is_named_not_merely_its_group() -> None:
    fault = Injected("clique", "split", "ip-10-100-0-13.ec2.internal", group="nvl72-1")
    at = datetime(2026, 12, 1, tzinfo=timezone.utc)
    group_only = Rehearsal("s", at, injected=[fault], stages=[Stage("verify", 1, "nvl72-1 node-facts FAILED")])
    assert not group_only.detected(fault) and group_only.code == 1
    named = Rehearsal("s", at, injected=[fault], stages=[Stage("verify", 1, "ip-10-100-0-13.ec2.internal FAILED")])
    # Named by its node: the toolkit responded as it must (issue 42 section 6), so the rehearsal exits 0.
    assert named.detected(fault) and named.code == 0


def test_node_fails_is_handled_only_when_every_node_failure_stage_passes() -> None:
    fault = Injected("node-fails", "a node fails", "nvl72", group="nvl72")
    at = datetime(2026, 12, 1, tzinfo=timezone.utc)
    replayed = Stage("node failure", 0, "Kueue replaced a node of nvl72")
    # A failing stage that names the UltraServer (as every node-failure stage does) is no response.
    failed_real = Stage("node failure (real Kueue)", 1, "FAILED the pod did not move within nvl72")
    assert Rehearsal("s", at, injected=[fault], stages=[replayed]).code == 0
    both = Rehearsal("s", at, injected=[fault], stages=[replayed, failed_real])
    assert not both.detected(fault) and both.code == 1
    failed_replay = Rehearsal("s", at, injected=[fault], stages=[Stage("node failure", 1, "FAILED nvl72")])
    assert not failed_replay.detected(fault) and failed_replay.code == 1
