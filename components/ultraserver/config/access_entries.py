"""The cluster's access entries, each named after its principal, not its place in the list.

EKS refuses a second entry for a principal (409), ``principalArn`` replaces an entry, and Pulumi creates a
replacement before it deletes the old one: entries named by position (``admin-0``, ``admin-1``) turned an inserted,
removed or reordered admin into a replacement that fails. Named after the principal, an entry keeps its name
wherever it is listed. ``former_key`` is the positional name pulumi-eks gave it (``accessEntries`` keys of earlier
versions of this toolkit), which the entry takes as an alias so an existing stack moves without replacement.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ultraserver.facts.aws import aws_ids
from ultraserver.facts.aws.permissions import CLUSTER_ADMIN_POLICY, VIEW_POLICY
from ultraserver.problems import ConfigError, Described, Problem

ENTRY_TYPE = "aws:eks/accessEntry:AccessEntry"
ADMINS_KEY = "cluster.adminPrincipalArns"
PREVIEWERS_KEY = "cluster.previewPrincipalArns"


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


def entry_name(cluster_name: str, spec: AccessEntrySpec) -> str:
    """The Pulumi name of a spec's entry (the Cluster component's name is the cluster's)."""
    return f"{cluster_name}-{spec.key}"


def stack_keys(admins: Sequence[str], previewers: Sequence[str]) -> list[str]:
    """The stack key of each entry of ``access_entry_specs(admins, previewers)``, in its order."""
    return [f"{ADMINS_KEY}[{i}]" for i in range(len(admins))] + [
        f"{PREVIEWERS_KEY}[{i}]" for i in range(len(previewers))
    ]


@dataclass(frozen=True)
class DeployedEntry:
    """An access entry in the deployed state (``pulumi stack export``): its URN and principal."""

    urn: str
    principal_arn: str


def positional_entries(cluster_name: str, deployed: Sequence[DeployedEntry]) -> dict[int, DeployedEntry]:
    """The deployed entries still under pulumi-eks's positional names (``<cluster>-admin-<index>`` under the
    eks:index:Cluster component), by index: the ones this toolkit's aliases adopt on the next update."""
    positional = re.compile(re.escape(cluster_name) + r"-admin-(\d+)")
    found = {}
    for entry in deployed:
        parts = entry.urn.split("::")  # urn:pulumi:<stack>::<project>::<qualified type>::<name>
        qualified_type, name = (parts[2], parts[-1]) if len(parts) >= 4 else ("", "")
        if qualified_type.endswith(f"eks:index:Cluster${ENTRY_TYPE}") and (match := positional.fullmatch(name)):
            found[int(match[1])] = entry
    return found


def migration_problems(cluster_name: str, admins: Sequence[str], deployed: Sequence[DeployedEntry]) -> list[Problem]:
    """An admin list that changes at a position still held by a positional entry, in the update that adopts it.

    The alias of the principal at index i names ``<cluster>-admin-<i>``: with a different principal there, Pulumi
    adopts that entry, sees principalArn change (which replaces an entry), and creates the replacement before it
    deletes the old one, so EKS refuses it (409) while the principal's own entry still exists at another position.
    Appending admins or removing them from the end adopts nothing wrongly.
    """
    old = positional_entries(cluster_name, deployed)
    moved = sorted(i for i, e in old.items() if i < len(admins) and admins[i] != e.principal_arn)
    if not moved:
        return []
    deployed_list = [old[i].principal_arn for i in sorted(old)]
    where = ", ".join(f"[{i}] {old[i].principal_arn} -> {admins[i]}" for i in moved)
    return [
        Problem(
            ADMINS_KEY,
            Described(f"a list changed at positions the deployed entries still hold by index ({where})"),
            "for the first update after upgrading, the list as deployed, in its order: each entry named "
            f"{cluster_name}-admin-<index> is adopted by the principal at that index (appending is fine)",
            f"first run `pulumi up` with the list as deployed ({', '.join(deployed_list)}), which moves the entries "
            "to names of their principals; then change the list in a second update (docs/deploy.md, Who can reach "
            "the cluster)",
        )
    ]
