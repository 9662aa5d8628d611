"""AWS, EKS and Kubernetes limits the settings validation checks derived names and lists against, and the EKS
control-plane log group with the retentions CloudWatch Logs accepts.

Each limit names its source. Pulumi's auto-naming (``<logical name>-<7 hex>``) and the Terraform AWS
provider's ``name_prefix`` (prefix + a 26-character unique suffix) make the physical name longer than
the logical one, so the checks add those suffixes before comparing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ultraserver.problems import WARNING, Described, Problem


@dataclass(frozen=True)
class Limit:
    """One length or count limit of an AWS or Kubernetes resource."""

    what: str
    """What is limited, as a person would say it."""
    maximum: int
    """The largest allowed length or count."""
    source: str
    """Where the limit is documented."""


# Pulumi auto-naming appends "-" and 7 random hex characters to the logical name
# (https://www.pulumi.com/docs/iac/concepts/resources/names/#autonaming).
AUTONAME_SUFFIX = 8
# terraform-plugin-sdk helper/id.UniqueIdPrefix: prefix + 26 characters (timestamp + counter); pulumi-aws
# name_prefix arguments go through it (hashicorp/terraform-plugin-sdk helper/id/id.go).
NAME_PREFIX_SUFFIX = 26

PULUMI_STACK_NAME = Limit(
    "Pulumi stack name",
    100,
    "Pulumi CLI v3 pkg/backend/diy/store.go ParseReference: 'stack names are limited to 100 characters and may only "
    "contain alphanumeric, hyphens, underscores, or periods' (read 2026-11-27)",
)
PULUMI_STACK_NAME_PATTERN = r"[A-Za-z0-9_.-]+"
"""The characters of a Pulumi stack name (same source as PULUMI_STACK_NAME)."""
EKS_CLUSTER_NAME = Limit(
    "EKS cluster name",
    100,
    "EKS API CreateCluster name: 1-100 characters (https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html)",
)
NODE_GROUP_NAME = Limit(
    "EKS node group name",
    63,
    "EKS API CreateNodegroup nodegroupName: up to 63 characters "
    "(https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html)",
)
NODE_GROUP_NAME_PREFIX = Limit(
    "EKS node group name_prefix",
    NODE_GROUP_NAME.maximum - NAME_PREFIX_SUFFIX,
    "node group name limit 63 minus the 26-character unique suffix of name_prefix",
)
IAM_ROLE_NAME = Limit(
    "IAM role name",
    64,
    "IAM quotas: role name up to 64 characters "
    "(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html)",
)
INSTANCE_PROFILE_NAME = Limit(
    "IAM instance profile name",
    128,
    "IAM quotas: instance profile name up to 128 characters "
    "(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html)",
)
LAUNCH_TEMPLATE_NAME = Limit(
    "EC2 launch template name",
    128,
    "EC2 API CreateLaunchTemplate LaunchTemplateName: 3-128 characters "
    "(https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateLaunchTemplate.html)",
)
SECURITY_GROUP_NAME = Limit(
    "EC2 security group name",
    255,
    "EC2 API CreateSecurityGroup GroupName: up to 255 characters "
    "(https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateSecurityGroup.html)",
)
ASG_NAME = Limit(
    "Auto Scaling group name",
    255,
    "Auto Scaling API CreateAutoScalingGroup AutoScalingGroupName: 1-255 characters "
    "(https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_CreateAutoScalingGroup.html)",
)
HELM_RELEASE_NAME = Limit(
    "Helm release name",
    53,
    "Helm: release names are limited to 53 characters (helm/helm pkg/chartutil validate_name.go, "
    "https://helm.sh/docs/chart_best_practices/conventions/)",
)
KUBERNETES_LABEL_NAME = Limit(
    "Kubernetes label name or DNS label",
    63,
    "Kubernetes: label names and values up to 63 characters; DNS-1123 labels up to 63 "
    "(https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set)",
)
KUBERNETES_LABEL_PREFIX = Limit(
    "Kubernetes label prefix",
    253,
    "Kubernetes: the optional label prefix is a DNS subdomain of up to 253 characters "
    "(https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set)",
)
PUBLIC_ACCESS_CIDRS = Limit(
    "EKS public access CIDR blocks",
    40,
    "EKS: up to 40 public access CIDR blocks "
    "(https://docs.aws.amazon.com/eks/latest/userguide/cluster-endpoint.html; EKS service quotas)",
)
TAGS_PER_RESOURCE = Limit(
    "tags per AWS resource",
    50,
    "AWS tagging: up to 50 user tags per resource "
    "(https://docs.aws.amazon.com/tag-editor/latest/userguide/tagging.html#tag-conventions)",
)
TAG_KEY = Limit(
    "AWS tag key length",
    128,
    "AWS tagging: tag keys up to 128 Unicode characters "
    "(https://docs.aws.amazon.com/tag-editor/latest/userguide/tagging.html#tag-conventions)",
)
TAG_VALUE = Limit(
    "AWS tag value length",
    256,
    "AWS tagging: tag values up to 256 Unicode characters "
    "(https://docs.aws.amazon.com/tag-editor/latest/userguide/tagging.html#tag-conventions)",
)
# Same page: "The aws: prefix is reserved for AWS use. You can't edit or delete a tag's key or value when the tag
# has a tag key with the aws: prefix."
# EC2 User Guide, "Tag restrictions" (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/Using_Tags.html#tag-
# restrictions, read 2026-11-28): "Tag keys and values can't start with aws:" (UNVERIFIED against the live page here;
# the tag editor's page above says the same of keys).
RESERVED_TAG_PREFIX = "aws:"
ROLE_SESSION_NAME_PATTERN = r"[A-Za-z0-9_+=,.@-]{2,64}"
r"""STS AssumeRole RoleSessionName: "Length Constraints: Minimum length of 2. Maximum length of 64. Pattern:
[\w+=,.@-]*" (https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html, read 2026-11-28)."""
EXTERNAL_ID_PATTERN = r"[A-Za-z0-9_+=,.@:/-]{2,1224}"
r"""STS AssumeRole ExternalId: "Length Constraints: Minimum length of 2. Maximum length of 1224. Pattern:
[\w+=,.@:\/-]*" (same page)."""
MANAGED_NODE_GROUPS_PER_CLUSTER = Limit(
    "EKS managed node groups per cluster",
    30,
    "EKS service quota 'Managed node groups per cluster' (quota code L-6D54EA21), default 30, adjustable "
    "(https://docs.aws.amazon.com/eks/latest/userguide/service-quotas.html)",
)
MANAGED_NODE_GROUP_QUOTA_CODE = "L-6D54EA21"
MANAGED_NODE_GROUP_QUOTA_NAME = "Managed node groups per cluster"
"""The quota's name as Service Quotas shows it (with MANAGED_NODE_GROUP_QUOTA_CODE)."""
NODES_PER_MANAGED_NODE_GROUP = Limit(
    "nodes per EKS managed node group",
    450,
    "EKS service quota 'Nodes per managed node group', 450 (https://docs.aws.amazon.com/eks/latest/userguide/service-quotas.html)",
)
SCHEDULED_ACTION_NAME = Limit(
    "Auto Scaling scheduled action name",
    255,
    "Auto Scaling API PutScheduledUpdateGroupAction ScheduledActionName: 1-255 characters, unique per group "
    "(https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_PutScheduledUpdateGroupAction.html)",
)
SCHEDULED_ACTIONS_PER_GROUP = Limit(
    "Auto Scaling scheduled actions per group",
    125,
    "EC2 Auto Scaling user guide, scheduled scaling limitations: 'a maximum of 125 scheduled actions per Auto Scaling "
    "group' (https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-scheduled-scaling.html)",
)
EVENT_RULE_NAME = Limit(
    "EventBridge rule name",
    64,
    "EventBridge API PutRule Name: 1-64 characters of [.-_A-Za-z0-9] (botocore events 2014-02-03 service-2.json, "
    "shape RuleName; https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutRule.html)",
)
EVENT_RULE_NAME_PREFIX = Limit(
    "EventBridge rule name_prefix",
    EVENT_RULE_NAME.maximum - NAME_PREFIX_SUFFIX,
    "EventBridge rule name limit 64 minus the 26-character unique suffix of name_prefix",
)
SNS_TOPIC_NAME = Limit(
    "SNS topic name",
    256,
    "SNS API CreateTopic Name: 1-256 ASCII letters, numbers, underscores and hyphens (botocore sns 2010-03-31 "
    "service-2.json, CreateTopicInput; https://docs.aws.amazon.com/sns/latest/api/API_CreateTopic.html)",
)
IMEX_TARGET_NAME = Limit(
    "IMEX check UltraServer (node group) name",
    26,
    "toolkit choice (builders/imex_check.py): nvbandwidth-<name>-<n> (a fleet's job suffix) with the MPI "
    "operator's -launcher and -worker-<n> suffixes and the ComputeDomain's derived names stay inside a "
    "63-character DNS label",
)
VPC_CIDR_BLOCKS = Limit(
    "IPv4 CIDR blocks per VPC",
    5,
    "Amazon VPC quota 'IPv4 CIDR blocks per VPC': default 5, adjustable up to 50 (primary block included) "
    "(https://docs.aws.amazon.com/vpc/latest/userguide/amazon-vpc-limits.html; checked 2026-11-25)",
)
VPC_CIDR_BLOCKS_CEILING = 50
"""The most the VPC CIDR block quota can be raised to (same page)."""
VPC_CIDR_BLOCKS_QUOTA_CODE = "L-83CA0A9D"
"""Service Quotas code of 'IPv4 CIDR blocks per VPC' (service code vpc). Unverified against the console."""
AUTO_SCALING_GROUPS_PER_REGION = Limit(
    "Auto Scaling groups per region",
    500,
    "EC2 Auto Scaling quota 'Auto Scaling groups per region', default 500, adjustable; the guide lists no cap on "
    "the instances of one group (https://docs.aws.amazon.com/autoscaling/ec2/userguide/ec2-auto-scaling-quotas.html; "
    "checked 2026-11-25)",
)
VPC_PREFIX_LARGEST = 16
VPC_PREFIX_SMALLEST = 28
"""VPC IPv4 CIDR blocks are /16 to /28 (https://docs.aws.amazon.com/vpc/latest/userguide/vpc-cidr-blocks.html)."""


