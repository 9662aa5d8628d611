"""Day 2: the access entries this update creates against those EKS already holds, and a pending alias migration.

EKS keeps one access entry per principal: CreateAccessEntry for a principal that has one answers 409
ResourceInUseException ("The specified access entry resource is already in use on this cluster", EKS API
reference, CreateAccessEntry, Errors). An entry made outside the stack (the creator's bootstrap entry, one made by
hand or by another tool) therefore fails ``pulumi up``. DescribeAccessEntry (EKS API reference,
DescribeAccessEntry: GET /clusters/{name}/access-entries/{principalArn}; ResourceNotFoundException when there is
none; the answer's ``accessEntry.tags``) tells for each principal whether an entry exists and whose it is: the stack
tags every entry it creates with ``ultraserver.io/stack`` (resources/platform.py), or ``--deployed`` (the stack's
``pulumi stack export``) holds it.
"""

from __future__ import annotations

from ultraserver.config.access_entries import (
    ADMINS_KEY,
    AccessEntrySpec,
    access_entry_specs,
    entry_name,
    migration_problems,
    stack_keys,
)
from ultraserver.facts.aws.aws_ids import STACK
from ultraserver.preflight.clients import ApiFailure, Client, call
from ultraserver.preflight.identity import NAME as IDENTITY
from ultraserver.preflight.identity import check_creator, cluster_access
from ultraserver.preflight.report import FAIL, PASS, WARN, check
from ultraserver.preflight.target import PreflightTarget
from ultraserver.problems import Problem

NAME = "access entries"
MIGRATION = "access-entry migration"


def _entry_tags(eks: Client, cluster: str, principal: str) -> dict[str, str] | None:
    """The tags of the principal's access entry on ``cluster``; None when it has none."""
    try:
        answer = call(eks, "describe_access_entry", clusterName=cluster, principalArn=principal)
    except ApiFailure as exc:
        if exc.code == "ResourceNotFoundException":
            return None
        raise
    return dict(answer.get("accessEntry", {}).get("tags") or {})


def _owned(target: PreflightTarget, principal: str, tags: dict[str, str]) -> bool:
    """The entry is this stack's: tagged with its name, or in its deployed state (--deployed)."""
    in_state = any(e.principal_arn == principal for e in target.deployed_entries or ())
    return tags.get(STACK) == target.stack or in_state


def _foreign(target: PreflightTarget, key: str, spec: AccessEntrySpec, tags: dict[str, str]) -> Problem:
    cluster, principal = target.cluster_name, spec.principal_arn
    owner = f"tagged {STACK}={tags[STACK]}" if STACK in tags else f"no {STACK} tag"
    return check(
        NAME,
        FAIL,
        f"{key} ({principal}): cluster {cluster} already has an access entry for it that this stack does not own "
        f"({owner}; the creator's bootstrap entry, or one made outside Pulumi), so pulumi up fails creating it "
        "(409 ResourceInUseException)",
        f"remove {principal} from {key.split('[')[0]} (its entry stays), or adopt it: `pulumi import "
        f"aws:eks/accessEntry:AccessEntry {entry_name(cluster, spec)} {cluster}:{principal} --parent "
        "cluster=<URN of the ultraserver:index:Cluster resource, `pulumi stack --show-urns`>`, or delete it: `aws eks "
        f"delete-access-entry --cluster-name {cluster} --principal-arn {principal}` (the principal loses access "
        "until the update recreates it); an entry the stack already holds passes with --deployed FILE "
        "(`pulumi stack export --file FILE`)",
    )


def check_access_entries(target: PreflightTarget, eks: Client, cluster_exists: bool) -> list[Problem]:
    """DescribeAccessEntry for every principal the stack gives an entry; an existing entry it does not own FAILs."""
    admins, previewers = target.admin_principal_arns, target.preview_principal_arns
    if not cluster_exists:
        return [check(NAME, PASS, f"cluster {target.cluster_name} does not exist yet: no entry to collide with")]
    found, owned = [], 0
    for key, spec in zip(stack_keys(admins, previewers), access_entry_specs(admins, previewers), strict=True):
        tags = _entry_tags(eks, target.cluster_name, spec.principal_arn)
        if tags is not None and not _owned(target, spec.principal_arn, tags):
            found.append(_foreign(target, key, spec, tags))
        owned += tags is not None
    if found:
        return found
    count = len(admins) + len(previewers)
    return [check(NAME, PASS, f"{count} principal(s): {owned} entry(ies) of this stack, {count - owned} to create")]


def check_migration(target: PreflightTarget, cluster_exists: bool) -> list[Problem]:
    """A pending move of pulumi-eks's positional entries (``--deployed``) with an admin list changed at a held
    position; without the state, one line saying the check did not run."""
    if not cluster_exists or not target.admin_principal_arns:
        return []
    if target.deployed_entries is None:
        return [
            check(
                MIGRATION,
                WARN,
                f"not checked: a reordered {ADMINS_KEY} in the update that moves entries named by position would "
                "adopt the wrong entries, and preflight was not given the deployed state",
                "rerun with --deployed FILE from `pulumi stack export --file FILE`",
            )
        ]
    problems = migration_problems(target.cluster_name, target.admin_principal_arns, target.deployed_entries)
    if problems:
        return [check(MIGRATION, FAIL, f"{p.value}: {p.allowed}", p.fix) for p in problems]
    return [check(MIGRATION, PASS, "the deployed entries keep their principals in this update")]


def identity_checks(target: PreflightTarget, eks: Client, caller: str) -> list[Problem]:
    """The caller against adminPrincipalArns, judged by the cluster's access entries when it exists already; then
    the entries this update creates against those EKS holds, and a pending move of positional entries."""
    if not target.cluster_name:
        return [check_creator(caller, target.admin_principal_arns, ADMINS_KEY)]
    try:
        access = cluster_access(eks, target.cluster_name)
    except ApiFailure as exc:
        return [check(IDENTITY, FAIL, f"cannot tell whether cluster {target.cluster_name} exists: {exc}", exc.fix)]
    try:
        entries = check_access_entries(target, eks, access.exists)
    except ApiFailure as exc:
        entries = [check(NAME, FAIL, str(exc), exc.fix)]
    creator = check_creator(caller, target.admin_principal_arns, ADMINS_KEY, access)
    return [creator, *entries, *check_migration(target, access.exists)]
