"""Who runs `pulumi up`: the principal EKS makes the cluster creator, which must not be in adminPrincipalArns.

pulumi-eks creates every API-mode cluster with ``bootstrapClusterCreatorAdminPermissions: true`` (pulumi/pulumi-eks
nodejs/eks/cluster/cluster.ts:739 at v4.3.0 and at master 7bf0c1b, checked 2026-11-25; the mirror has no v4.4.0 tag,
the SDK we pin is 4.4.0; pulumi/pulumi-eks#2373): EKS gives the creating principal an access entry
with cluster-admin. An entry in ``accessEntries`` for the same principal then fails with a 409
(ResourceInUseException) when pulumi-eks creates it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ultraserver.facts import aws_ids
from ultraserver.preflight.report import FAIL, PASS, check
from ultraserver.problems import Problem

NAME = "cluster creator"
# arn:<partition>:sts::<account>:assumed-role/<role name>/<session>: STS drops the role's path (IAM user guide,
# reference_identifiers, "ARNs": assumed-role ARNs carry the role name only).
_ASSUMED = re.compile(aws_ids.ASSUMED_ROLE_ARN)
_IAM = re.compile(aws_ids.PRINCIPAL_ARN_PARTS)


def principal_arn(caller_arn: str) -> str:
    """The IAM principal behind a GetCallerIdentity ARN: an assumed role's role ARN (without the path STS drops)."""
    assumed = _ASSUMED.fullmatch(caller_arn)
    if not assumed:
        return caller_arn
    return f"arn:{assumed['partition']}:iam::{assumed['account']}:role/{assumed['role']}"


def _identity(arn: str) -> tuple[str, ...]:
    """Partition, account, kind and name: the parts that name one principal whatever its path."""
    found = _IAM.fullmatch(arn)
    return (found["partition"], found["account"], found["kind"], found["name"]) if found else (arn,)


def check_creator(caller_arn: str, admin_principal_arns: Sequence[str], settings_key: str) -> Problem:
    """FAIL when the caller, who becomes cluster admin by creating the cluster, is also in the admin list."""
    caller = principal_arn(caller_arn)
    listed = [a for a in admin_principal_arns if _identity(a) == _identity(caller)]
    if listed:
        return check(
            NAME,
            FAIL,
            f"the caller {caller} creates the cluster and becomes its admin; {settings_key} lists it too ({listed[0]}),"
            " and EKS refuses the second access entry (409)",
            f"remove {listed[0]} from {settings_key}, or run pulumi up as another identity "
            "(docs/deploy.md, First deploy, in order)",
        )
    return check(NAME, PASS, f"{caller} creates the cluster and becomes its admin (not in {settings_key})")
