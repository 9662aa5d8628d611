"""Day 2: an access entry EKS holds for a listed principal that the stack does not own fails preflight (pulumi up
would get 409), and an admin list changed in the update that moves pulumi-eks's positional entries is refused."""

from __future__ import annotations

from typing import Any

from helpers.preflight import stubbed, target
from ultraserver.config.access_entries import DeployedEntry, migration_problems
from ultraserver.facts.aws.aws_ids import STACK
from ultraserver.preflight.access_entries import MIGRATION, NAME, identity_checks
from ultraserver.preflight.report import FAIL, PASS, WARN

A = "arn:aws:iam::123456789012:role/PlatformAdmin"
B = "arn:aws:iam::123456789012:role/ci/GitHubDeploy"
C = "arn:aws:iam::123456789012:role/Oncall"
VIEW = "arn:aws:iam::123456789012:role/ci/GitHubPreview"
CALLER = "arn:aws:sts::123456789012:assumed-role/Deployer/s"
PREFIX = "urn:pulumi:dev::ultraserver-eks::ultraserver:index:Platform$ultraserver:index:Cluster"


def positional(index: int, principal: str) -> DeployedEntry:
    """An entry as pulumi-eks's accessEntries made it: under the eks:index:Cluster, named by position."""
    return DeployedEntry(f"{PREFIX}$eks:index:Cluster$aws:eks/accessEntry:AccessEntry::c-admin-{index}", principal)


def run(
    answers: dict[str, dict[str, str] | None],
    *,
    exists: bool = True,
    previewers: tuple[str, ...] = (),
    deployed: tuple[DeployedEntry, ...] | None = None,
) -> list[Any]:
    """identity_checks for a stack ``dev`` on cluster ``c`` whose admins are ``answers``' keys; each value is the
    tags DescribeAccessEntry answers for it, None: ResourceNotFoundException. Every queued call must be made."""
    eks, stub = stubbed("eks")
    if not exists:
        stub.add_client_error("describe_cluster", "ResourceNotFoundException", http_status_code=404)
    else:
        stub.add_response("describe_cluster", {"cluster": {"name": "c"}}, {"name": "c"})
        stub.add_response("list_access_entries", {"accessEntries": []}, {"clusterName": "c"})
        for principal, tags in answers.items():
            request = {"clusterName": "c", "principalArn": principal}
            if tags is None:
                stub.add_client_error("describe_access_entry", "ResourceNotFoundException", "", 404, request)
            else:
                entry = {"clusterName": "c", "principalArn": principal, "tags": tags}
                stub.add_response("describe_access_entry", {"accessEntry": entry}, request)
    admins = tuple(p for p in answers if p not in previewers)
    t = target(
        admin_principal_arns=admins,
        preview_principal_arns=previewers,
        cluster_name="c",
        stack="dev",
        deployed_entries=deployed,
    )
    checks = identity_checks(t, eks, CALLER)
    stub.assert_no_pending_responses()
    return checks


def named(checks: list[Any], name: str) -> list[Any]:
    return [c for c in checks if c.key == name]


def test_an_entry_made_outside_the_stack_fails_naming_principal_key_and_fixes() -> None:
    (entry,) = named(run({A: {STACK: "dev"}, B: {}}), NAME)
    assert entry.level == FAIL
    assert entry.value.startswith(f"cluster.adminPrincipalArns[1] ({B}): cluster c already has an access entry")
    assert "409 ResourceInUseException" in entry.value
    assert f"remove {B} from cluster.adminPrincipalArns" in entry.fix
    # The import id is <cluster>:<principal> (pulumi_aws eks/access_entry.py, "Import"), the name the program's.
    assert f"aws:eks/accessEntry:AccessEntry c-admin-123456789012-role-GitHubDeploy c:{B}" in entry.fix
    assert f"delete-access-entry --cluster-name c --principal-arn {B}" in entry.fix


