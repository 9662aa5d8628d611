"""GpuNodeGroup: capacity-block GB200 nodes as an EKS managed node group or a self-managed Auto Scaling group.

Both modes share one launch template (instance type, capacity-block market, reservation target,
EFA interfaces, IMDSv2, encrypted gp3 root, NodeConfig user data). The AMI comes from SSM (the
recommended AL2023 ARM64 NVIDIA image, or a pinned release) unless an image ID is given; since the
template then carries its own image, EKS does not bootstrap the nodes, so the NodeConfig holds the
cluster section and the kubelet flags for labels and taints in both modes.

Sizes: one group per UltraServer by default (reservation ID, 9 or 18 instances); grouped mode
targets a capacity-reservation resource group with ``ultraserver_count`` x instances, so a large
fleet stays within the EKS quota of 30 managed node groups. With a reservation window, scheduled
actions bring the group to full size when the block starts and to 0 ``scale_down_lead_minutes``
before it ends; the group's own desired size follows the same window when Pulumi runs.

Upgrade procedure (EKS: capacity-block groups must be at desired size 0 before an upgrade):
1. Set ``scale_to_zero_for_upgrade: true`` and run ``pulumi up``: min and desired size go to 0,
   scheduled actions are removed, and the group is tagged ``ultraserver.io/upgrade-safe=true``.
2. Wait for the nodes to terminate, then change the Kubernetes version, AMI release or image ID
   and run ``pulumi up`` again.
3. Set ``scale_to_zero_for_upgrade: false`` and run ``pulumi up`` to scale back to full size.
The policy pack can flag a version or AMI change on a capacity-block group without the tag.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import pulumi
import pulumi_aws as aws

from ultraserver.builders.nodeconfig import (
    LOCAL_STORAGE_STRATEGIES,
    ClusterDetails,
    NodeConfigSpec,
    kubelet_flags,
    user_data,
)
from ultraserver.components.child_options import child_options
from ultraserver.components.launch_template import LaunchTemplateSpec, launch_template_args, reservation_target_problems
from ultraserver.components.node_role import NodeRole, NodeRoleArgs
from ultraserver.facts import ami, instances, kubernetes
from ultraserver.facts.capacity_blocks import (
    ReservationWindow,
    desired_size_problem,
    full_size,
    scheduled_actions,
    size_now,
    window_problems,
)
from ultraserver.facts.efa import (
    EfaInterface,
    LayoutSummary,
    instance_facts,
    layout_for,
    summarize_layout,
    validate_layout,
)
from ultraserver.facts.scheduling import GPU_TAINT_EFFECT, GPU_TAINT_KEY, GPU_TAINT_VALUE
from ultraserver.facts.tags import AMI_RELEASE, AMI_SSM_PARAMETER, UPGRADE_SAFE
from ultraserver.problems import ConfigError

MODES = ("managed", "self-managed")


@dataclass
class GpuNodeGroupArgs:
    """Inputs of a capacity-block GPU node group."""

    cluster_name: pulumi.Input[str]
    """EKS cluster name."""
    subnet_ids: pulumi.Input[Sequence[pulumi.Input[str]]]
    """Subnets in the reservation's Availability Zone only (EKS rejects others for capacity blocks)."""
    security_group_ids: pulumi.Input[Sequence[pulumi.Input[str]]]
    """EFA security group and cluster security group, put on every interface."""
    cluster_endpoint: pulumi.Input[str] | None = None
    """Cluster API server endpoint, for the NodeConfig cluster section."""
    cluster_certificate_authority: pulumi.Input[str] | None = None
    """Base64 cluster CA data, for the NodeConfig cluster section."""
    service_cidr: pulumi.Input[str] | None = None
    """Kubernetes service CIDR, for the NodeConfig cluster section."""
    kubernetes_version: str = kubernetes.FLOOR_TEXT
    """Cluster Kubernetes minor version; selects the AMI."""
    mode: str = "managed"
    """managed (EKS managed node group) or self-managed (Auto Scaling group)."""
    instance_type: str = instances.GB200_INSTANCE_TYPE
    """EC2 instance type, set in the launch template."""
    interfaces: list[EfaInterface] | None = None
    """EFA layout from efa.layout_for; the type's default preset when unset."""
    capacity_reservation_id: pulumi.Input[str] | None = None
    """The UltraServer's Capacity Reservation ID (one group per UltraServer)."""
    capacity_reservation_resource_group_arn: pulumi.Input[str] | None = None
    """Capacity-reservation resource group ARN (grouped mode)."""
    ultraserver_type: str = "u-p6e-gb200x72"
    """u-p6e-gb200x36 (9 instances) or u-p6e-gb200x72 (18 instances)."""
    ultraserver_count: int = 1
    """UltraServers this group covers; above 1 only in grouped mode."""
    desired_size: int | None = None
    """Nodes to run; all instances of the UltraServers when unset."""
    node_role_arn: pulumi.Input[str] | None = None
    """Existing node role; a NodeRole is created when unset."""
    instance_profile_arn: pulumi.Input[str] | None = None
    """Instance profile of node_role_arn; required with it in self-managed mode."""
    image_id: pulumi.Input[str] | None = None
    """Custom AMI ID; skips the SSM lookup."""
    ami_release: str | None = None
    """Pinned AMI release (v20251103 or later); the recommended AMI when unset."""
    labels: dict[str, str] = field(default_factory=dict)
    """Kubernetes node labels."""
    reservation_window: ReservationWindow | None = None
    """Capacity Block start and end, for scheduled scaling."""
    scale_to_zero_for_upgrade: bool = False
    """Hold the group at 0 nodes so its Kubernetes version or AMI can change (see module docs)."""
    local_storage: str = "RAID0"
    """nodeadm local storage strategy for the instance store."""
    root_volume_size_gib: int = instances.GPU_ROOT_VOLUME_GIB
    """Root volume size in GiB."""
    kms_key_id: pulumi.Input[str] | None = None
    """KMS key for the root volume; the account default when unset."""
    tags: dict[str, str] = field(default_factory=dict)
    """AWS tags for every resource."""
    now: datetime | None = None
    """Clock for the reservation window; the current UTC time when unset."""