def autonamed(logical: str) -> int:
    """Length of the physical name Pulumi derives from a logical name."""
    return len(logical) + AUTONAME_SUFFIX


def over(limit: Limit, length: int) -> bool:
    """Whether a length or count breaks a limit."""
    return length > limit.maximum


def stack_name_problem(stack: str) -> Problem | None:
    """A --stack the Pulumi CLI would refuse (and that may not fit a file name), or None."""
    if re.fullmatch(PULUMI_STACK_NAME_PATTERN, stack) and not over(PULUMI_STACK_NAME, len(stack)):
        return None
    return Problem(
        "--stack",
        stack,
        f"a Pulumi stack name: up to {PULUMI_STACK_NAME.maximum} letters, digits, -, _ and .",
        "pass the name of a stacks/Pulumi.<stack>.yaml file",
    )


def managed_node_group_problem(
    node_groups: int, key: str, quota: int = MANAGED_NODE_GROUPS_PER_CLUSTER.maximum
) -> Problem | None:
    """A number of managed node groups above the cluster quota, as a warning at ``key`` (it is adjustable), or None."""
    if node_groups <= quota:
        return None
    return Problem(
        key,
        Described(f"{node_groups} managed node groups"),
        f"at most {quota}, the default EKS quota '{MANAGED_NODE_GROUP_QUOTA_NAME}' ({MANAGED_NODE_GROUP_QUOTA_CODE})",
        "raise it before deploying: aws service-quotas request-service-quota-increase --service-code eks "
        f"--quota-code {MANAGED_NODE_GROUP_QUOTA_CODE} --desired-value {node_groups}, or use mode: "
        "self-managed groups, which have no such quota",
        WARNING,
    )


