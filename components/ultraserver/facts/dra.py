"""NVIDIA DRA driver (k8s-dra-driver-gpu 25.8) objects that verify looks for in a running cluster.

Sources: NVIDIA/k8s-dra-driver-gpu `deployments/helm/nvidia-dra-driver-gpu/templates/kubeletplugin.yaml` and
`_helpers.tpl` (DaemonSet `<chart name>-kubelet-plugin`, pod label `nvidia-dra-driver-gpu-component: kubelet-plugin`),
and the chart's DeviceClass templates (`compute-domain-daemon.nvidia.com`, `compute-domain-default-channel.nvidia.com`
when `resources.computeDomains.enabled`). The pod label is the same across the chart's stored versions; that it is
unchanged at exactly v25.8.0 is UNVERIFIED (that blob was not read).
"""

from __future__ import annotations

DRA_DRIVER_NAMESPACE = "nvidia-dra-driver-gpu"
"""Namespace the toolkit installs the DRA driver release into unless the stack overrides it."""
COMPUTE_DOMAIN_DEVICE_CLASSES = ("compute-domain-daemon.nvidia.com", "compute-domain-default-channel.nvidia.com")
"""DeviceClasses the driver creates for ComputeDomains (the toolkit enables only ComputeDomains)."""
KUBELET_PLUGIN_SELECTOR = "nvidia-dra-driver-gpu-component=kubelet-plugin"
"""Label selector of the kubelet plugin pods (one per GPU node)."""
