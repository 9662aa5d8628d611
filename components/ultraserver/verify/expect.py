"""What a deployed stack should look like, derived from its settings: the yardstick every check measures against."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ultraserver.builders.efa_check import efa_check_args
from ultraserver.builders.expected_nodes import NodeGroupExpectation, node_group_expectations
from ultraserver.builders.helm_values import deep_merge, gpu_operator_values
from ultraserver.builders.imex_check import imex_check_args
from ultraserver.builders.nccl_check import NAMESPACE as NCCL_NAMESPACE
from ultraserver.builders.nccl_check import nccl_check_args
from ultraserver.config.settings import Settings
from ultraserver.config.views import device_mode
from ultraserver.facts.hardware import devices
from ultraserver.facts.hardware.devices import COMPUTE_DOMAIN_DEVICE_CLASSES, DRA_DRIVER_NAMESPACE
from ultraserver.facts.kubernetes.scheduling import system_node_labels
from ultraserver.facts.pins import gpu_operator


@dataclass(frozen=True)
class StackExpectation:
    """Everything verify checks for one stack."""

    groups: tuple[NodeGroupExpectation, ...]
    dra_namespace: str = DRA_DRIVER_NAMESPACE
    device_classes: tuple[str, ...] = COMPUTE_DOMAIN_DEVICE_CLASSES
    imex_namespace: str = ""
    """Namespace of the nvbandwidth jobs; empty when the stack deploys no IMEX check."""
    nvlink_threshold_gbps: float = 0.0
    efa_namespace: str = ""
    """Namespace of the EFA check's MPIJob; empty when the stack deploys no EFA check."""
    efa_job: str = ""
    efa_min_bus_bandwidth_gbps: float = 0.0
    efa_ultraservers: int = 0
    efa_node_groups: tuple[str, ...] = ()
    """The node groups the EFA check's workers may run on."""
    nccl_jobs: tuple[tuple[str, str], ...] = ()
    """(UltraServer, MPIJob) of each NCCL check run; empty when ncclCheck is off."""
    nccl_namespace: str = NCCL_NAMESPACE
    nccl_min_bus_bandwidth_gbytes: float = 0.0
    gpu_operator_namespace: str = gpu_operator.NAMESPACE
    gpu_operands: tuple[str, ...] = tuple(gpu_operator.OPERAND_APPS.values())
    """The `app` label of each GPU Operator operand the stack enables: one Running, Ready pod of each per GPU node."""


def dra_device_classes(mode: str) -> tuple[str, ...]:
    """The DeviceClasses DRA mode adds: GPUs (the DRA driver) and EFA devices (DRANET)."""
    return (devices.GPU_DEVICE_CLASS, devices.EFA_DEVICE_CLASS) if mode == devices.DRA else ()


def gpu_operands(values: Mapping[str, Any]) -> tuple[str, ...]:
    """The operands the GPU Operator runs on every GPU node with these values over the toolkit's (the chart enables
    each by default)."""
    merged = deep_merge(gpu_operator_values(system_node_labels()), values)
    return tuple(
        app
        for section, app in gpu_operator.OPERAND_APPS.items()
        if (merged.get(section) or {}).get("enabled", section in gpu_operator.DEFAULT_ON) is not False
    )


def expectation(settings: Settings) -> StackExpectation:
    """The expected cluster of a stack."""
    mode = device_mode(settings)
    check = imex_check_args(settings, mode)
    groups = node_group_expectations(settings)
    efa_check = efa_check_args(settings, mode)
    nccl = nccl_check_args(settings, mode)
    return StackExpectation(
        groups=tuple(groups),
        efa_namespace=efa_check.namespace if efa_check else "",
        efa_job=efa_check.name if efa_check else "",
        efa_min_bus_bandwidth_gbps=efa_check.min_bus_bandwidth_gbps if efa_check else 0.0,
        efa_ultraservers=efa_check.ultraservers if efa_check else 0,
        efa_node_groups=tuple(efa_check.node_groups) if efa_check else (),
        dra_namespace=settings.kubernetes.dra_driver.namespace or DRA_DRIVER_NAMESPACE,
        device_classes=COMPUTE_DOMAIN_DEVICE_CLASSES + dra_device_classes(settings.kubernetes.devices),
        imex_namespace=check.namespace if check else "",
        nccl_jobs=tuple((j.name.removeprefix("nccl-"), j.name) for j in nccl),
        nccl_min_bus_bandwidth_gbytes=nccl[0].min_bus_bandwidth_gbytes if nccl else 0.0,
        nvlink_threshold_gbps=check.threshold_gbps if check else 0.0,
        gpu_operator_namespace=settings.kubernetes.gpu_operator.namespace or gpu_operator.NAMESPACE,
        gpu_operands=gpu_operands(settings.kubernetes.gpu_operator.values),
    )
