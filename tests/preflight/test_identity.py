"""The cluster creator: pulumi-eks makes the caller cluster admin on a first create, so it must not be listed again
then; on an existing cluster its access entries decide. Preflight asks AWS as the stack's profile and role."""

from __future__ import annotations

import json

import boto3
import pytest
from helpers.preflight import NOW, REGION, quota_answer, stubbed, target
from ultraserver.config.aws_identity import AssumeRoleSettings
from ultraserver.config.settings import parse_settings
from ultraserver.facts.aws.aws_ids import STACK as STACK_TAG
from ultraserver.preflight.checks import run_preflight
from ultraserver.preflight.clients import PreflightClients, make_clients
from ultraserver.preflight.identity import NAME, check_creator, principal_arn
from ultraserver.preflight.report import FAIL, PASS, WARN
from ultraserver.preflight.target import target_from_settings

STACK = {
    "aws:region": REGION,
    "ultraserver-eks:cluster": json.dumps({"name": "c", "endpointPublicAccessCidrs": ["198.18.0.0/16"]}),
    "ultraserver-eks:network": json.dumps({"availabilityZones": ["us-east-1a", "us-east-1b"]}),
}

SESSION = "arn:aws:sts::123456789012:assumed-role/PlatformAdmin/botocore-session-1732520000"


CALLER_ROLE = "arn:aws:iam::123456789012:role/platform/PlatformAdmin"


def day_two(
    admins: tuple[str, ...], entries: list[str] | None, *, denied: bool = False, confirmed: bool = False
) -> tuple[list, list]:  # type: ignore[type-arg]
    """Preflight of a stack named ``c`` as the PlatformAdmin session; ``entries`` None: no such cluster yet;
    ``confirmed``: the clients already asked who they act as (STS answers nothing more)."""
    sts, sts_stub = stubbed("sts")
    if not confirmed:
        sts_stub.add_response("get_caller_identity", {"Account": "123456789012", "Arn": SESSION, "UserId": "AROA:s"})
    eks, eks_stub = stubbed("eks")
    if denied:
        eks_stub.add_client_error("describe_cluster", service_error_code="AccessDeniedException", http_status_code=403)
    elif entries is None:
        eks_stub.add_client_error(
            "describe_cluster", service_error_code="ResourceNotFoundException", http_status_code=404
        )
    else:
        eks_stub.add_response("describe_cluster", {"cluster": {"name": "c", "status": "ACTIVE"}}, {"name": "c"})
        eks_stub.add_response("list_access_entries", {"accessEntries": entries}, {"clusterName": "c"})
        for admin in admins:  # each listed principal's entry: this stack's own (tagged with its name) or none
            request = {"clusterName": "c", "principalArn": admin}
            if admin in entries:
                answer = {"accessEntry": {"principalArn": admin, "tags": {STACK_TAG: "dev"}}}
                eks_stub.add_response("describe_access_entry", answer, request)
            else:
                eks_stub.add_client_error(
                    "describe_access_entry", "ResourceNotFoundException", http_status_code=404, expected_params=request
                )
    eks_stub.add_client_error("describe_cluster_versions", service_error_code="AccessDeniedException")
    clients = PreflightClients(
        ec2=stubbed("ec2")[0],
        ssm=stubbed("ssm")[0],
        eks=eks,
        service_quotas=quota_answer(30.0),
        resource_groups=stubbed("resource-groups")[0],
        sts=sts,
        caller_arn=SESSION if confirmed else "",
    )
    t = target(
        groups=[],
        ami_ssm_parameter=None,
        ami_release="v20251103",
        admin_principal_arns=admins,
        cluster_name="c",
        stack="dev",
    )
    checks = run_preflight(t, clients, now=NOW)
    eks_stub.assert_no_pending_responses()
    sts_stub.assert_no_pending_responses()
    return [c for c in checks if c.key == NAME], checks


