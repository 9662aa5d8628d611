"""DRANET (chart aws-dranet): EFA devices as DRA ResourceSlices, in place of the EFA device plugin in DRA mode."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

from ultraserver.builders.device_mode_values import dranet_values
from ultraserver.config.settings import ReleaseSettings
from ultraserver.facts import charts
from ultraserver.resources.helm_release import ChartRelease, ChartTarget

# The chart README installs it into kube-system, like the EFA device plugin; a GPU node that is not ready must not
# roll the release back on every node, so it skips the await as the plugin does.
DRANET = ChartTarget(charts.DRANET, "aws-dranet", "kube-system", False, skip_await=True)


@dataclass
class DranetArgs:
    """Inputs of the DRANET release."""

    release: ReleaseSettings = field(default_factory=ReleaseSettings)
    """Version, values override and Helm options."""


class Dranet(ChartRelease):
    """DRANET on the GPU nodes, creating the EFA DeviceClass (efa.networking.k8s.aws)."""

    def __init__(self, name: str, args: DranetArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:Dranet", name, DRANET, dranet_values(), args.release, opts)
