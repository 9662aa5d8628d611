"""DRANET (chart aws-dranet): EFA devices as DRA ResourceSlices, in place of the EFA device plugin in DRA mode."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

from ultraserver.arguments import checked
from ultraserver.builders.device_mode_values import dranet_values
from ultraserver.config.settings import ReleaseSettings
from ultraserver.facts.pins import charts
from ultraserver.resources.helm_release import ChartRelease, ChartTarget

# The chart README installs it into kube-system, like the EFA device plugin; as a DaemonSet on every GPU node it skips
# Helm's wait and is not atomic (charts.ON_GPU_NODES).
DRANET_RELEASE = ChartTarget(charts.DRANET, "aws-dranet", "kube-system", False)


@checked()
@dataclass
class DranetArgs:
    """Inputs of the DRANET release."""

    release: ReleaseSettings = field(default_factory=ReleaseSettings)
    """Version, values override and Helm options."""


class Dranet(ChartRelease):
    """DRANET on the GPU nodes, creating the EFA DeviceClass (efa.networking.k8s.aws)."""

    def __init__(self, name: str, args: DranetArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:Dranet", name, DRANET_RELEASE, dranet_values(), args.release, opts)