@pytest.mark.parametrize(
    ("caller", "principal"),
    [
        (SESSION, "arn:aws:iam::123456789012:role/PlatformAdmin"),
        (
            "arn:aws-us-gov:sts::123456789012:assumed-role/Deployer/ci@run-7",
            "arn:aws-us-gov:iam::123456789012:role/Deployer",
        ),
        ("arn:aws:iam::123456789012:user/ci", "arn:aws:iam::123456789012:user/ci"),
    ],
)
def test_the_principal_is_the_role_not_the_session(caller: str, principal: str) -> None:
    assert principal_arn(caller) == principal


def test_preflight_refuses_a_stack_that_lists_the_calling_role_with_the_fix() -> None:
    # The stack names the role with its path; the session ARN carries only the role's name. No cluster yet.
    (creator,), _ = day_two((CALLER_ROLE,), None)
    assert creator.level == FAIL
    assert "arn:aws:iam::123456789012:role/PlatformAdmin creates the cluster" in creator.value
    assert creator.fix.startswith(f"remove {CALLER_ROLE} from cluster.adminPrincipalArns")


@pytest.mark.parametrize(
    "admins",
    [
        (),
        ("arn:aws:iam::123456789012:role/PlatformAdminTwo",),
        ("arn:aws:iam::210987654321:role/PlatformAdmin",),  # same name, another account
        ("arn:aws:iam::123456789012:user/PlatformAdmin",),  # a user is not the role
    ],
)
def test_other_principals_pass(admins: tuple[str, ...]) -> None:
    assert check_creator(SESSION, admins, "cluster.adminPrincipalArns").level == PASS


@pytest.mark.parametrize(
    ("admins", "entries", "level", "says"),
    [
        # The CI deploy role or a platform admin, listed, on every day-2 run: its entry is there.
        ((CALLER_ROLE,), [CALLER_ROLE], PASS, "has an access entry (listed in"),
        # Listed but no entry yet (added to the list since): this update creates it.
        ((CALLER_ROLE,), ["arn:aws:iam::123456789012:role/Other"], PASS, "this update adds its entry"),
        # Not listed, with the creator's entry.
        ((), [CALLER_ROLE], PASS, "the creator's entry"),
        # Neither: the Kubernetes API will refuse it.
        ((), ["arn:aws:iam::123456789012:role/Other"], WARN, "has no access entry there"),
    ],
)
def test_an_existing_cluster_is_judged_by_its_access_entries(
    admins: tuple[str, ...], entries: list[str], level: str, says: str
) -> None:
    (creator,), _ = day_two(admins, entries)
    assert creator.level == level
    assert says in creator.value


def test_a_caller_the_clients_confirmed_is_not_asked_for_again() -> None:
    (asked,), _ = day_two((CALLER_ROLE,), None)
    (confirmed,), _ = day_two((CALLER_ROLE,), None, confirmed=True)
    assert confirmed == asked and confirmed.level == FAIL


def test_a_cluster_preflight_cannot_describe_is_a_fail_naming_the_action() -> None:
    (creator,), _ = day_two((CALLER_ROLE,), [], denied=True)
    assert creator.level == FAIL
    assert "cannot tell whether cluster c exists" in creator.value
    assert "eks:DescribeCluster" in creator.fix


def test_preflight_asks_aws_as_the_stacks_assumed_role(moto: None) -> None:
    iam = boto3.client("iam", region_name=REGION)
    trust = (
        '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}'
    )
    role = iam.create_role(RoleName="Deployer", AssumeRolePolicyDocument=trust)["Role"]["Arn"]
    chain = (AssumeRoleSettings(role_arn=role, session_name="ci"),)
    clients = make_clients(REGION, None, None, chain)
    caller = clients.sts.get_caller_identity()["Arn"]
    assert principal_arn(caller) == role
    # Listed as itself, it is the creator of a first deploy: the same identity Pulumi will create the cluster as.
    assert check_creator(caller, (role,), "cluster.adminPrincipalArns").level == FAIL


def test_the_stacks_cluster_reaches_the_preflight_target() -> None:
    assert target_from_settings(parse_settings(STACK)).cluster_name == "c"
