"""The recorded-resource type shared by the offline engine, the plan report and the policy rules.

Neutral on purpose: no Pulumi import, so the policy pack can read recorded resources without loading
Pulumi's mock engine.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

STACK_TYPE = "pulumi:pulumi:Stack"
# Resource type tokens the plan report, the dependency check and the policy rules read (as the engine records them).
EKS_CLUSTER = "eks:index:Cluster"
AWS_EKS_CLUSTER = "aws:eks/cluster:Cluster"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
EKS_MANAGED_NODE_GROUP = "eks:index:ManagedNodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
AUTOSCALING_GROUP = "aws:autoscaling/group:Group"
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
SG_INGRESS_RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
SG_EGRESS_RULE = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
SG_RULE = "aws:ec2/securityGroupRule:SecurityGroupRule"
SUBNET = "aws:ec2/subnet:Subnet"
IAM_ROLE = "aws:iam/role:Role"
IAM_ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
IAM_POLICY = "aws:iam/policy:Policy"
IAM_ROLE_POLICY_ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
SQS_QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
COMPUTE_DOMAIN = "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain"


@dataclass
class PlanResource:
    """One resource the program declares."""

    urn: str
    type: str
    name: str
    parent: str = ""
    inputs: dict[str, Any] = field(default_factory=dict)
    dependencies: list[str] = field(default_factory=list)
    custom: bool = True
    property_dependencies: dict[str, list[str]] = field(default_factory=dict)
    # A component a provider builds (pulumi-eks's Cluster): a dependency on it stays its own URN, not its children's.
    remote: bool = False
    # Seen before serialization (offline/output_inputs.py): input name -> URNs its declared Outputs came from, and
    # paths of declared Outputs that resolved to None. Not in the plan JSON: they check it.
    declared_sources: dict[str, list[str]] = field(default_factory=dict)
    unresolved_inputs: list[str] = field(default_factory=list)
    # Resource options the engine acts on when a resource changes or leaves the program.
    protect: bool = False
    retain_on_delete: bool = False
    ignore_changes: list[str] = field(default_factory=list)
    # Inputs whose change deletes and recreates the resource (replaceOnChanges). Not in the plan JSON: tests check it.
    replace_on_changes: list[str] = field(default_factory=list)
    # URNs of an earlier deployment this resource takes over (its aliases, and those it inherits from its parent's).
    aliases: list[str] = field(default_factory=list)

    @property
    def provider(self) -> bool:
        """A provider resource (``pulumi:providers:<package>``): engine plumbing, not a cloud resource."""
        return self.type.startswith("pulumi:providers:")

    def to_json(self) -> dict[str, Any]:
        """The plan-JSON form (the stable contract)."""
        return {
            "urn": self.urn,
            "type": self.type,
            "name": self.name,
            "parent": self.parent,
            "inputs": self.inputs,
            "dependencies": self.dependencies,
            "protect": self.protect,
            "retainOnDelete": self.retain_on_delete,
            "ignoreChanges": self.ignore_changes,
            "aliases": self.aliases,
        }
