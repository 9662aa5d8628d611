"""Who the stack's AWS calls run as: ``aws:profile`` and ``aws:assumeRoles``, and in which accounts they may act:
``aws:allowedAccountIds``; the AWS provider's own keys.

The AWS provider signs every call with them, and EKS admits to the Kubernetes API only principals with an access
entry. The kubeconfig of the toolkit's Kubernetes providers runs ``aws eks get-token`` as the same principal
(``--profile``, ``--role``, as pulumi-eks's ``getKubeconfig`` writes them), and ``preflight`` asks AWS as it.
"""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

from pydantic import ConfigDict, Field, StrictStr

from ultraserver.config.fields import Model, pattern
from ultraserver.facts.aws import aws_ids, limits
from ultraserver.problems import WARNING, Described, Problem

ASSUME_ROLES_KEY = "aws:assumeRoles"
PROFILE_KEY = "aws:profile"
ALLOWED_ACCOUNTS_KEY = "aws:allowedAccountIds"
WEB_IDENTITY_KEY = "aws:assumeRoleWithWebIdentity"
CONFIG_FILES_KEY = "aws:sharedConfigFiles"
CREDENTIALS_FILES_KEY = "aws:sharedCredentialsFiles"
STATIC_KEYS = ("aws:accessKey", "aws:secretKey", "aws:token")
IDENTITY_KEYS: tuple[str, ...] = (PROFILE_KEY, ASSUME_ROLES_KEY, ALLOWED_ACCOUNTS_KEY, WEB_IDENTITY_KEY)
IDENTITY_KEYS += (CONFIG_FILES_KEY, CREDENTIALS_FILES_KEY, *STATIC_KEYS)
"""The AWS provider's credential keys read here (pulumi_aws 7.51.1 pulumi_aws/config/vars.py: accessKey 25-30,
assumeRoleWithWebIdentity 37-38, secretKey 165-170, sharedConfigFiles 173-177, sharedCredentialsFiles 180-184,
token 230-235)."""
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


class WebIdentitySettings(Model):
    """The AWS provider's ``aws:assumeRoleWithWebIdentity``, every key of it (pulumi_aws 7.51.1 config/outputs.py
    AssumeRoleWithWebIdentity); duration, policy and policyArns only narrow the session, not the principal EKS
    sees, so the kubeconfig needs none of them."""

    role_arn: Annotated[str, pattern(aws_ids.ROLE_ARN, "an IAM role ARN arn:aws:iam::<account>:role/<name>")] = Field(
        "", description="Role assumed with the web identity token."
    )
    session_name: StrictStr = Field("", description="Session name of the assumed role.")
    web_identity_token_file: StrictStr = Field("", description="File holding the OIDC token.")
    # The token itself is a secret (often `secure:`): only whether it is set is read.
    web_identity_token: Any = Field(None, description="The OIDC token itself; the kubeconfig cannot carry it.")
    duration: StrictStr = Field("", description="Session duration (the provider's; not carried).")
    policy: StrictStr = Field("", description="Session policy JSON (the provider's; not carried).")
    policy_arns: tuple[StrictStr, ...] = Field((), description="Session policy ARNs (the provider's; not carried).")


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

    aws_web_identity: WebIdentitySettings | None = Field(
        None, alias=WEB_IDENTITY_KEY, description="Web identity role of the AWS provider; the kubeconfig uses it too."
    )
    aws_shared_config_files: tuple[StrictStr, ...] = Field(
        (), alias=CONFIG_FILES_KEY, description="AWS config files of the AWS provider; the kubeconfig uses one."
    )
    aws_shared_credentials_files: tuple[StrictStr, ...] = Field(
        (),
        alias=CREDENTIALS_FILES_KEY,
        description="AWS credentials files of the AWS provider; the kubeconfig uses one.",
    )
    # Secrets: only whether they are set is read, and they never reach a kubeconfig.
    aws_access_key: Any = Field(None, alias=STATIC_KEYS[0], description="Static key: warned, never in the kubeconfig.")
    aws_secret_key: Any = Field(None, alias=STATIC_KEYS[1], description="Static key: warned, never in the kubeconfig.")
    aws_token: Any = Field(None, alias=STATIC_KEYS[2], description="Session token: warned, never in the kubeconfig.")

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
    found += kubeconfig_credentials(s)
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


