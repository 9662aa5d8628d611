"""NVIDIA DRA driver (k8s-dra-driver-gpu 25.8) objects that verify looks for in a running cluster.

Sources: NVIDIA/k8s-dra-driver-gpu `deployments/helm/nvidia-dra-driver-gpu/templates/kubeletplugin.yaml` and
`_helpers.tpl` (DaemonSet `<chart name>-kubelet-plugin`, pod label `nvidia-dra-driver-gpu-component: kubelet-plugin`),
and the chart's DeviceClass templates (`compute-domain-daemon.nvidia.com`, `compute-domain-default-channel.nvidia.com`
when `resources.computeDomains.enabled`). The pod label is the same across the chart's stored versions; that it is
unchanged at exactly v25.8.0 is UNVERIFIED (that blob was not read).
"""

from __future__ import annotations

from typing import Any

DRA_DRIVER_NAMESPACE = "nvidia-dra-driver-gpu"
"""Namespace the toolkit installs the DRA driver release into unless the stack overrides it."""
COMPUTE_DOMAIN_DEVICE_CLASSES = ("compute-domain-daemon.nvidia.com", "compute-domain-default-channel.nvidia.com")
"""DeviceClasses the driver creates for ComputeDomains (the toolkit enables only ComputeDomains)."""
CHANNEL_DEVICE_CLASS = COMPUTE_DOMAIN_DEVICE_CLASSES[1]
"""The DeviceClass of a workload's ComputeDomain channel claim."""


def channel_claim_spec() -> dict[str, Any]:
    """The ResourceClaimSpec of the channel claim template the driver's controller creates for a ComputeDomain (one
    request "channel" of CHANNEL_DEVICE_CLASS, count defaulted to 1; the domain and allocation mode ride in opaque
    config): kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1 templates/compute-domain-workload-claim-template.tmpl.yaml
    lines 12-27, filled by cmd/compute-domain-controller/resourceclaimtemplate.go:364-392 (same template at v25.8.0).
    Kueue counts it per pod (facts/kueue_admission.py)."""
    return {"devices": {"requests": [{"name": "channel", "exactly": {"deviceClassName": CHANNEL_DEVICE_CLASS}}]}}


KUBELET_PLUGIN_SELECTOR = "nvidia-dra-driver-gpu-component=kubelet-plugin"
"""Label selector of the kubelet plugin pods (one per GPU node)."""
