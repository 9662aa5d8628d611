"""AWS identifier patterns: the one home of every regex the toolkit matches an AWS name, ID or ARN against; and the
``ultraserver.io/*`` tags the components write.

Patterns are unanchored strings (the settings model anchors them itself and shows them in the stack schema);
``matches`` is the full-match test for code outside the settings model.

Sources (checked 2026-11-25): EC2 API Reference, CapacityReservation (CapacityReservationId ``cr-`` + 17 hex);
AWS General Reference, "Amazon Resource Names" and the partition list of botocore's ``endpoints.json``
(aws, aws-cn, aws-us-gov, aws-iso, aws-iso-b, aws-iso-e, aws-iso-f, aws-eusc); EC2 user guide, "Regions and
Zones" (region ``us-east-1``, zone ``us-east-1a``, Local Zone ``us-east-1-dfw-2a``). Resource IDs (ami-, vpc-, subnet-)
have 8 or 17 hex digits (EC2 user guide, "Resource IDs": longer IDs since 2018).
"""

from __future__ import annotations

import re

REGION = r"[a-z]{2}(-[a-z]+)+-[0-9]"
"""An AWS region name such as us-east-1."""
ZONE = REGION + r"[a-z]?(-[a-z]+-[0-9]+[a-z])?"
"""An Availability Zone (us-east-1a) or Local Zone (us-east-1-dfw-2a) name."""
LOCAL_ZONE = REGION + r"-[a-z]+-[0-9]+[a-z]"
"""A Local Zone name such as us-east-1-dfw-2a."""
ACCOUNT = r"[0-9]{12}"
"""A 12-digit AWS account ID."""
RESERVATION_ID = r"cr-[0-9a-f]{17}"
"""An EC2 Capacity Reservation ID."""
AMI_ID = r"ami-[0-9a-f]{8}([0-9a-f]{9})?"
"""An AMI ID."""
VPC_ID = r"vpc-[0-9a-f]{8}([0-9a-f]{9})?"
"""A VPC ID."""
SUBNET_ID = r"subnet-[0-9a-f]{8}([0-9a-f]{9})?"
"""A VPC subnet ID."""
SECURITY_GROUP_ID = r"sg-[0-9a-f]{8}([0-9a-f]{9})?"
"""A VPC security group ID."""
RESOURCE_GROUP_ARN = (
    r"arn:aws(-cn|-us-gov|-iso|-iso-b|-iso-e|-iso-f|-eusc)?:resource-groups:"
    + REGION
    + ":"
    + ACCOUNT
    + r":group/[A-Za-z0-9_.-]{1,300}"
)
"""A resource group ARN arn:aws:resource-groups:<region>:<account>:group/<name>."""
SNS_TOPIC_ARN = r"arn:aws(-cn|-us-gov)?:sns:" + REGION + ":" + ACCOUNT + r":[A-Za-z0-9_-]{1,256}(\.fifo)?"
"""An SNS topic ARN (a FIFO topic's name ends in .fifo)."""
PRINCIPAL_ARN = r"arn:aws[a-z-]*:iam::" + ACCOUNT + r":(role|user)/[A-Za-z0-9_+=,.@/-]+"
"""An IAM role or user ARN."""
ROLE_ARN = r"arn:aws[a-z-]*:iam::" + ACCOUNT + r":role/[A-Za-z0-9_+=,.@/-]+"
"""An IAM role ARN."""

_COMPILED: dict[str, re.Pattern[str]] = {}


def matches(pattern: str, value: object) -> bool:
    """Whether ``value`` is a string that ``pattern`` (one of this module's) matches whole."""
    if not isinstance(value, str):
        return False
    compiled = _COMPILED.get(pattern)
    if compiled is None:
        compiled = _COMPILED[pattern] = re.compile(pattern)
    return compiled.fullmatch(value) is not None


ASSUMED_ROLE_ARN = (
    r"arn:(?P<partition>aws[a-z-]*):sts::(?P<account>" + ACCOUNT + r"):assumed-role/(?P<role>[^/]+)/(?P<session>.+)"
)
"""GetCallerIdentity's ARN for an assumed role: the role's name (STS drops its path) and the session name."""
PRINCIPAL_ARN_PARTS = (
    r"arn:(?P<partition>aws[a-z-]*):iam::(?P<account>" + ACCOUNT + r"):(?P<kind>role|user)/(?:.*/)?(?P<name>[^/]+)"
)
"""An IAM role or user ARN, split into the parts that name one principal whatever its path."""