# The environment variables the AWS CLI reads these settings from (botocore 1.44.5, which the AWS CLI builds on):
# AWS_CONFIG_FILE and AWS_SHARED_CREDENTIALS_FILE (botocore/configprovider.py:62 and 66-71), each one path;
# AWS_ROLE_ARN, AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_SESSION_NAME (botocore/credentials.py:1893-1897,
# AssumeRoleWithWebIdentityProvider._CONFIG_TO_ENV_VAR), which it ignores once a profile is named, as
# `--profile` does (credentials.py:95 disable_env_vars, and _get_env_config).
_FILE_ENV = {CONFIG_FILES_KEY: "AWS_CONFIG_FILE", CREDENTIALS_FILES_KEY: "AWS_SHARED_CREDENTIALS_FILE"}


def kubeconfig_env(s: AwsIdentitySettings) -> dict[str, str]:
    """The environment of the kubeconfig's `aws eks get-token` that the CLI reads the stack's other credential
    settings from: its one config and credentials file, its web identity role (without a profile). Never a secret."""
    env = {}
    for key, files in (
        (CONFIG_FILES_KEY, s.aws_shared_config_files),
        (CREDENTIALS_FILES_KEY, s.aws_shared_credentials_files),
    ):
        if len(files) == 1:
            env[_FILE_ENV[key]] = files[0]
    web = s.aws_web_identity
    if web is not None and not s.aws_profile:
        # What the stack leaves out, the provider and the CLI alike take from the environment they inherit.
        named = {"AWS_ROLE_ARN": web.role_arn, "AWS_WEB_IDENTITY_TOKEN_FILE": web.web_identity_token_file}
        env |= {name: value for name, value in named.items() if value}
        if web.session_name:
            env["AWS_ROLE_SESSION_NAME"] = web.session_name
    return env


def kubeconfig_credentials(s: AwsIdentitySettings) -> list[Problem]:
    """Credential settings the kubeconfig's `aws eks get-token` cannot take: static keys (a kubeconfig is no place
    for a secret), an inline web identity token, web identity with a profile, several shared files."""
    found = [
        Problem(
            key,
            Described("(set)"),
            "credentials the kubeconfig can name: static keys are never written into it, so `aws eks get-token` "
            "runs as whatever credentials its environment holds",
            "put the keys in a profile of the shared credentials file and set aws:profile instead",
            WARNING,
        )
        for key, value in zip(STATIC_KEYS, (s.aws_access_key, s.aws_secret_key, s.aws_token), strict=True)
        if value not in (None, "")
    ]
    found += [
        Problem(
            key,
            list(files),
            f"one file for the kubeconfig: the AWS CLI reads one path from {_FILE_ENV[key]}",
            "merge them into one file, or name a profile of one file with aws:profile",
            WARNING,
        )
        for key, files in (
            (CONFIG_FILES_KEY, s.aws_shared_config_files),
            (CREDENTIALS_FILES_KEY, s.aws_shared_credentials_files),
        )
        if len(files) > 1
    ]
    return found + _web_identity(s)


def _web_identity(s: AwsIdentitySettings) -> list[Problem]:
    web = s.aws_web_identity
    if web is None:
        return []
    if s.aws_profile:
        return [
            Problem(
                WEB_IDENTITY_KEY,
                Described(f"web identity together with aws:profile {s.aws_profile!r}"),
                "one of them for the kubeconfig: with --profile the AWS CLI ignores AWS_ROLE_ARN and "
                "AWS_WEB_IDENTITY_TOKEN_FILE, so `aws eks get-token` runs as the profile",
                "put role_arn and web_identity_token_file in that profile and drop aws:assumeRoleWithWebIdentity, or "
                "drop aws:profile",
                WARNING,
            )
        ]
    if web.web_identity_token not in (None, "") and not web.web_identity_token_file:
        return [
            Problem(
                f"{WEB_IDENTITY_KEY}.webIdentityToken",
                Described("(set)"),
                "a token file for the kubeconfig: the AWS CLI reads the token only from the file "
                "AWS_WEB_IDENTITY_TOKEN_FILE names, and a token is never written into a kubeconfig",
                "write the token to a file and set webIdentityTokenFile instead",
                WARNING,
            )
        ]
    return []


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
