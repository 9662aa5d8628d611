"""IAM role for worker nodes, with only the AWS managed policies a node needs."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ultraserver.arguments import checked, checked_component
from ultraserver.facts.aws.permissions import NODE_POLICY_ARNS


def assume_role_policy() -> dict:
    """Trust policy that lets EC2 instances assume the node role."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "ec2.amazonaws.com"},
                "Action": "sts:AssumeRole",
            }
        ],
    }


@checked()
@dataclass
class NodeRoleArgs:
    """Inputs of a node IAM role."""

    instance_profile: bool = False
    """Also create an instance profile (self-managed nodes need one; managed node groups do not)."""
    tags: dict[str, str] = field(default_factory=dict)
    """Tags for the role."""


@checked_component
class NodeRole(pulumi.ComponentResource):
    """An EC2 node role with the minimal EKS worker and ECR policies attached."""

    role: aws.iam.Role
    instance_profile: aws.iam.InstanceProfile | None

    def __init__(self, name: str, args: NodeRoleArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:NodeRole", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.role = aws.iam.Role(
            name,
            assume_role_policy=json.dumps(assume_role_policy()),
            tags=args.tags,
            opts=child,
        )
        for arn in NODE_POLICY_ARNS:
            short = arn.rsplit("/", 1)[-1]
            aws.iam.RolePolicyAttachment(f"{name}-{short}", role=self.role.name, policy_arn=arn, opts=child)
        self.instance_profile = (
            aws.iam.InstanceProfile(name, role=self.role.name, opts=child) if args.instance_profile else None
        )
        self.register_outputs({"roleArn": self.role.arn})


def node_identity(
    name: str,
    role_arn: pulumi.Input[str] | None,
    instance_profile_arn: pulumi.Input[str] | None,
    managed: bool,
    tags: dict[str, str],
    opts: pulumi.ResourceOptions,
) -> tuple[pulumi.Input[str], pulumi.Input[str] | None, list[pulumi.Resource]]:
    """A node group's role ARN, its instance profile ARN (self-managed only) and what nodes wait for: the given role,
    or a new NodeRole."""
    if role_arn is not None:
        return role_arn, None if managed else instance_profile_arn, []
    role = NodeRole(f"{name}-node", NodeRoleArgs(instance_profile=not managed, tags=tags), opts=opts)
    profile = role.instance_profile.arn if role.instance_profile is not None else None
    # Waiting on the component waits for its policy attachments, which nodes need to join.
    return role.role.arn, profile, [role]