def principal_parts(arn: str) -> tuple[str, str, str, str] | None:
    """Partition, account, kind (role or user) and name of an IAM principal ARN, its path dropped: the parts that
    name one principal (role and user names are unique in an account whatever their path); None for other text."""
    found = re.fullmatch(PRINCIPAL_ARN_PARTS, arn)
    return (found["partition"], found["account"], found["kind"], found["name"]) if found else None


PARTITION_REGIONS = (
    ("aws", r"(us|eu|ap|sa|ca|me|af|il|mx)-\w+-\d+"),
    ("aws-cn", r"cn-\w+-\d+"),
    ("aws-us-gov", r"us-gov-\w+-\d+"),
    ("aws-iso", r"us-iso-\w+-\d+"),
    ("aws-iso-b", r"us-isob-\w+-\d+"),
    ("aws-iso-e", r"eu-isoe-\w+-\d+"),
    ("aws-iso-f", r"us-isof-\w+-\d+"),
    ("aws-eusc", r"eusc-de-\w+-\d+"),
)
"""Each partition and the regions it holds: the ``regionRegex`` of each partition in botocore 1.44's
``data/endpoints.json`` (checked 2026-11-28). An ARN names its partition; IAM, EKS and EC2 refuse one of another
partition than the region's."""


def partition_of(region: str) -> str | None:
    """The partition a region belongs to; None for a region no partition claims."""
    return next((name for name, regions in PARTITION_REGIONS if re.fullmatch(regions, region)), None)


def arn_part(arn: str, index: int) -> str | None:
    """Part ``index`` of an ARN (arn:<partition>:<service>:<region>:<account>:<resource>: 1 the partition, 3 the
    region), as written; None for text with fewer parts."""
    parts = arn.split(":", 5)
    return parts[index] if len(parts) == 6 else None


def arn_account(arn: str) -> str | None:
    """The account part of an ARN (arn:<partition>:<service>:<region>:<account>:<resource>), as written (empty for
    a service's own resources, possibly a wildcard in a policy); None for text with fewer parts."""
    return arn_part(arn, 4)


# The ``ultraserver.io/*`` tags components write and the policy rules and plan report read.
#
# Policies only see recorded inputs, so facts a rule needs that AWS would not show in the inputs
# (which SSM path an AMI came from, the reservation's zone) travel as tags.
AMI_RELEASE = "ultraserver.io/ami-release"
"""Pinned AMI release (vYYYYMMDD) or "recommended"."""
AMI_SSM_PARAMETER = "ultraserver.io/ami-ssm-parameter"
"""SSM parameter the launch template's image id was read from."""
EFA_LAYOUT = "ultraserver.io/efa-layout"
"""EFA preset name, or "custom"."""
RESERVATION_ZONE = "ultraserver.io/reservation-zone"
"""Zone of the group's capacity reservation."""
UPGRADE_SAFE = "ultraserver.io/upgrade-safe"
"""Set to "true" while a capacity-block group is held at 0 nodes for an upgrade."""
STACK = "ultraserver.io/stack"
"""Pulumi stack that owns the resource."""
PUBLIC_ENDPOINT_FROM_ANYWHERE = "ultraserver.io/public-endpoint-from-anywhere"
"""On the EKS cluster, "true" when the stack set allowPublicEndpointFromAnywhere: the policy honours the same opt-in."""

TOOLKIT_TAG_KEYS: tuple[str, ...] = (
    STACK,
    AMI_RELEASE,
    AMI_SSM_PARAMETER,
    EFA_LAYOUT,
    RESERVATION_ZONE,
    UPGRADE_SAFE,
    "Name",
    "kubernetes.io/cluster/<cluster>",
    "kubernetes.io/role/internal-elb",
)
"""The most tags the toolkit adds to one resource (GPU launch templates and groups; subnets add Name and the
Kubernetes subnet tags); user tags share the 50-tag budget with them."""
