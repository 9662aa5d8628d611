"""The self-managed mode of a GPU node group: an Auto Scaling group plus an EC2_LINUX access entry.

No managed-node-group quota applies, and the launch template may target a capacity-reservation resource
group (EC2 documents Capacity Blocks in resource groups for plain launches), so one group can span several
UltraServers. Nodes get no EKS bootstrap: the template carries the AMI and the NodeConfig names the cluster.
"""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from ultraserver.facts.aws import node_termination as nth


def self_managed_group(
    name: str,
    *,
    cluster_name: pulumi.Input[str],
    node_role_arn: pulumi.Input[str],
    subnet_ids: pulumi.Input[Sequence[pulumi.Input[str]]],
    template: aws.ec2.LaunchTemplate,
    full_size: int,
    desired_size: int,
    tags: dict[str, str],
    entry_tags: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> tuple[aws.eks.AccessEntry, aws.autoscaling.Group, aws.autoscaling.LifecycleHook]:
    """The node role's access entry, the Auto Scaling group (waits for the entry so nodes can join) and its
    termination lifecycle hook, which holds a terminating node until the Node Termination Handler drained it."""
    entry = aws.eks.AccessEntry(
        name, cluster_name=cluster_name, principal_arn=node_role_arn, type="EC2_LINUX", tags=entry_tags, opts=opts
    )
    cluster_tag = pulumi.Output.from_input(cluster_name).apply(lambda n: f"kubernetes.io/cluster/{n}")
    group = aws.autoscaling.Group(
        name,
        launch_template=aws.autoscaling.GroupLaunchTemplateArgs(
            id=template.id, version=template.latest_version.apply(str)
        ),
        vpc_zone_identifiers=subnet_ids,
        min_size=0,
        max_size=full_size,
        desired_capacity=desired_size,
        # Capacity-block instances launch only inside the window; never block the deployment on them.
        wait_for_capacity_timeout="0",
        tags=[
            aws.autoscaling.GroupTagArgs(key=cluster_tag, value="owned", propagate_at_launch=True),
            # The Node Termination Handler only drains instances carrying this tag (checkTagBeforeDraining).
            aws.autoscaling.GroupTagArgs(key=nth.MANAGED_TAG, value="true", propagate_at_launch=True),
        ]
        + [aws.autoscaling.GroupTagArgs(key=k, value=v, propagate_at_launch=False) for k, v in sorted(tags.items())],
        opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=[entry])),
    )
    # Terminations wait for the Node Termination Handler to drain the node (EventBridge -> SQS -> NTH).
    hook = aws.autoscaling.LifecycleHook(
        f"{name}-terminating",
        autoscaling_group_name=group.name,
        lifecycle_transition=nth.LIFECYCLE_TRANSITION,
        default_result=nth.LIFECYCLE_DEFAULT_RESULT,
        heartbeat_timeout=nth.LIFECYCLE_HEARTBEAT_SECONDS,
        opts=opts,
    )
    return entry, group, hook
