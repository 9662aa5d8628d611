"""Access entries are named after their principal: reordering admins changes no resource; earlier positional names
are aliases, so an existing stack moves without replacement."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.stacks import ROOT, stack_config
from ultraserver.config.access_entries import access_entry_specs, principal_key
from ultraserver.config.settings import parse_settings
from ultraserver.facts.aws.permissions import CLUSTER_ADMIN_POLICY, VIEW_POLICY
from ultraserver.offline import engine, run_plan
from ultraserver.problems import ConfigError

A = "arn:aws:iam::111122223333:role/PlatformAdmin"
B = "arn:aws:iam::111122223333:role/ci/GitHubDeploy"
PREVIEW = "arn:aws:iam::111122223333:role/ci/GitHubPreview"
ENTRY = "aws:eks/accessEntry:AccessEntry"
ASSOCIATION = "aws:eks/accessPolicyAssociation:AccessPolicyAssociation"


def cluster(**changes: Any) -> dict[str, Any]:
    return {**stack_config("gb200-x72")["ultraserver-eks:cluster"], **changes}


def entries(admins: list[str], previewers: tuple[str, ...] = ()) -> dict[str, tuple[str, str]]:
    """Entry and association names -> (principal, policy) in the gb200-x72 plan with these lists."""
    settings = cluster(adminPrincipalArns=admins, previewPrincipalArns=list(previewers))
    plan = run_plan(ROOT, "gb200-x72", {"ultraserver-eks:cluster": settings})
    found = {r.name: (r.inputs["principalArn"], "") for r in plan.of_type(ENTRY)}
    found |= {r.name: (r.inputs["principalArn"], r.inputs["policyArn"]) for r in plan.of_type(ASSOCIATION)}
    assert not plan.of_type("eks:index:Cluster")[0].inputs.get("accessEntries"), "no positional pulumi-eks entries"
    return found


def test_reordering_two_admins_keeps_every_resource_name() -> None:
    before, after = entries([A, B]), entries([B, A])
    assert before == after
    assert before == {
        "gb200-x72-admin-111122223333-role-PlatformAdmin": (A, ""),
        "gb200-x72-admin-111122223333-role-PlatformAdmin-cluster-admin": (A, CLUSTER_ADMIN_POLICY),
        "gb200-x72-admin-111122223333-role-GitHubDeploy": (B, ""),
        "gb200-x72-admin-111122223333-role-GitHubDeploy-cluster-admin": (B, CLUSTER_ADMIN_POLICY),
    }


def test_removing_the_first_admin_leaves_the_second_untouched() -> None:
    both, second = entries([A, B]), entries([B])
    assert {k: v for k, v in both.items() if v[0] == B} == second


def test_each_entry_aliases_the_positional_name_it_had(monkeypatch: pytest.MonkeyPatch) -> None:
    aliases: dict[str, list[tuple[str, str]]] = {}
    register = engine.RecordingMonitor.RegisterResource

    def spy(self: engine.RecordingMonitor, request: Any) -> Any:
        if request.type in (ENTRY, ASSOCIATION):
            aliases[request.name] = [(a.spec.name, a.spec.parentUrn) for a in request.aliases]
        return register(self, request)

    monkeypatch.setattr(engine.RecordingMonitor, "RegisterResource", spy)
    run_plan(ROOT, "gb200-x72", {"ultraserver-eks:cluster": cluster(adminPrincipalArns=[A, B])})
    component = "ultraserver:index:Cluster$eks:index:Cluster::gb200-x72"
    (entry,) = aliases["gb200-x72-admin-111122223333-role-GitHubDeploy"]
    assert entry[0] == "gb200-x72-admin-1"  # pulumi-eks's <component>-<key> of the second admin
    assert entry[1].endswith(component)
    (association,) = aliases["gb200-x72-admin-111122223333-role-GitHubDeploy-cluster-admin"]
    assert association[0] == "gb200-x72-admin-1-cluster-admin"  # <component>-<key>-<policy key>, under the entry
    assert association[1].endswith(f"{component.rsplit('::', 1)[0]}${ENTRY}::gb200-x72-admin-1")


def test_the_preview_role_reads_only() -> None:
    found = entries([A], (PREVIEW,))
    assert found["gb200-x72-preview-111122223333-role-GitHubPreview-view"] == (PREVIEW, VIEW_POLICY)


def test_the_key_ignores_the_path_as_iam_does() -> None:
    assert principal_key(B) == principal_key("arn:aws:iam::111122223333:role/GitHubDeploy")
    assert [s.former_key for s in access_entry_specs([A, B], [PREVIEW])] == ["admin-0", "admin-1", ""]


@pytest.mark.parametrize(
    ("changes", "where"),
    [
        ({"adminPrincipalArns": [A, "arn:aws:iam::111122223333:role/other/PlatformAdmin"]}, "adminPrincipalArns[1]"),
        ({"adminPrincipalArns": [A], "previewPrincipalArns": [A]}, "previewPrincipalArns[0]"),
    ],
)
def test_one_principal_listed_twice_is_refused(changes: dict[str, Any], where: str) -> None:
    config = {**stack_config("gb200-x72"), "ultraserver-eks:cluster": cluster(**changes)}
    with pytest.raises(ConfigError) as err:
        parse_settings(config)
    assert [p.key for p in err.value.items] == [f"ultraserver-eks:cluster.{where}"]


def test_a_program_passing_a_session_arn_gets_a_problem_naming_its_argument() -> None:
    with pytest.raises(ConfigError) as err:
        access_entry_specs([A], ["arn:aws:sts::111122223333:assumed-role/GitHubPreview/run-7"])
    (problem,) = err.value.items
    assert problem.key == "ClusterArgs.preview_principal_arns"
    assert "assumed-role session ARN is not a principal" in problem.fix
