"""The log group EKS writes control-plane logs to, made before the cluster with the stack's retention and a KMS key."""

from __future__ import annotations

import json
from collections.abc import Mapping

import pulumi
import pulumi_aws as aws

from ultraserver.builders.iam import log_group_key_policy
from ultraserver.facts.aws import limits


def control_plane_log_group(
    name: str, cluster_name: str, retention_days: int, tags: Mapping[str, str], parent: pulumi.Resource
) -> aws.cloudwatch.LogGroup:
    """The log group EKS writes control-plane logs to, made first with the stack's retention and its own KMS key
    (otherwise EKS makes it with no retention and no key: facts/aws/limits.py)."""
    child = pulumi.ResourceOptions(parent=parent)
    invoke = pulumi.InvokeOutputOptions(parent=parent)
    group_name = limits.log_group_name(cluster_name)
    identity, partition = aws.get_caller_identity_output(opts=invoke), aws.get_partition_output(opts=invoke)
    region = aws.get_region_output(opts=invoke)

    def policy(account: str, part: str, where: str) -> str:
        arn = f"arn:{part}:logs:{where}:{account}:log-group:{group_name}"
        return json.dumps(log_group_key_policy(account, part, where, arn))

    key = aws.kms.Key(
        f"{name}-logs",
        description=f"EKS control-plane logs of {cluster_name}",
        enable_key_rotation=True,
        deletion_window_in_days=30,
        policy=pulumi.Output.all(identity.account_id, partition.partition, region.region).apply(
            lambda v: policy(v[0], v[1], v[2])
        ),
        tags=dict(tags),
        opts=child,
    )
    return aws.cloudwatch.LogGroup(
        f"{name}-control-plane",
        name=group_name,
        retention_in_days=retention_days,
        kms_key_id=key.arn,
        tags=dict(tags),
        opts=child,
    )
