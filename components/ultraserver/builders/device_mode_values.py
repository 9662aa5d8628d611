"""Helm values that differ by device mode (facts/hardware/devices.py), laid over each chart's base values.

DRA mode follows NVIDIA's DRA install path: the GPU Operator keeps the driver stack, NFD, GFD and DCGM but not its
device plugin (dra-driver-nvidia-gpu 0.4.1 docs/prerequisites.md:41, "installing the GPU Operator with the NVIDIA
Kubernetes Device Plugin disabled"); the DRA driver then allocates GPUs too, which its chart only renders with
``gpuResourcesEnabledOverride`` set (v0.4.1 deployments/helm/dra-driver-nvidia-gpu/templates/validation.yaml:33-39);
and DRANET publishes the EFA devices instead of the EFA device plugin.
"""

from __future__ import annotations

from typing import Any

from ultraserver.facts.hardware import devices
from ultraserver.facts.hardware.devices import DeviceMode
from ultraserver.facts.kubernetes.scheduling import GPU_PRESENT_LABEL
from ultraserver.facts.kubernetes.spares import GPU_NODE_DAEMON_TOLERATIONS


def gpu_operator_mode_values(mode: DeviceMode) -> dict[str, Any]:
    """GPU Operator values of the mode: the device plugin is on only in plugins mode (values.yaml devicePlugin)."""
    return {"devicePlugin": {"enabled": not mode.dra}}


def dra_driver_mode_values(mode: DeviceMode) -> dict[str, Any]:
    """DRA driver values of the mode: ComputeDomains always, GPUs in DRA mode (values.yaml resources.gpus.enabled)."""
    gpus = mode.dra
    values: dict[str, Any] = {"resources": {"gpus": {"enabled": gpus}, "computeDomains": {"enabled": True}}}
    if gpus:
        values["gpuResourcesEnabledOverride"] = True
    return values


def dranet_values() -> dict[str, Any]:
    """aws-dranet values: on the tainted GPU nodes only (the chart's affinity already limits it to EFA instance
    types, templates/daemonset.yaml), with the chart's DeviceClass kept (deviceClass.create, name)."""
    return {
        "tolerations": [dict(t) for t in GPU_NODE_DAEMON_TOLERATIONS],
        "nodeSelector": {GPU_PRESENT_LABEL: "true"},
        "deviceClass": {"create": True, "name": devices.EFA_DEVICE_CLASS},
    }
