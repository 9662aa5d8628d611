"""The stack settings model: every setting once, with its type, default, bounds or pattern and a one-line doc.

Attribute names are what the program reads (``settings.gpu_node_groups[0].availability_zone``); aliases are
the stack keys as written (``ultraserver-eks:gpuNodeGroups[0].availabilityZone``). Rules that span several
fields live in ``config.rules``; turning raw Pulumi config into ``Settings`` lives in ``config.load``.
The JSON Schema of stack files (stacks/stack.schema.json) and the settings reference (docs/settings.md) come from here.

This module is the whole stack; each section has its own by subject: ``config.cluster_model`` (control plane,
add-ons, system nodes), ``config.network_model``, ``config.gpu_model``, ``config.kubernetes_model`` (with a chart
release's in ``config.release_model``), ``config.check_model``, ``config.alert_model`` and ``config.aws_identity``;
field types live in ``config.fields``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field, StrictBool, ValidationInfo, field_validator
from pydantic.json_schema import SkipJsonSchema

from ultraserver.config.alert_model import AlertSettings
from ultraserver.config.aws_identity import AwsIdentitySettings
from ultraserver.config.check_model import (
    EfaCheckSettings,
    HealthSettings,
    ImexCheckSettings,
    NcclCheckSettings,
)
from ultraserver.config.cluster_model import AddonSettings, ClusterSettings, SystemNodeGroupSettings
from ultraserver.config.fields import PROJECT, pattern
from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.kubernetes_model import KubernetesSettings
from ultraserver.config.network_model import NetworkSettings
from ultraserver.facts.aws import aws_ids, control_plane
from ultraserver.facts.hardware.instances import REGION_ALLOWED, REGION_FIX
from ultraserver.facts.pins import ami

SECTIONS = (
    "cluster",
    "network",
    "systemNodeGroup",
    "gpuNodeGroups",
    "addons",
    "kubernetes",
    "imexCheck",
    "health",
    "efaCheck",
    "ncclCheck",
    "alerts",
    "autoDeploy",
    "acceptUntestedVersions",
)


class Settings(AwsIdentitySettings):
    """Everything a stack declares."""

    project: SkipJsonSchema[str] = Field(PROJECT, alias="__project", description="Pulumi project name.")
    stack: SkipJsonSchema[str] = Field("dev", alias="__stack", description="Pulumi stack name.")
    region: Annotated[str, pattern(aws_ids.REGION, REGION_ALLOWED, fix=REGION_FIX)] = Field(
        alias="aws:region", description="AWS region."
    )
    cluster: ClusterSettings = Field(description="The EKS control plane.")
    network: NetworkSettings = Field(default_factory=NetworkSettings, description="The VPC and subnets.")
    system_node_group: SystemNodeGroupSettings = Field(
        default_factory=SystemNodeGroupSettings, description="The CPU node group for controllers."
    )
    gpu_node_groups: tuple[GpuNodeGroupSettings, ...] = Field((), description="GB200 node groups.")
    addons: AddonSettings = Field(default_factory=AddonSettings, description="EKS managed add-on versions.")
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings, description="Helm releases.")
    imex_check: ImexCheckSettings = Field(default_factory=ImexCheckSettings, description="The IMEX bandwidth check.")
    health: HealthSettings = Field(default_factory=HealthSettings, description="Node health.")
    efa_check: EfaCheckSettings = Field(default_factory=EfaCheckSettings, description="The EFA bandwidth check.")
    nccl_check: NcclCheckSettings = Field(
        default_factory=NcclCheckSettings, description="NCCL all-reduce over one UltraServer's ComputeDomain and EFA."
    )
    alerts: AlertSettings = Field(
        default_factory=AlertSettings, description="Capacity Block alerts (EventBridge rules to an SNS topic)."
    )
    auto_deploy: StrictBool = Field(False, description="Deploy this stack automatically on pushes to main (CI).")
    accept_untested_versions: StrictBool = Field(
        False, description="Allow chart and add-on versions outside the tested set (a warning instead of an error)."
    )

    @property
    def alerts_enabled(self) -> bool:
        """Whether the stack declares the Capacity Block alerts (on by default with GPU node groups)."""
        return bool(self.gpu_node_groups) if self.alerts.enabled is None else self.alerts.enabled

    @property
    def control_plane_tier(self) -> str:
        """The EKS control-plane tier: the setting, or with auto the tier for the stack's GPU nodes."""
        if self.cluster.control_plane_tier != control_plane.AUTO:
            return str(self.cluster.control_plane_tier)
        return control_plane.tier_for(sum(g.nodes_per_group * g.node_groups for g in self.gpu_node_groups))

    @property
    def alert_reservation_ids(self) -> tuple[str, ...]:
        """Reservations the alerts match; empty (every reservation) when a group targets a resource group."""
        if any(g.grouped for g in self.gpu_node_groups):
            return ()
        return tuple(rid for g in self.gpu_node_groups for rid in g.all_reservation_ids)

    @field_validator("gpu_node_groups", mode="after")
    @classmethod
    def _default_release_versions(
        cls, groups: tuple[GpuNodeGroupSettings, ...], info: ValidationInfo
    ) -> tuple[GpuNodeGroupSettings, ...]:
        """Managed EKS AMIs follow the toolkit's pinned release of the cluster's Kubernetes minor."""
        cluster = info.data.get("cluster")
        if cluster is None:  # the cluster section is invalid: its own error says why
            return groups
        pin = ami.default_release_version(cluster.kubernetes_version)
        return tuple(
            g.model_copy(update={"release_version": pin}) if not (g.release_version or g.ami_id or g.ami_release) else g
            for g in groups
        )


def known_keys(model: type[BaseModel]) -> list[str]:
    """The stack keys a model accepts."""
    return sorted(
        str(f.alias or name) for name, f in model.model_fields.items() if not str(f.alias or "").startswith("__")
    )


def key(s: Settings, path: str) -> str:
    """The stack key of a path inside the project namespace."""
    return f"{s.project}:{path}"