# EKS control-plane logs: the log group EKS writes to and the retention CloudWatch Logs accepts.
#
# EKS sends the enabled control-plane log types to the log group ``/aws/eks/<cluster-name>/cluster`` and creates it,
# with no retention, when it does not exist (EKS user guide, "Send control plane logs to CloudWatch Logs",
# control-plane-logs.html). Creating the group first, before the cluster, lets the stack set its retention and KMS key;
# the Terraform AWS provider documents the same order (website/docs/r/eks_cluster.html.markdown, "Enabling Control Plane
# Logging": an aws_cloudwatch_log_group of that name that the cluster depends on).
RETENTION_DAYS: tuple[int, ...] = (
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
)  # fmt: skip
"""Values PutRetentionPolicy accepts (botocore `logs` model, retentionInDays documentation; a test reads it)."""
DEFAULT_RETENTION_DAYS = 90
"""The toolkit's default retention of control-plane logs."""
KMS_ACTIONS = ("kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*")
"""What CloudWatch Logs needs of a log group's key (CloudWatch Logs user guide, "Encrypt log data in CloudWatch Logs
using AWS KMS", key policy), granted to the regional service principal for this log group only."""


def log_group_name(cluster_name: str) -> str:
    """The log group EKS writes a cluster's control-plane logs to."""
    return f"/aws/eks/{cluster_name}/cluster"


def logs_principal(region: str) -> str:
    """The CloudWatch Logs service principal of a region."""
    return f"logs.{region}.amazonaws.com"
