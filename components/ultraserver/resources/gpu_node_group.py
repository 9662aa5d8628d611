"""GpuNodeGroup: capacity-block GB200 nodes as an EKS managed node group or a self-managed Auto Scaling group.

Its arguments are the group's settings (``GpuNodeGroupSettings``, the model of a stack file's ``gpuNodeGroups[]``
entry, checked by the same rules) and the wiring: the cluster as an object (a ``Cluster`` or its ``ClusterCoreData``,
as pulumi-eks's node groups take ``Cluster | CoreData``), subnets, security groups, role, tags and the clock.

Both modes share one launch template (``launch_template``: instance type, capacity-block market, reservation
target, EFA interfaces, IMDSv2, encrypted gp3 root, NodeConfig user data); ``managed`` and ``self_managed``
declare the group itself.

AMI: pinned, never "latest". Managed groups default to ``amiType`` AL2023_ARM_64_NVIDIA with a pinned
``release_version`` (the facts/pins/ami.py default for the cluster's minor) and a template without ImageId;
self-managed groups boot that release's AMI id from its dated SSM parameter; ``ami_id`` + ``ami_release``
boot a custom AMI. So a ``pulumi up`` with unchanged settings never makes a new template version, which would
roll every node of a group whose capacity block has no spare capacity.

Sizes: one group per UltraServer (reservation ID, 9 or 18 instances). Only self-managed groups may target a
capacity-reservation resource group with ``ultraserver_count`` x instances; no group holds more than 450
nodes. With a reservation window, scheduled actions bring the group to full size when the block starts and
to 0 ``scale_down_lead_minutes`` before it ends; the group's own desired size follows the same window. With
``capacity_blocks`` (successive blocks) the template targets the block current at ``now`` and the actions cover it
and every later block (docs/running-on-capacity-blocks.md).

Upgrades (EKS: capacity-block groups must be at desired size 0 first): see docs/deploy.md, "Upgrading GPU nodes".
``scale_to_zero_for_upgrade`` holds the group at 0 and tags it ``ultraserver.io/upgrade-safe=true``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property

import pulumi
import pulumi_aws as aws

from ultraserver import clock
from ultraserver.arguments import checked, checked_component, moved_into
from ultraserver.builders.nodeconfig import ClusterDetails
from ultraserver.config.argument_rules import tag_problems
from ultraserver.config.expiry import program_blocks_ended
from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.gpu_rules import group_problems
from ultraserver.config.node_group_spec import NodeGroupSpec, node_group_spec
from ultraserver.facts.aws.aws_ids import UPGRADE_SAFE
from ultraserver.facts.capacity.capacity_blocks import CapacityBlock
from ultraserver.facts.hardware.efa import LayoutSummary
from ultraserver.facts.pins import ami
from ultraserver.problems import ERROR, ConfigError, Problem
from ultraserver.resources.child_options import child_options
from ultraserver.resources.cluster import Cluster, ClusterCoreData
from ultraserver.resources.launch_template import NodeImage, gpu_launch_template
from ultraserver.resources.managed import managed_node_group
from ultraserver.resources.node_role import node_identity
from ultraserver.resources.schedules import declare_schedules
from ultraserver.resources.self_managed import self_managed_group

ARGS = "GpuNodeGroupArgs"
SETTINGS = f"{ARGS}.settings"
MOVED = {
    **moved_into(
        "GpuNodeGroupSettings",
        "mode",
        "capacity_reservation_resource_group_arn",
        "ultraserver_type",
        "ultraserver_count",
        "desired_size",
        "release_version",
        "ami_release",
        "labels",
        "scale_to_zero_for_upgrade",
        "local_storage",
        "root_volume_size_gib",
        "imds_hop_limit",
        "auto_repair",
        interfaces="efaLayout=<preset, or a list of interfaces>",
        capacity_reservation_id="capacity_reservation_ids=[<cr-...>]",
        image_id="ami_id=...",
        reservation_window="reservationWindow={'start': ..., 'end': ...}",
        capacity_blocks="capacityBlocks=[...]",
    ),
    "instance_type": "remove it: the instance type follows settings' ultraserver_type",
}
"""The arguments of the earlier GpuNodeGroupArgs that are settings now, and what to write instead."""


def core_of(cluster: Cluster | ClusterCoreData) -> ClusterCoreData:
    """The cluster's core data, from the component or as given."""
    return cluster.core if isinstance(cluster, Cluster) else cluster