def _problems(args: GpuNodeGroupArgs) -> list[str]:
    """Setting problems found before any resource is declared."""
    problems = []
    if args.mode not in MODES:
        problems.append(f"mode: '{args.mode}' is not a node-group mode; allowed: {', '.join(MODES)}.")
    if args.capacity_reservation_id is not None and args.ultraserver_count != 1:
        problems.append(
            f"ultraserverCount: {args.ultraserver_count} needs grouped mode; a reservation ID covers one "
            "UltraServer, so set capacityReservationResourceGroupArn or make one group per UltraServer."
        )
    problems += reservation_target_problems(args.capacity_reservation_id, args.capacity_reservation_resource_group_arn)
    if args.reservation_window is not None:
        problems += window_problems(args.reservation_window)
    missing = [
        key
        for key, value in (
            ("clusterEndpoint", args.cluster_endpoint),
            ("clusterCertificateAuthority", args.cluster_certificate_authority),
            ("serviceCidr", args.service_cidr),
        )
        if value is None
    ]
    if missing:
        problems.append(
            f"{', '.join(missing)}: required; nodes with their own AMI get no EKS bootstrap, so NodeConfig "
            "must name the cluster endpoint, CA and service CIDR."
        )
    if args.local_storage not in LOCAL_STORAGE_STRATEGIES:
        problems.append(
            f"localStorage: '{args.local_storage}' is not a nodeadm strategy; allowed: "
            f"{', '.join(LOCAL_STORAGE_STRATEGIES)}."
        )
    if args.mode == "self-managed" and args.node_role_arn is not None and args.instance_profile_arn is None:
        problems.append("instanceProfileArn: required with nodeRoleArn for self-managed nodes.")
    sizes = _raised(lambda: full_size(args.ultraserver_type, args.ultraserver_count))
    problems += sizes
    if not sizes and args.desired_size is not None:
        too_big = desired_size_problem(args.ultraserver_type, args.ultraserver_count, args.desired_size)
        problems += [too_big] if too_big else []
    kind = _raised(lambda: instance_facts(args.instance_type))
    problems += kind
    if not kind and args.interfaces is not None:
        problems += [f"efa: {p}" for p in validate_layout(args.instance_type, args.interfaces)]
    if args.image_id is None:
        problems += _raised(lambda: _ami_parameter_name(args))
    return problems


