"""DRA driver for NVIDIA GPUs (dra-driver-nvidia-gpu 0.4.1) objects the toolkit applies, and verify looks for.

Sources: kubernetes-sigs/dra-driver-nvidia-gpu at tag v0.4.1 (commit 764900e7),
`deployments/helm/dra-driver-nvidia-gpu/templates/kubeletplugin.yaml:20` (DaemonSet `<name>-kubelet-plugin`) and
`_helpers.tpl:5, 83-84` (`<name>` is `nameOverride` or the chart name; pod label `<name>-component: kubelet-plugin`),
and the chart's DeviceClass templates (`compute-domain-daemon.nvidia.com`, `compute-domain-default-channel.nvidia.com`
when `resources.computeDomains.enabled`). The toolkit sets `nameOverride` to the pre-0.4 chart name
(facts/charts.py LEGACY_DRA_DRIVER_NAME), so these names are the ones 25.x used.
"""

from __future__ import annotations

from typing import Any

from ultraserver.facts.charts import LEGACY_DRA_DRIVER_NAME

DRA_DRIVER_NAMESPACE = LEGACY_DRA_DRIVER_NAME
"""Namespace the toolkit installs the DRA driver release into unless the stack overrides it."""
COMPUTE_DOMAIN_CRD = "computedomains.resource.nvidia.com"
"""The ComputeDomain CRD; its sibling ComputeDomainClique CRD arrived in 25.12 (facts/manifests.py DRA_DRIVER_CRDS)."""
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


KUBELET_PLUGIN_SELECTOR = f"{LEGACY_DRA_DRIVER_NAME}-component=kubelet-plugin"
"""Label selector of the kubelet plugin pods (one per GPU node)."""
