"""Who the stack's AWS calls run as: ``aws:profile`` and ``aws:assumeRoles``, and in which accounts they may act:
``aws:allowedAccountIds``; the AWS provider's own keys.

The AWS provider signs every call with them, and EKS admits to the Kubernetes API only principals with an access
entry. The kubeconfig of the toolkit's Kubernetes providers runs ``aws eks get-token`` as the same principal
(``--profile``, ``--role``, as pulumi-eks's ``getKubeconfig`` writes them), and ``preflight`` asks AWS as it.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated

from pydantic import ConfigDict, Field, StrictStr

from ultraserver.config.fields import Model, pattern
from ultraserver.facts.aws import aws_ids, limits
from ultraserver.problems import WARNING, Described, Problem

ASSUME_ROLES_KEY = "aws:assumeRoles"
PROFILE_KEY = "aws:profile"
ALLOWED_ACCOUNTS_KEY = "aws:allowedAccountIds"
"""The AWS provider's own list of the accounts it may act in: pulumi_aws 7.51.1 reads the config key
``allowedAccountIds`` (pulumi_aws/config/vars.py:33-34; ``Provider(allowed_account_ids=...)``, provider.py:24). That
the provider refuses to run in another account, as the Terraform AWS provider it bridges does ("AWS account ID not
allowed"), is UNVERIFIED here; ``extend`` refuses itself."""


class AssumeRoleSettings(Model):
    """One role of the AWS provider's ``aws:assumeRoles`` chain; the provider validates the keys not read here."""

    model_config = ConfigDict(extra="ignore")

    role_arn: Annotated[str, pattern(aws_ids.ROLE_ARN, "an IAM role ARN arn:aws:iam::<account>:role/<name>")] = Field(
        description="Role the AWS provider assumes."
    )
    external_id: Annotated[
        str,
        pattern(
            limits.EXTERNAL_ID_PATTERN,
            "2 to 1224 of letters, digits and _+=,.@:/- (STS AssumeRole ExternalId)",
            empty=True,
            fix="use the external id the role's trust policy names (sts:ExternalId), or remove the key",
        ),
    ] = Field("", description="External id the AWS provider passes to AssumeRole.")
    session_name: Annotated[
        str,
        pattern(
            limits.ROLE_SESSION_NAME_PATTERN,
            "2 to 64 of letters, digits and _+=,.@- (STS AssumeRole RoleSessionName)",
            empty=True,
            fix="shorten it and drop spaces and other characters, e.g. ultraserver-deploy",
        ),
    ] = Field("", description="Session name of the assumed role.")


class AwsIdentitySettings(Model):
    """The AWS provider's keys that say who the stack's AWS calls run as, and in which accounts."""

    aws_profile: StrictStr = Field(
        "",
        alias=PROFILE_KEY,
        description="AWS profile of the AWS provider; the kubeconfig, preflight, status and extend use it too.",
    )
    aws_assume_roles: tuple[AssumeRoleSettings, ...] = Field(
        (), alias=ASSUME_ROLES_KEY, description="Roles the AWS provider assumes; the kubeconfig assumes the last."
    )
    aws_allowed_account_ids: tuple[Annotated[str, pattern(aws_ids.ACCOUNT, "a 12-digit AWS account id")], ...] = Field(
        (),
        alias=ALLOWED_ACCOUNTS_KEY,
        description="Accounts the AWS provider may act in; preflight, status and extend refuse others.",
    )

    @property
    def deployer_role_arn(self) -> str:
        """The role the AWS provider ends up as (the last of aws:assumeRoles), or empty."""
        return self.aws_assume_roles[-1].role_arn if self.aws_assume_roles else ""


def kubeconfig_identity(s: AwsIdentitySettings, today: date) -> list[Problem]:
    """A role chain or an external id that ``aws eks get-token`` cannot reproduce: it assumes one role, by ARN."""
    roles = s.aws_assume_roles
    found = []
    if len(roles) > 1:
        found.append(
            Problem(
                ASSUME_ROLES_KEY,
                [r.role_arn for r in roles],
                "one role for the Kubernetes providers' kubeconfig: it runs `aws eks get-token --role "
                f"{roles[-1].role_arn}` with the base credentials, which must be allowed to assume that role directly",
                "let the base credentials assume the last role, or put the chain in an AWS profile (role_arn with "
                "source_profile) and set aws:profile instead",
                WARNING,
            )
        )
    if any(r.external_id for r in roles):
        found.append(
            Problem(
                f"{ASSUME_ROLES_KEY}[].externalId",
                "(set)",
                "a role without an external id for the kubeconfig: `aws eks get-token` passes none",
                "drop the external id from the role's trust policy for this principal, or use an AWS profile "
                "(role_arn, external_id, source_profile) and set aws:profile",
                WARNING,
            )
        )
    return found


def caller_account(caller_arn: str) -> str:
    """The account of a GetCallerIdentity ARN (arn:<partition>:<service>::<account>:<resource>)."""
    account = aws_ids.arn_account(caller_arn)
    return caller_arn if account is None else account


def account_problem(s: AwsIdentitySettings, caller_arn: str) -> Problem | None:
    """The caller's account when the stack's ``aws:allowedAccountIds`` does not list it (None: listed, or no list)."""
    account = caller_account(caller_arn)
    allowed = s.aws_allowed_account_ids
    if not allowed or account in allowed:
        return None
    return Problem(
        ALLOWED_ACCOUNTS_KEY,
        Described(f"the caller {caller_arn} in account {account}"),
        f"credentials of account {', '.join(allowed)}",
        "sign in to that account (--profile, or the stack's aws:profile and aws:assumeRoles), or correct "
        f"{ALLOWED_ACCOUNTS_KEY} if the stack moved",
    )