def _raised(check: Callable[[], object]) -> list[str]:
    """The problems a check raises as ConfigError; empty when it passes."""
    try:
        check()
    except ConfigError as error:
        return error.problems
    return []


def _ami_parameter_name(args: GpuNodeGroupArgs) -> str:
    """SSM parameter of the pinned release, or of the recommended AMI."""
    if args.ami_release is not None:
        return ami.pinned_ssm_parameter_name(args.kubernetes_version, args.ami_release)
    return ami.ssm_parameter_name(args.kubernetes_version)


def ami_tags(args: GpuNodeGroupArgs) -> dict[str, str]:
    """Where the AMI came from, for the policy pack (image ids alone do not say)."""
    found = {AMI_RELEASE: args.ami_release or "recommended"}
    if args.image_id is None:
        found[AMI_SSM_PARAMETER] = _ami_parameter_name(args)
    return found


def _image_id(args: GpuNodeGroupArgs) -> pulumi.Input[str]:
    """The AMI: given, or looked up in SSM."""
    if args.image_id is not None:
        return args.image_id
    return aws.ssm.get_parameter_output(name=_ami_parameter_name(args)).value


class GpuNodeGroup(pulumi.ComponentResource):
    """Capacity-block GPU nodes with an EFA launch template, in managed or self-managed mode."""

    launch_template: aws.ec2.LaunchTemplate
    node_group: aws.eks.NodeGroup | None
    auto_scaling_group: aws.autoscaling.Group | None
    access_entry: aws.eks.AccessEntry | None
    schedules: list[aws.autoscaling.Schedule]
    node_role_arn: pulumi.Input[str]
    image_id: pulumi.Input[str]
    full_size: int
    desired_size: int
    upgrade_safe: bool
    layout: LayoutSummary

    def __init__(self, name: str, args: GpuNodeGroupArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        problems = _problems(args)
        if problems:
            raise ConfigError([f"nodeGroups.{name}: {p}" for p in problems])
        interfaces = args.interfaces if args.interfaces is not None else layout_for(args.instance_type, None, None)
        super().__init__("ultraserver:index:GpuNodeGroup", name, None, opts)
        # Children repeat the group's own depends_on (e.g. the control-plane security group rules).
        child = child_options(self, opts)
        managed = args.mode == "managed"
        self.layout = summarize_layout(args.instance_type, interfaces)
        self.full_size = full_size(args.ultraserver_type, args.ultraserver_count)
        wanted = args.desired_size if args.desired_size is not None else self.full_size
        now = args.now or datetime.now(timezone.utc)
        self.upgrade_safe = args.scale_to_zero_for_upgrade
        self.desired_size = 0 if self.upgrade_safe else size_now(args.reservation_window, wanted, now)
        # Only the group carries the upgrade tag: on the template it would make a new version, itself an upgrade.
        group_tags = {**args.tags, **({UPGRADE_SAFE: "true"} if self.upgrade_safe else {})}
        self.image_id = _image_id(args)

        self.node_role_arn, instance_profile_arn, role_ready = self._node_role(name, args, managed, child)
        after_role = child_options(self, opts, pulumi.ResourceOptions(depends_on=role_ready))
        self.launch_template = aws.ec2.LaunchTemplate(
            name,
            **launch_template_args(
                LaunchTemplateSpec(
                    instance_type=args.instance_type,
                    interfaces=interfaces,
                    security_group_ids=args.security_group_ids,
                    user_data=self._user_data(args),
                    capacity_reservation_id=args.capacity_reservation_id,
                    capacity_reservation_resource_group_arn=args.capacity_reservation_resource_group_arn,
                    image_id=self.image_id,
                    iam_instance_profile_arn=instance_profile_arn,
                    root_volume_size_gib=args.root_volume_size_gib,
                    kms_key_id=args.kms_key_id,
                    tags={**args.tags, **ami_tags(args)},
                )
            ),
            opts=child,
        )
        template_version = self.launch_template.latest_version.apply(str)
        self.node_group = self.auto_scaling_group = self.access_entry = None
        if managed:
            self.node_group = aws.eks.NodeGroup(
                name,
                cluster_name=args.cluster_name,
                node_role_arn=self.node_role_arn,
                subnet_ids=args.subnet_ids,
                capacity_type="CAPACITY_BLOCK",
                launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                    id=self.launch_template.id, version=template_version
                ),
                scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                    min_size=0, max_size=self.full_size, desired_size=self.desired_size
                ),
                labels=args.labels,
                taints=[aws.eks.NodeGroupTaintArgs(key=GPU_TAINT_KEY, value=GPU_TAINT_VALUE, effect="NO_SCHEDULE")],
                tags=group_tags,
                opts=after_role,
            )
            group_name: pulumi.Input[str] = self.node_group.resources.apply(_managed_asg_name)
        else:
            self.access_entry = aws.eks.AccessEntry(
                name,
                cluster_name=args.cluster_name,
                principal_arn=self.node_role_arn,
                type="EC2_LINUX",
                tags=args.tags,
                opts=after_role,
            )
            cluster_tag = pulumi.Output.from_input(args.cluster_name).apply(lambda n: f"kubernetes.io/cluster/{n}")
            self.auto_scaling_group = aws.autoscaling.Group(
                name,
                launch_template=aws.autoscaling.GroupLaunchTemplateArgs(
                    id=self.launch_template.id, version=template_version
                ),
                vpc_zone_identifiers=args.subnet_ids,
                min_size=0,
                max_size=self.full_size,
                desired_capacity=self.desired_size,
                # Capacity-block instances launch only inside the window; never block the deployment on them.
                wait_for_capacity_timeout="0",
                tags=[aws.autoscaling.GroupTagArgs(key=cluster_tag, value="owned", propagate_at_launch=True)]
                + [
                    aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=False)
                    for k, v in sorted(group_tags.items())
                ],
                opts=child_options(self, opts, pulumi.ResourceOptions(depends_on=[self.access_entry])),
            )
            group_name = self.auto_scaling_group.name
        self.schedules = self._schedules(name, args, wanted, now, group_name, child)
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

    @staticmethod
    def _user_data(args: GpuNodeGroupArgs) -> pulumi.Output[str]:
        """NodeConfig user data with the cluster section and label/taint kubelet flags."""
        flags = kubelet_flags(args.labels, [(GPU_TAINT_KEY, GPU_TAINT_VALUE, GPU_TAINT_EFFECT)])
        return pulumi.Output.all(
            args.cluster_name, args.cluster_endpoint, args.cluster_certificate_authority, args.service_cidr
        ).apply(
            lambda v: user_data(
                NodeConfigSpec(local_storage=args.local_storage, kubelet_flags=flags, cluster=ClusterDetails(*v))
            )
        )

    def _schedules(
        self,
        name: str,
        args: GpuNodeGroupArgs,
        wanted: int,
        now: datetime,
        group_name: pulumi.Input[str],
        child: pulumi.ResourceOptions,
    ) -> list[aws.autoscaling.Schedule]:
        """Scheduled actions for the reservation window; none while held at 0 for an upgrade."""
        if args.reservation_window is None or self.upgrade_safe:
            return []
        return [
            aws.autoscaling.Schedule(
                f"{name}-{action.name}",
                autoscaling_group_name=group_name,
                scheduled_action_name=action.name,
                start_time=action.start_time_iso,
                min_size=action.min_size,
                max_size=action.max_size,
                desired_capacity=action.desired_capacity,
                opts=child,
            )
            for action in scheduled_actions(args.reservation_window, wanted, now=now)
        ]


def _managed_asg_name(resources: Sequence[aws.eks.outputs.NodeGroupResource] | None) -> Any:
    """Name of the Auto Scaling group EKS made for a managed node group; None until the group exists."""
    if not resources or not resources[0].autoscaling_groups:
        return None
    return resources[0].autoscaling_groups[0].name