@checked(MOVED)
@dataclass
class GpuNodeGroupArgs:
    """Inputs of a capacity-block GPU node group: its settings, and what comes from other resources."""

    settings: GpuNodeGroupSettings
    """The group: a stack file's gpuNodeGroups[] entry as a model (``GpuNodeGroupSettings(name=..., ...)``)."""
    cluster: Cluster | ClusterCoreData
    """The cluster the nodes join: a Cluster component, or its ClusterCoreData (e.g. from another stack)."""
    subnet_ids: pulumi.Input[Sequence[pulumi.Input[str]]]
    """Subnets in the reservation's Availability Zone only (EKS rejects others for capacity blocks)."""
    security_group_ids: Sequence[pulumi.Input[str]] = ()
    """Extra security groups (the EFA group) for every interface; the cluster security group is always added."""
    position: int = 0
    """Which of the entry's UltraServers this group runs: the position-th reservation of every block."""
    standby: CapacityBlock | None = None
    """With handover standby: the one block this group runs on (config.blocks.standby_groups)."""
    node_role_arn: pulumi.Input[str] | None = None
    """Existing node role; a NodeRole is created when unset."""
    instance_profile_arn: pulumi.Input[str] | None = None
    """Instance profile of node_role_arn; required with it in self-managed mode."""
    kms_key_id: pulumi.Input[str] | None = None
    """KMS key for the root volume; the account default when unset."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """AWS tags for every resource."""
    now: datetime | None = None
    """Clock for the reservation window and the release date check; the current UTC time when unset."""

    @cached_property
    def spec(self) -> NodeGroupSpec:
        """What the group comes to at ``now`` (layout, sizes, blocks and the current one, AMI release, labels), derived
        once from the checked settings."""
        version = core_of(self.cluster).kubernetes_version
        return node_group_spec(self.settings, self.position, self.now or clock.now(), version, self.standby)

    def problems(self) -> list[Problem]:
        """The group's own rules (the stack file's, keyed under ``GpuNodeGroupArgs.settings``) and the wiring's."""
        g, now = self.settings, self.now or clock.now()
        version = core_of(self.cluster).kubernetes_version
        try:
            ami.checked_version(version, f"{ARGS}.cluster.kubernetes_version")
        except ConfigError as error:
            return error.items
        found = [p for p in group_problems(g, SETTINGS, version, now.date()) if p.level == ERROR]
        found += program_blocks_ended(g, SETTINGS, now) + tag_problems(self.tags, f"{ARGS}.tags")
        if isinstance(self.subnet_ids, (list, tuple)) and not self.subnet_ids:
            found.append(
                Problem(
                    f"{ARGS}.subnet_ids",
                    [],
                    "one subnet or more, in the capacity reservation's zone",
                    f"pass the subnets of {g.availability_zone}, e.g. subnet_ids=network.gpu_subnet_ids[zone]",
                )
            )
        if not 0 <= self.position < g.node_groups:
            found.append(
                Problem(
                    f"{ARGS}.position",
                    self.position,
                    f"0 to {g.node_groups - 1}: the entry's UltraServers",
                    "give the index of one of settings' reservations",
                )
            )
        if g.mode == "self-managed" and self.node_role_arn is not None and self.instance_profile_arn is None:
            found.append(
                Problem(
                    f"{ARGS}.instance_profile_arn",
                    None,
                    "the instance profile of node_role_arn (required with it for self-managed nodes)",
                    "pass instance_profile_arn",
                )
            )
        return found


