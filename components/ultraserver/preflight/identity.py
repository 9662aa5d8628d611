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
from dataclasses import dataclass

from ultraserver.facts.aws import aws_ids
from ultraserver.preflight.clients import ApiFailure, Client, call, call_all
from ultraserver.preflight.report import FAIL, PASS, WARN, check
from ultraserver.problems import Problem

NAME = "cluster creator"
# arn:<partition>:sts::<account>:assumed-role/<role name>/<session>: STS drops the role's path (IAM user guide,
# reference_identifiers, "ARNs": assumed-role ARNs carry the role name only).
_ASSUMED = re.compile(aws_ids.ASSUMED_ROLE_ARN)


def principal_arn(caller_arn: str) -> str:
    """The IAM principal behind a GetCallerIdentity ARN: an assumed role's role ARN (without the path STS drops)."""
    assumed = _ASSUMED.fullmatch(caller_arn)
    if not assumed:
        return caller_arn
    return f"arn:{assumed['partition']}:iam::{assumed['account']}:role/{assumed['role']}"


def _identity(arn: str) -> tuple[str, ...]:
    """Partition, account, kind and name: the parts that name one principal whatever its path."""
    return aws_ids.principal_parts(arn) or (arn,)


@dataclass(frozen=True)
class ClusterAccess:
    """What EKS says of the stack's cluster: whether it exists, and the principals of its access entries."""

    exists: bool
    principals: tuple[str, ...] = ()


def cluster_access(eks: Client, cluster_name: str) -> ClusterAccess:
    """DescribeCluster (ResourceNotFoundException: not created yet), then ListAccessEntries of an existing one."""
    try:
        call(eks, "describe_cluster", name=cluster_name)
    except ApiFailure as exc:
        if exc.code == "ResourceNotFoundException":
            return ClusterAccess(False)
        raise
    entries = call_all(eks, "list_access_entries", clusterName=cluster_name).get("accessEntries", [])
    return ClusterAccess(True, tuple(entries))


def _listed(principal: str, arns: Sequence[str]) -> list[str]:
    return [a for a in arns if _identity(a) == _identity(principal)]


def check_creator(
    caller_arn: str, admin_principal_arns: Sequence[str], settings_key: str, access: ClusterAccess | None = None
) -> Problem:
    """The caller against the admin list: on a first create (no cluster, or ``access`` unknown) the caller becomes
    admin by creating it, so a listed caller FAILs; on an existing cluster the access entries there decide."""
    caller = principal_arn(caller_arn)
    listed = _listed(caller, admin_principal_arns)
    if access is not None and access.exists:
        return _existing(caller, listed, access, settings_key)
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


def _existing(caller: str, listed: list[str], access: ClusterAccess, settings_key: str) -> Problem:
    """Day 2: the cluster exists; the caller reaches its API with an access entry there or one this update adds."""
    has_entry = bool(_listed(caller, access.principals))
    if has_entry:
        how = (
            f"listed in {settings_key}"
            if listed
            else f"not in {settings_key}: the creator's entry, or one made outside"
        )
        return check(NAME, PASS, f"the cluster exists; {caller} has an access entry ({how})")
    if listed:
        return check(NAME, PASS, f"the cluster exists; {caller} is in {settings_key}, so this update adds its entry")
    return check(
        NAME,
        WARN,
        f"the cluster exists and {caller} has no access entry there, nor is it in {settings_key}: the Kubernetes API "
        "refuses it (401) for the Kubernetes layer",
        f"add {caller} to {settings_key}, or run pulumi up as a principal with an access entry "
        "(docs/deploy.md, Who can reach the cluster)",
    )
