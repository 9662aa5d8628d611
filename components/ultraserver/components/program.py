"""The stack program shared by ``pulumi up`` and ``ultraserver plan``."""

from __future__ import annotations

import pulumi

from ultraserver.components.platform import Platform, PlatformArgs
from ultraserver.config.settings import PROJECT, Settings, parse_settings
from ultraserver.problems import ConfigError


def load_settings() -> Settings:
    """Read and validate the running Pulumi program's stack config."""
    # The SDK has no public "all keys" call; the config map is what the engine handed the program.
    from pulumi.runtime.config import CONFIG

    return parse_settings(dict(CONFIG.get()), pulumi.get_project() or PROJECT, pulumi.get_stack())


class StackConfigError(ConfigError, pulumi.RunError):
    """Invalid stack settings: Pulumi prints a RunError as its message alone, without a traceback."""


def run() -> Platform:
    """Validate the stack settings, declare the platform and export its outputs."""
    try:
        platform = Platform("ultraserver", PlatformArgs(settings=load_settings()))
    except StackConfigError:
        raise
    except ConfigError as err:
        raise StackConfigError(err.items) from None
    pulumi.export("clusterName", platform.cluster.name)
    pulumi.export("kubeconfig", platform.cluster.kubeconfig)
    pulumi.export("vpcId", platform.network.vpc_id)
    pulumi.export("efaSecurityGroupId", platform.network.efa_security_group.id)
    pulumi.export(
        "gpuNodeGroups",
        {
            name: {"fullSize": g.full_size, "efaDevicesPerNode": g.layout.efa_devices}
            for name, g in platform.gpu_node_groups.items()
        },
    )
    return platform