@checked_component
class GpuNodeGroup(pulumi.ComponentResource):
    """Capacity-block GPU nodes with an EFA launch template, in managed or self-managed mode."""

    launch_template: aws.ec2.LaunchTemplate
    node_group: aws.eks.NodeGroup | None
    auto_scaling_group: aws.autoscaling.Group | None
    access_entry: aws.eks.AccessEntry | None
    lifecycle_hook: aws.autoscaling.LifecycleHook | None
    schedules: list[aws.autoscaling.Schedule]
    spec: NodeGroupSpec
    """What the group comes to at ``now``: layout, sizes, blocks and the current one, AMI release, labels."""
    current_block: int
    """Index of the block the group runs on at ``now`` (0 without capacity_blocks)."""
    reservation_id: str | None
    """The reservation the launch template targets (None with a resource group)."""
    node_role_arn: pulumi.Input[str]
    image: NodeImage
    full_size: int
    desired_size: int
    upgrade_safe: bool
    layout: LayoutSummary

    def __init__(self, name: str, args: GpuNodeGroupArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        core, group, spec = core_of(args.cluster), args.settings, args.spec
        super().__init__("ultraserver:index:GpuNodeGroup", name, None, opts)
        # Children repeat the group's own depends_on (e.g. the control-plane security group rules).
        child = child_options(self, opts)
        managed = group.mode == "managed"
        self.spec, self.layout, self.full_size = spec, spec.layout, spec.full_size
        self.upgrade_safe = group.scale_to_zero_for_upgrade
        # With successive blocks the template targets the block current at `now` (the first whose scale-down is ahead):
        # it moves to the next reservation only once the group has scaled to 0, so never rolls nodes inside a block.
        self.current_block = spec.current_block
        self.reservation_id = spec.reservation_id
        self.desired_size = spec.desired_size
        tags = {**args.tags, **spec.tags}
        # Only the group carries the upgrade tag: on the template it would make a new version, itself an upgrade.
        group_tags = {**tags, **({UPGRADE_SAFE: "true"} if self.upgrade_safe else {})}
        self.image = NodeImage(
            release_version=spec.release_version,
            managed=managed,
            ssm_parameter=spec.ami_ssm_parameter,
            image_id=group.ami_id or None,
            ami_release=group.ami_release or None,
        )
        self.node_role_arn, instance_profile_arn, role_ready = node_identity(
            name, args.node_role_arn, args.instance_profile_arn, managed, tags, child
        )
        cluster = pulumi.Output.all(core.name, core.endpoint, core.certificate_authority, core.service_cidr).apply(
            lambda v: ClusterDetails(*v)
        )
        self.launch_template = gpu_launch_template(
            name,
            group,
            spec,
            image=self.image,
            cluster=cluster,
            # With custom security groups in the template EKS adds no cluster security group: name it here.
            security_group_ids=[*args.security_group_ids, core.security_group_id],
            instance_profile_arn=instance_profile_arn,
            kms_key_id=args.kms_key_id,
            tags=tags,
            opts=child,
        )
        # Nodes wait for their role's policies and for what the cluster says they need (the CNI's permissions).
        after = child_options(self, opts, pulumi.ResourceOptions(depends_on=[*role_ready, *core.node_prerequisites]))
        self.node_group = self.auto_scaling_group = self.access_entry = None
        self.lifecycle_hook = None
        group_name: pulumi.Input[str]
        if managed:
            self.node_group, group_name = managed_node_group(
                name,
                cluster_name=core.name,
                node_role_arn=self.node_role_arn,
                subnet_ids=args.subnet_ids,
                template=self.launch_template,
                image=self.image,
                full_size=self.full_size,
                desired_size=self.desired_size,
                labels=dict(spec.labels),
                auto_repair=group.auto_repair,
                tags=group_tags,
                opts=after,
            )
        else:
            self.access_entry, self.auto_scaling_group, self.lifecycle_hook = self_managed_group(
                name,
                cluster_name=core.name,
                node_role_arn=self.node_role_arn,
                subnet_ids=args.subnet_ids,
                template=self.launch_template,
                full_size=self.full_size,
                desired_size=self.desired_size,
                tags=group_tags,
                entry_tags=tags,
                opts=after,
            )
            group_name = self.auto_scaling_group.name
        self.schedules = declare_schedules(name, spec.actions, spec.block, group_name, child)
        self.register_outputs(
            {
                "launchTemplateId": self.launch_template.id,
                "nodeRoleArn": self.node_role_arn,
                "desiredSize": self.desired_size,
                "fullSize": self.full_size,
                "upgradeSafe": self.upgrade_safe,
                "efaDevices": self.layout.efa_devices,
            }
        )
