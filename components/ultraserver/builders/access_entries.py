"""The cluster's access entries, each named after its principal, not its place in the list.

EKS refuses a second entry for a principal (409), ``principalArn`` replaces an entry, and Pulumi creates a
replacement before it deletes the old one: entries named by position (``admin-0``, ``admin-1``) turned an inserted,
removed or reordered admin into a replacement that fails. Named after the principal, an entry keeps its name
wherever it is listed. ``former_key`` is the positional name pulumi-eks gave it (``accessEntries`` keys of earlier
versions of this toolkit), which the entry takes as an alias so an existing stack moves without replacement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ultraserver.facts.aws import aws_ids
from ultraserver.facts.aws.permissions import CLUSTER_ADMIN_POLICY, VIEW_POLICY
from ultraserver.problems import ConfigError, Problem


@dataclass(frozen=True)
class AccessEntrySpec:
    """One access entry with one cluster-scoped policy association."""

    key: str
    """Name of the entry, from its principal: ``admin-<account>-<role|user>-<name>``."""
    principal_arn: str
    policy_arn: str
    association: str
    """Name of the policy association under the entry."""
    former_key: str = ""
    """The positional key of earlier versions (admin-<index>), for an alias; empty for entries that had none."""


def principal_key(principal_arn: str, where: str = "ClusterArgs.admin_principal_arns") -> str:
    """Account, kind and name of a principal (its path left out, as STS and EKS name one role whatever its path):
    stable across list changes, and valid in a Pulumi name (IAM names use letters, digits and +=,.@_-)."""
    parts = aws_ids.principal_parts(principal_arn)
    if parts is None:  # stack settings admit only these; a program's ClusterArgs may hold anything
        raise ConfigError(
            Problem(
                where,
                principal_arn,
                "an IAM role or user ARN arn:aws:iam::<account>:role/<name> (or :user/<name>)",
                "name the principal by its IAM ARN (an assumed-role session ARN is not a principal)",
            )
        )
    _, account, kind, name = parts
    return f"{account}-{kind}-{name}"


def access_entry_specs(admins: Sequence[str], previewers: Sequence[str] = ()) -> list[AccessEntrySpec]:
    """Cluster admin for each admin, read-only for each preview principal."""
    specs = [
        AccessEntrySpec(f"admin-{principal_key(arn)}", arn, CLUSTER_ADMIN_POLICY, "cluster-admin", f"admin-{index}")
        for index, arn in enumerate(admins)
    ]
    specs += [
        AccessEntrySpec(f"preview-{principal_key(arn, 'ClusterArgs.preview_principal_arns')}", arn, VIEW_POLICY, "view")
        for arn in previewers
    ]
    return specs
