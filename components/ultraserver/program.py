"""The stack program shared by ``pulumi up`` and ``ultraserver plan``."""

from __future__ import annotations

import pulumi

from .platform import Platform, PlatformArgs
from .settings import load_settings


def run() -> Platform:
    """Validate the stack settings, declare the platform and export its outputs."""
    settings = load_settings()
    platform = Platform("ultraserver", PlatformArgs(settings=settings))
    pulumi.export("clusterName", platform.cluster.name)
    pulumi.export("kubeconfig", platform.cluster.kubeconfig)
    pulumi.export("vpcId", platform.network.vpc_id)
    pulumi.export("efaSecurityGroupId", platform.network.efa_security_group.id)
    pulumi.export("gpuNodeGroups", {name: {"fullSize": g.full_size, "efaDevicesPerNode": g.layout.efa_devices} for name, g in platform.gpu_node_groups.items()})
    return platform
