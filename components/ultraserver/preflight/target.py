"""What preflight checks for a stack: its GPU groups' reservations and zones, the AMI, existing subnets, quotas."""

from __future__ import annotations

from dataclasses import dataclass, field

from ultraserver.config.access_entries import DeployedEntry
from ultraserver.config.settings import Settings
from ultraserver.config.subnets import ips_needed
from ultraserver.config.views import gpu_ip_needs
from ultraserver.facts.capacity.capacity_blocks import CapacityBlock
from ultraserver.facts.pins import addons, ami


@dataclass
class PreflightGroup:
    """One GPU node group as preflight sees it."""

    name: str  # node group name, for messages
    ultraserver_type: str  # a type of the UltraServer catalog (facts.hardware.ultraservers.TYPES)
    capacity_reservation_ids: list[str]  # one per UltraServer; empty in grouped mode
    capacity_reservation_resource_group_arn: str | None
    ultraserver_count: int
    instances_per_ultraserver: int  # 9 or 18
    availability_zone: str  # zone of the GPU subnets, e.g. us-east-1-dfw-2a
    managed: bool  # managed node group (counts against the MNG quota)
    instance_type: str  # the EC2 instance type the group launches (its UltraServer type's)
    blocks: tuple[CapacityBlock, ...] = field(default=())  # every block of capacityBlocks (one without it)
    settings_key: str = ""  # the group's stack key, e.g. gpuNodeGroups[0]
    zone_not_in_catalog: bool = False  # the zone is outside facts.hardware.instances.OFFERED_ZONES: ask EC2
    successive: bool = False  # the blocks come from capacityBlocks (else reservationWindow)


@dataclass
class PreflightTarget:
    """Everything preflight checks, built from a stack's settings."""

    region: str
    kubernetes_version: str  # e.g. "1.33"
    ami_ssm_parameter: str | None  # SSM name to resolve; None when an image id is pinned
    ami_release: str | None  # pinned release, if any
    groups: list[PreflightGroup]
    existing_subnets: dict[str, str]  # subnet id -> expected zone ("" = any regional zone)
    required_free_ips: dict[str, int]  # subnet id -> IPs needed for planned nodes + pods
    managed_node_group_count: int  # MNGs the stack declares (system + GPU)
    end_horizon_hours: int = 48
    addon_versions: dict[str, str] = field(default_factory=dict)  # EKS add-on -> the addonVersion the stack pins
    admin_principal_arns: tuple[str, ...] = ()  # cluster.adminPrincipalArns
    cluster_name: str = ""  # cluster.name: an existing cluster's access entries decide the creator check
    control_plane_zones: tuple[str, ...] = ()  # network.availabilityZones of a new VPC (the plan cannot check them)
    preview_principal_arns: tuple[str, ...] = ()  # cluster.previewPrincipalArns
    stack: str = ""  # the stack's name, which its access entries carry in their ultraserver.io/stack tag
    deployed_entries: tuple[DeployedEntry, ...] | None = None  # the access entries of --deployed; None: not given


def target_from_settings(settings: Settings) -> PreflightTarget:
    """What to check for a stack: its reservations, zones, AMI, existing subnets and node-group count."""

    version = settings.cluster.kubernetes_version
    # The pinned EKS AMI release of the first group that uses one (its dated SSM parameter must exist in the
    # region), else the first custom AMI's release; a custom AMI has no SSM parameter to resolve.
    pinned = next((g.release_version for g in settings.gpu_node_groups if g.release_version), None)
    release = pinned or next((g.ami_release for g in settings.gpu_node_groups if g.ami_release), None)
    parameter = ami.pinned_ssm_parameter_name(version, pinned) if pinned else None
    groups = _gpu_groups(settings)
    subnets, needs = _subnet_needs(settings)
    managed = 1 + sum(g.node_groups for g in settings.gpu_node_groups if g.mode == "managed")
    target = PreflightTarget(settings.region, version, parameter, release, groups, subnets, needs, managed)
    target.addon_versions = pinned_addons(settings)
    target.admin_principal_arns = settings.cluster.admin_principal_arns
    target.cluster_name = settings.cluster.name
    target.preview_principal_arns = settings.cluster.preview_principal_arns
    target.stack = settings.stack
    if not settings.network.existing:
        target.control_plane_zones = tuple(settings.network.availability_zones)
    return target


def _gpu_groups(settings: Settings) -> list[PreflightGroup]:
    """The stack's GPU groups as preflight checks them: reservations, zone, type, count and blocks."""
    return [
        PreflightGroup(
            name=g.name,
            ultraserver_type=g.ultraserver_type,
            # The first block's; check_reservations moves to the block current at its `now`.
            capacity_reservation_ids=list(g.blocks[0].reservation_ids),
            capacity_reservation_resource_group_arn=g.capacity_reservation_resource_group_arn or None,
            ultraserver_count=g.ultraservers,
            instances_per_ultraserver=g.instances_per_ultraserver,
            availability_zone=g.availability_zone,
            managed=g.mode == "managed",
            instance_type=g.instance_type,
            blocks=g.blocks,
            settings_key=f"gpuNodeGroups[{index}]",
            zone_not_in_catalog=g.zone_not_in_catalog,
            successive=bool(g.capacity_blocks),
        )
        for index, g in enumerate(settings.gpu_node_groups)
    ]


def _subnet_needs(settings: Settings) -> tuple[dict[str, str], dict[str, int]]:
    """Existing subnets (id -> expected zone, "" for any regional zone) and the IPs each must have free."""
    net = settings.network
    subnets: dict[str, str] = {s: "" for s in (*net.private_subnet_ids, *net.public_subnet_ids)}
    needs: dict[str, int] = {}
    if net.private_subnet_ids:
        system = ips_needed(settings.system_node_group.max_size, net.pods_per_node, 1)
        needs.update({s: -(-system // len(net.private_subnet_ids)) for s in net.private_subnet_ids})
    zone_needs = gpu_ip_needs(settings) if net.existing else {}
    for zone, ids in net.gpu_subnet_ids.items():
        subnets.update({s: zone for s in ids})
        needs.update({s: -(-zone_needs.get(zone, 0) // len(ids)) for s in ids})
    return subnets, needs


def pinned_addons(settings: Settings) -> dict[str, str]:
    """The addonVersion of every EKS add-on the stack installs and pins (override, else the toolkit's pin)."""
    overrides = {
        addons.VPC_CNI: settings.addons.vpc_cni,
        addons.KUBE_PROXY: settings.addons.kube_proxy,
        addons.COREDNS: settings.addons.coredns,
        addons.POD_IDENTITY_AGENT: settings.addons.pod_identity_agent,
    }
    if settings.health.node_monitoring_agent:
        overrides[addons.NODE_MONITORING_AGENT] = ""
    version = settings.cluster.kubernetes_version
    chosen = {name: addons.addon_version(name, override, version) for name, override in overrides.items()}
    return {name: pinned for name, pinned in chosen.items() if pinned}
