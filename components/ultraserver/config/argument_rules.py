"""Rules a stack file's model and a program's component arguments share: the cluster name EKS accepts and the tags
AWS accepts, keyed as the caller wrote them (``ultraserver-eks:cluster.tags`` or ``ClusterArgs.tags``)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ultraserver.facts.aws import limits
from ultraserver.problems import Problem

CLUSTER_NAME = r"^[A-Za-z][A-Za-z0-9_-]*$"
"""An EKS cluster name as the toolkit takes it: letters, digits, - and _, starting with a letter (botocore 1.44's
eks model, shape ClusterName: 1-100 characters of pattern ^[0-9A-Za-z][A-Za-z0-9\\-_]*; the leading letter keeps
every derived IAM and EC2 name valid)."""


def cluster_name_problems(name: object, at: str) -> list[Problem]:
    """The cluster name EKS accepts, of at most limits.EKS_CLUSTER_NAME characters."""
    if not isinstance(name, str):
        return []  # the argument's type check names it
    if not re.fullmatch(CLUSTER_NAME, name):
        why = "letters, digits, - and _, starting with a letter"
    elif limits.over(limits.EKS_CLUSTER_NAME, len(name)):
        why = f"at most {limits.EKS_CLUSTER_NAME.maximum} characters ({limits.EKS_CLUSTER_NAME.source})"
    else:
        return []
    return [Problem(at, name, f"an EKS cluster name: {why}", "correct the name, e.g. gb200")]


def private_subnet_problems(subnet_ids: object, at: str) -> list[Problem]:
    """Two private subnets at least (EKS CreateCluster needs subnets in two zones); Outputs are not judged."""
    if not isinstance(subnet_ids, (list, tuple)) or len(subnet_ids) >= 2:
        return []
    wanted = "at least two subnets in different zones (EKS requires two)"
    return [Problem(at, list(subnet_ids), wanted, "list two or more private subnets")]


def tag_problems(tags: Mapping[str, str], at: str) -> list[Problem]:
    """Tags AWS accepts: keys of 1 character or more, no aws: prefix in keys or values, key and value lengths."""
    found = []
    for name, value in tags.items():
        if name.lower().startswith(limits.RESERVED_TAG_PREFIX):
            found.append(Problem(f"{at}.{name}", name, "keys without the reserved aws: prefix", "rename the tag"))
        if not name:
            found.append(Problem(f"{at}.{name}", name, "keys of 1 character or more", "name the tag, or drop it"))
        if value.lower().startswith(limits.RESERVED_TAG_PREFIX):
            reserved = "values without the reserved aws: prefix (EC2 refuses it in values too)"
            found.append(Problem(f"{at}.{name}", value, reserved, "change the value"))
        if limits.over(limits.TAG_KEY, len(name)):
            found.append(Problem(f"{at}.{name}", name, f"keys up to {limits.TAG_KEY.maximum} characters", "shorten"))
        if limits.over(limits.TAG_VALUE, len(value)):
            found.append(
                Problem(f"{at}.{name}", value, f"values up to {limits.TAG_VALUE.maximum} characters", "shorten")
            )
    return found
