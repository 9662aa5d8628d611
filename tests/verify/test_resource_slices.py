"""`ultraserver verify` in DRA mode: each GPU node's ResourceSlices publish its GPUs and EFA devices, paired by
PCIe root as the EFA layout says (fixtures in the drivers' published formats: helpers/resource_slices.py)."""

from __future__ import annotations

import pytest
from helpers.fake_cluster import healthy_cluster
from helpers.resource_slices import efa_slice, gpu_slice
from helpers.stacks import ROOT
from ultraserver import cli
from ultraserver.facts.hardware import devices
from ultraserver.problems import WARNING
from ultraserver.verify.checks import planned_checks, run_checks
from ultraserver.verify.clients import ClusterError
from ultraserver.verify.expect import StackExpectation, expectation
from ultraserver.verify.report import format_verdicts
from ultraserver.verify.verdict import NODE_FACTS, RESOURCE_SLICES

STACK = "gb200-x72-dra"


def expected() -> StackExpectation:
    return expectation(cli.stack_settings(ROOT, STACK))


def verdict(cluster: object, check: str = RESOURCE_SLICES):  # type: ignore[no-untyped-def]
    verdicts = run_checks(cluster, expected(), node_facts_only=True)  # type: ignore[arg-type]
    (found,) = [v for v in verdicts if v.check == check]
    return found


def test_a_healthy_dra_cluster_passes_both_node_checks_without_plugin_resources() -> None:
    cluster = healthy_cluster(expected(), nvlink_nodes=2)
    assert all(not n.allocatable for n in cluster.node_list)
    assert verdict(cluster).passed and verdict(cluster, NODE_FACTS).passed
    assert (expected().groups[0].name, RESOURCE_SLICES) in planned_checks(expected())
    assert set(expected().device_classes) >= {devices.GPU_DEVICE_CLASS, devices.EFA_DEVICE_CLASS}


def test_the_plugins_stack_has_no_resource_slice_check() -> None:
    plugins = expectation(cli.stack_settings(ROOT, "gb200-x72"))
    assert all(c != RESOURCE_SLICES for _, c in planned_checks(plugins))


def test_a_node_missing_a_gpu_fails_naming_the_node() -> None:
    cluster = healthy_cluster(expected(), nvlink_nodes=2)
    node = cluster.node_list[3].name
    index = next(
        i for i, s in enumerate(cluster.slices) if s["spec"]["nodeName"] == node and "gpu" in s["spec"]["driver"]
    )
    cluster.slices[index] = gpu_slice(node, 3)
    found = verdict(cluster)
    assert not found.passed
    (problem,) = found.problems
    assert node in problem.key and problem.value == "3 GPUs"


def test_efa_devices_on_other_pcie_roots_are_a_warning_as_whole_node_claims_do_not_pair() -> None:
    cluster = healthy_cluster(expected(), nvlink_nodes=2)
    node = cluster.node_list[0].name
    index = next(
        i for i, s in enumerate(cluster.slices) if s["spec"]["nodeName"] == node and s["spec"]["driver"] == "dra.net"
    )
    # Same number of EFA devices, but two under GPU 0's root and none under GPU 3's.
    cluster.slices[index] = efa_slice(node, (2, 1, 1, 0))
    found = verdict(cluster)
    (problem,) = found.problems
    assert devices.PCIE_ROOT_ATTRIBUTE in problem.key and "gpu-3@pci000b:00: 0" in str(problem.value)
    assert problem.level == WARNING and found.passed and "whole-node claims are unaffected" in problem.fix
    report = format_verdicts([found])
    assert "passed with warnings" in report and "gpu-3@pci000b:00: 0" in report and "FAILED" not in report


def test_the_ena_primary_is_not_counted_as_an_efa_device() -> None:
    cluster = healthy_cluster(expected(), nvlink_nodes=2)
    node = cluster.node_list[0].name
    index = next(
        i for i, s in enumerate(cluster.slices) if s["spec"]["nodeName"] == node and s["spec"]["driver"] == "dra.net"
    )
    cluster.slices[index] = efa_slice(node, (1, 1, 1), ena=True)
    (problem,) = [p for p in verdict(cluster).problems if "dra.net" in p.key]
    assert problem.value == "3 EFA devices"


def test_unreadable_slices_fail_the_check_with_the_api_error() -> None:
    cluster = healthy_cluster(expected(), nvlink_nodes=2)

    def broken() -> list[dict]:
        raise ClusterError("listing resource.k8s.io/v1 resourceslices through k failed: HTTP 403 Forbidden")

    cluster.resource_slices = broken  # type: ignore[method-assign]
    found = verdict(cluster)
    assert not found.passed and "403" in str(found.problems[0])


@pytest.mark.parametrize("attribute", ["type", "gpu.nvidia.com/type"])
def test_gpu_attributes_are_read_qualified_or_not(attribute: str) -> None:
    cluster = healthy_cluster(expected(), nvlink_nodes=2)
    for item in cluster.slices:
        for device in item["spec"]["devices"]:
            if item["spec"]["driver"] == "gpu.nvidia.com":
                device["attributes"][attribute] = device["attributes"].pop("type")
    assert verdict(cluster).passed
