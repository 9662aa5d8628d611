"""The NCCL all-reduce check over one UltraServer's ComputeDomain: its MPIJob in both device modes and its verdict,
judged on published nccl-tests output (tests/fixtures/samples) against the stack's threshold."""

from __future__ import annotations

import copy
import json

import kubernetes_validate
import pytest
from helpers.fake_cluster import healthy_cluster, sample
from helpers.manifests import whole_node_gpus
from helpers.stacks import ROOT, stack_config
from ultraserver import cli
from ultraserver.builders.nccl_check import nccl_check_args
from ultraserver.config.settings import parse_settings
from ultraserver.config.views import device_mode
from ultraserver.facts.hardware import devices
from ultraserver.facts.hardware.devices import DeviceMode
from ultraserver.offline import run_plan
from ultraserver.problems import ConfigError
from ultraserver.verify.checks import run_checks
from ultraserver.verify.clients import Pod
from ultraserver.verify.expect import expectation
from ultraserver.verify.fabric import launcher_selector
from ultraserver.verify.nccl import parse_nccl_output
from ultraserver.verify.nccl_check import judge_all_reduce
from ultraserver.verify.verdict import NCCL

STACK = "gb200-x72-dra"
# The EKS MPIJob sample: 2x p5.48xlarge, best large-message busbw 437.89 GB/s at 2 GiB, footer with 0 wrong values.
EKS_SAMPLE = "nccl-allreduce-2x-p5-eks-mpijob.txt"


@pytest.mark.parametrize("mode", [devices.PLUGINS, devices.DRA])
def test_the_job_spans_the_whole_ultraserver_with_mnnvl_and_nvls_in_both_modes(mode: str) -> None:
    config = copy.deepcopy(stack_config(STACK))
    config["ultraserver-eks:kubernetes"]["devices"] = mode
    settings = parse_settings(config)
    (job,) = nccl_check_args(settings, device_mode(settings))
    plan = run_plan(ROOT, STACK, {"ultraserver-eks:kubernetes": json.dumps(config["ultraserver-eks:kubernetes"])})
    (mpijob,) = [r.inputs for r in plan.resources if r.type.endswith(":MPIJob") and r.name.endswith(job.name)]
    worker = mpijob["spec"]["mpiReplicaSpecs"]["Worker"]
    assert worker["replicas"] == 18
    script = mpijob["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["containers"][0]["args"][0]
    assert "NCCL_MNNVL_ENABLE=1" in script and "NCCL_NVLS_ENABLE=1" in script and "-np 72" in script
    spec = worker["template"]["spec"]
    claims = [c["resourceClaimTemplateName"] for c in spec["resourceClaims"]]
    assert claims[0].endswith("-channel")  # the ComputeDomain channel claim
    resources = spec["containers"][0]["resources"]
    if mode == devices.DRA:
        (template,) = [r.inputs for r in plan.resources if r.inputs.get("metadata", {}).get("name") == claims[1]]
        assert whole_node_gpus(template["spec"]["spec"]) == 4
        kubernetes_validate.validate(template, "1.35", strict=True)
        assert not devices.requests_plugin_resource(resources)
    else:
        assert claims == claims[:1]
        assert devices.requests_plugin_resource(resources) == ["nvidia.com/gpu", "vpc.amazonaws.com/efa"]


def test_more_nodes_than_the_ultraserver_has_is_refused() -> None:
    config = copy.deepcopy(stack_config(STACK))
    config["ultraserver-eks:gpuNodeGroups"][0]["desiredSize"] = 4
    config["ultraserver-eks:ncclCheck"]["nodes"] = 8
    with pytest.raises(ConfigError, match="ncclCheck.nodes"):
        nccl_check_args(parse_settings(config), DeviceMode())


def test_the_published_run_passes_under_its_bandwidth_and_fails_over_it() -> None:
    run = parse_nccl_output(sample(EKS_SAMPLE))
    passed, evidence = judge_all_reduce(run, "j", 400.0)
    assert passed == [] and "437.89 GB/s at 2147483648 B" in evidence
    (failed,) = judge_all_reduce(run, "j", 500.0)[0]
    assert failed.value == "437.89 GB/s" and "500.00" in failed.allowed


def test_a_run_cut_off_before_its_footer_fails() -> None:
    run = parse_nccl_output(sample("nccl-allreduce-2x-p5-slurm-8B-16G.txt"))
    (problem,) = judge_all_reduce(run, "j", 100.0)[0]
    assert "footer" in problem.key


def test_verify_reads_the_threshold_from_the_stack() -> None:
    config = copy.deepcopy(stack_config(STACK))
    config["ultraserver-eks:ncclCheck"]["minBusBandwidthGbytes"] = 450.0
    expected = expectation(parse_settings(config))
    assert expected.nccl_min_bus_bandwidth_gbytes == 450.0
    cluster = healthy_cluster(expected, nvlink_nodes=2)
    ((group, job),) = expected.nccl_jobs
    launcher = f"{job}-launcher-x"
    cluster.pod_map[(expected.nccl_namespace, launcher_selector(job))] = [
        Pod(launcher, expected.nccl_namespace, "sys-0", "Succeeded", False, "1")
    ]
    cluster.logs[(expected.nccl_namespace, launcher)] = sample(EKS_SAMPLE)
    (verdict,) = [v for v in run_checks(cluster, expected) if v.check == NCCL]
    assert verdict.ultraserver == group and not verdict.passed and "450.00" in verdict.problems[0].allowed


def test_the_shipped_dra_stack_plans_the_check() -> None:
    assert expectation(cli.stack_settings(ROOT, STACK)).nccl_jobs == (("nvl72", "nccl-nvl72"),)
