"""The managed mode of a GPU node group: an EKS managed node group with capacity type CAPACITY_BLOCK.

EKS capacity-blocks-mng: custom launch template (instance type, capacity-block market, ``CapacityReservationId``),
no instance types, disk size or remote access on the group. One group targets one reservation: no AWS document
shows a managed group on a capacity-reservation resource group, so those are for self-managed groups only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from ultraserver.facts.aws import node_repair
from ultraserver.facts.kubernetes.scheduling import GPU_TAINT_KEY, GPU_TAINT_VALUE
from ultraserver.facts.pins import ami
from ultraserver.resources.launch_template import NodeImage

REPAIR_MAX_PARALLEL_NODES = 1
"""Nodes EKS repairs at once: a replaced node of a Capacity Block needs a free slot in the block, so one at a time."""
REPAIR_MAX_UNHEALTHY_NODES = 2
"""Above this many unhealthy nodes EKS stops repairing: a fleet-wide signal (e.g. the node monitoring agent failing
to reach DCGM, aws/containers-roadmap#2763) is more likely a false positive than many broken GPUs."""


def node_repair_config() -> aws.eks.NodeGroupNodeRepairConfigArgs:
    """Auto repair, cautious: one node at a time, paused when more than a couple of nodes look unhealthy; GPU faults
    reboot where a reboot can help and take no action where only a replacement would (facts/aws/node_repair.py)."""
    return aws.eks.NodeGroupNodeRepairConfigArgs(
        enabled=True,
        max_parallel_nodes_repaired_count=REPAIR_MAX_PARALLEL_NODES,
        max_unhealthy_node_threshold_count=REPAIR_MAX_UNHEALTHY_NODES,
        node_repair_config_overrides=[
            aws.eks.NodeGroupNodeRepairConfigNodeRepairConfigOverrideArgs(
                node_monitoring_condition=node_repair.CONDITION,
                node_unhealthy_reason=override.reason,
                repair_action=override.action,
                min_repair_wait_time_mins=node_repair.WAIT_MINUTES,
            )
            for override in node_repair.OVERRIDES
        ],
    )


def managed_node_group(
    name: str,
    *,
    cluster_name: pulumi.Input[str],
    node_role_arn: pulumi.Input[str],
    subnet_ids: pulumi.Input[Sequence[pulumi.Input[str]]],
    template: aws.ec2.LaunchTemplate,
    image: NodeImage,
    full_size: int,
    desired_size: int,
    labels: dict[str, str],
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
    auto_repair: bool = False,
) -> tuple[aws.eks.NodeGroup, pulumi.Input[str]]:
    """The managed node group and the name of the Auto Scaling group EKS makes for it (for scheduled actions)."""
    # With no ImageId in the template EKS picks the AMI from amiType + releaseVersion; with one, EKS rejects both.
    eks_ami: dict[str, Any] = (
        {"ami_type": ami.AMI_TYPE, "release_version": image.release_version} if image.eks_picks_the_ami else {}
    )
    group = aws.eks.NodeGroup(
        name,
        cluster_name=cluster_name,
        node_role_arn=node_role_arn,
        subnet_ids=subnet_ids,
        capacity_type="CAPACITY_BLOCK",
        **eks_ami,
        launch_template=aws.eks.NodeGroupLaunchTemplateArgs(id=template.id, version=template.latest_version.apply(str)),
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(min_size=0, max_size=full_size, desired_size=desired_size),
        labels=labels,
        taints=[aws.eks.NodeGroupTaintArgs(key=GPU_TAINT_KEY, value=GPU_TAINT_VALUE, effect="NO_SCHEDULE")],
        node_repair_config=node_repair_config() if auto_repair else None,
        tags=tags,
        opts=opts,
    )
    return group, group.resources.apply(_managed_asg_name)


def _managed_asg_name(resources: Sequence[aws.eks.outputs.NodeGroupResource] | None) -> Any:
    """Name of the Auto Scaling group EKS made for a managed node group; None until the group exists."""
    if not resources or not resources[0].autoscaling_groups:
        return None
    return resources[0].autoscaling_groups[0].name
