"""GpuNodeGroup: capacity-block GB200 nodes as an EKS managed node group or a self-managed Auto Scaling group.

Both modes share one launch template (``gpu_template``: instance type, capacity-block market, reservation
target, EFA interfaces, IMDSv2, encrypted gp3 root, NodeConfig user data); ``managed`` and ``self_managed``
declare the group itself. The node group takes the cluster as an object (a ``Cluster`` or its
``ClusterCoreData``), as pulumi-eks's node groups take ``Cluster | CoreData``.

AMI: pinned, never "latest". Managed groups default to ``amiType`` AL2023_ARM_64_NVIDIA with a pinned
``release_version`` (the facts/ami.py default for the cluster's minor) and a template without ImageId;
self-managed groups boot that release's AMI id from its dated SSM parameter; ``image_id`` + ``ami_release``
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

import pulumi
import pulumi_aws as aws

from ultraserver.facts.efa import LayoutSummary
from ultraserver.facts.tags import UPGRADE_SAFE
from ultraserver.resources.child_options import child_options
from ultraserver.resources.gpu_node_group_args import GpuNodeGroupArgs, core_of
from ultraserver.resources.gpu_template import GpuTemplateSpec, NodeImage, gpu_launch_template
from ultraserver.resources.managed import managed_node_group
from ultraserver.resources.node_role import NodeRole, NodeRoleArgs
from ultraserver.resources.schedules import declare_schedules
from ultraserver.resources.self_managed import self_managed_group


class GpuNodeGroup(pulumi.ComponentResource):
    """Capacity-block GPU nodes with an EFA launch template, in managed or self-managed mode."""

    launch_template: aws.ec2.LaunchTemplate
    node_group: aws.eks.NodeGroup | None
    auto_scaling_group: aws.autoscaling.Group | None
    access_entry: aws.eks.AccessEntry | None
    lifecycle_hook: aws.autoscaling.LifecycleHook | None
    schedules: list[aws.autoscaling.Schedule]
    current_block: int
    """Index of the block the group runs on at ``now`` (0 without capacity_blocks)."""
    reservation_id: pulumi.Input[str] | None
    """The reservation the launch template targets (None with a resource group)."""
    node_role_arn: pulumi.Input[str]
    image: NodeImage
    full_size: int
    desired_size: int
    upgrade_safe: bool
    layout: LayoutSummary

    def __init__(self, name: str, args: GpuNodeGroupArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        core = core_of(args.cluster)
        spec = args.spec
        super().__init__("ultraserver:index:GpuNodeGroup", name, None, opts)
        # Children repeat the group's own depends_on (e.g. the control-plane security group rules).
        child = child_options(self, opts)
        managed = args.mode == "managed"
        self.layout = spec.layout
        self.full_size = spec.full_size
        self.upgrade_safe = args.scale_to_zero_for_upgrade
        # With successive blocks the template targets the block current at `now` (the first whose scale-down is ahead):
        # it moves to the next reservation only once the group has scaled to 0, so never rolls nodes inside a block.
        self.current_block = spec.current_block
        self.reservation_id = args.reservation_target
        self.desired_size = spec.desired_size
        # Only the group carries the upgrade tag: on the template it would make a new version, itself an upgrade.
        group_tags = {**args.tags, **({UPGRADE_SAFE: "true"} if self.upgrade_safe else {})}
        self.image = NodeImage(
            release_version=spec.release_version,
            managed=managed,
            ssm_parameter=spec.ami_ssm_parameter,
            image_id=args.image_id,
            ami_release=args.ami_release,
        )
        self.node_role_arn, instance_profile_arn, role_ready = self._node_role(name, args, managed, child)
        self.launch_template = gpu_launch_template(
            name,
            GpuTemplateSpec(
                instance_type=args.instance_type,
                interfaces=spec.interfaces,
                # With custom security groups in the template EKS adds no cluster security group: name it here.
                security_group_ids=[*args.security_group_ids, core.security_group_id],
                image=self.image,
                cluster_name=core.name,
                cluster_endpoint=core.endpoint,
                cluster_certificate_authority=core.certificate_authority,
                service_cidr=core.service_cidr,
                labels=args.labels,
                local_storage=args.local_storage,
                capacity_reservation_id=self.reservation_id,
                capacity_reservation_resource_group_arn=args.capacity_reservation_resource_group_arn,
                iam_instance_profile_arn=instance_profile_arn,
                root_volume_size_gib=args.root_volume_size_gib,
                kms_key_id=args.kms_key_id,
                imds_hop_limit=args.imds_hop_limit,
                tags=args.tags,
            ),
            child,
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
                labels=args.labels,
                auto_repair=args.auto_repair,
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
                entry_tags=args.tags,
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

    def _node_role(
        self, name: str, args: GpuNodeGroupArgs, managed: bool, child: pulumi.ResourceOptions
    ) -> tuple[pulumi.Input[str], pulumi.Input[str] | None, list[pulumi.Resource]]:
        """Node role ARN, instance profile ARN (self-managed only) and what to wait for; makes a role if none given."""
        if args.node_role_arn is not None:
            return args.node_role_arn, None if managed else args.instance_profile_arn, []
        role = NodeRole(f"{name}-node", NodeRoleArgs(instance_profile=not managed, tags=args.tags), opts=child)
        profile = role.instance_profile.arn if role.instance_profile is not None else None
        # Waiting on the component waits for its policy attachments, which nodes need to join.
        return role.role.arn, profile, [role]
