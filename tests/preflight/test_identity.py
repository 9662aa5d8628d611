"""The cluster creator (issue 23 §2): pulumi-eks makes the caller cluster admin, so it must not be listed again."""

from __future__ import annotations

import pytest
from helpers.preflight import NOW, quota_answer, stubbed, target
from ultraserver.preflight.checks import run_preflight
from ultraserver.preflight.clients import PreflightClients
from ultraserver.preflight.identity import NAME, check_creator, principal_arn
from ultraserver.preflight.report import FAIL, PASS

SESSION = "arn:aws:sts::123456789012:assumed-role/PlatformAdmin/botocore-session-1732520000"


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
    sts, sts_stub = stubbed("sts")
    sts_stub.add_response("get_caller_identity", {"Account": "123456789012", "Arn": SESSION, "UserId": "AROA:s"})
    eks, eks_stub = stubbed("eks")
    eks_stub.add_client_error("describe_cluster_versions", service_error_code="AccessDeniedException")
    clients = PreflightClients(
        ec2=stubbed("ec2")[0],
        ssm=stubbed("ssm")[0],
        eks=eks,
        service_quotas=quota_answer(30.0),
        resource_groups=stubbed("resource-groups")[0],
        sts=sts,
    )
    # The stack names the role with its path; the session ARN carries only the role's name.
    listed = "arn:aws:iam::123456789012:role/platform/PlatformAdmin"
    t = target(groups=[], ami_ssm_parameter=None, ami_release="v20251103", admin_principal_arns=(listed,))
    (creator,) = [c for c in run_preflight(t, clients, now=NOW) if c.key == NAME]
    assert creator.level == FAIL
    assert "arn:aws:iam::123456789012:role/PlatformAdmin creates the cluster" in creator.value
    assert creator.fix.startswith(f"remove {listed} from cluster.adminPrincipalArns")
    sts_stub.assert_no_pending_responses()


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