def test_another_stacks_tag_is_not_ownership_and_a_preview_principal_is_asked_too() -> None:
    checks = run({A: None, VIEW: {STACK: "prod"}}, previewers=(VIEW,))
    (entry,) = named(checks, NAME)
    assert entry.level == FAIL
    assert "cluster.previewPrincipalArns[0]" in entry.value and f"{STACK}=prod" in entry.value


def test_own_entries_and_absent_ones_pass() -> None:
    (entry,) = named(run({A: {STACK: "dev"}, B: None}), NAME)
    assert entry.level == PASS
    assert "1 entry(ies) of this stack, 1 to create" in entry.value


def test_an_untagged_entry_the_deployed_state_holds_is_the_stacks() -> None:
    # Entries pulumi-eks made before the toolkit tagged them: the stack's state is what owns them.
    (entry,) = named(run({A: {}}, deployed=(positional(0, A),)), NAME)
    assert entry.level == PASS


def test_no_cluster_yet_skips_with_a_line_and_asks_nothing_more() -> None:
    checks = run({A: {}}, exists=False)
    (entry,) = named(checks, NAME)
    assert entry.level == PASS and "does not exist yet" in entry.value
    assert named(checks, MIGRATION) == []


def test_a_denied_describe_access_entry_is_a_fail_naming_the_action() -> None:
    eks, stub = stubbed("eks")
    stub.add_response("describe_cluster", {"cluster": {"name": "c"}}, {"name": "c"})
    stub.add_response("list_access_entries", {"accessEntries": []}, {"clusterName": "c"})
    stub.add_client_error("describe_access_entry", "AccessDeniedException", http_status_code=403)
    t = target(admin_principal_arns=(A,), cluster_name="c", stack="dev")
    (entry,) = named(identity_checks(t, eks, CALLER), NAME)
    assert entry.level == FAIL and "eks:DescribeAccessEntry" in entry.fix


# ---------------------------------------------------------------- the positional aliases


def test_without_the_state_the_migration_check_says_it_did_not_run_and_how() -> None:
    (line,) = named(run({A: {STACK: "dev"}}), MIGRATION)
    assert line.level == WARN and line.value.startswith("not checked")
    assert "--deployed FILE" in line.fix and "pulumi stack export" in line.fix


def test_a_reordered_list_in_the_migrating_update_is_refused_with_the_fix() -> None:
    deployed = (positional(0, A), positional(1, B))
    (line,) = named(run({B: {}, A: {}}, deployed=deployed), MIGRATION)
    assert line.level == FAIL
    assert f"[0] {A} -> {B}" in line.value and f"[1] {B} -> {A}" in line.value
    assert line.fix.startswith(f"first run `pulumi up` with the list as deployed ({A}, {B})")


def test_the_unchanged_list_and_an_appended_admin_pass() -> None:
    deployed = (positional(0, A), positional(1, B))
    assert named(run({A: {}, B: {}}, deployed=deployed), MIGRATION)[0].level == PASS
    assert named(run({A: {}, B: {}, C: None}, deployed=deployed), MIGRATION)[0].level == PASS


def test_inserting_or_dropping_the_first_admin_is_refused_and_dropping_the_last_is_not() -> None:
    deployed = [positional(0, A), positional(1, B)]
    assert [p.key for p in migration_problems("c", [C, A, B], deployed)] == ["cluster.adminPrincipalArns"]
    assert len(migration_problems("c", [B], deployed)) == 1
    assert migration_problems("c", [A], deployed) == []


def test_entries_already_named_after_their_principal_need_no_migration() -> None:
    moved = DeployedEntry(f"{PREFIX}$aws:eks/accessEntry:AccessEntry::c-admin-123456789012-role-PlatformAdmin", A)
    assert migration_problems("c", [B, A], [moved]) == []
    # Another cluster's positional names are not this cluster's; a URN of another shape is no entry of ours.
    assert migration_problems("other", [B], [positional(0, A)]) == []
    assert migration_problems("c", [B], [DeployedEntry("c-admin-0", A)]) == []
