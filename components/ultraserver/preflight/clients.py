"""The AWS side of preflight: the boto3 clients, one `call` wrapper, and the errors it turns AWS failures into.

An access problem (no or expired credentials, unknown profile, unreachable endpoint) stops preflight as a whole
(PreflightAccessError); any other failed call becomes an ApiFailure that the check which made it reports.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import boto3
import botocore.exceptions as bex
import botocore.session
from botocore.config import Config
from botocore.credentials import ProcessProvider
from botocore.parsers import ResponseParserError

from ultraserver.config.aws_identity import account_problem
from ultraserver.config.settings import Settings
from ultraserver.facts.aws.permissions import iam_action

# Checks accept real, moto-backed or Stubber-wrapped clients of several services alike.
Client = Any

# Error codes that mean the credentials themselves are bad, not that one call is denied.
CREDENTIAL_ERROR_CODES = frozenset(
    {
        "ExpiredToken",
        "ExpiredTokenException",
        "RequestExpired",
        "InvalidClientTokenId",
        "UnrecognizedClientException",
        "AuthFailure",
        "SignatureDoesNotMatch",
        "InvalidAccessKeyId",
    }
)


@dataclass
class PreflightClients:
    """The boto3 clients preflight uses; tests may pass stubbed or moto-backed ones."""

    ec2: Client
    ssm: Client
    eks: Client
    service_quotas: Client
    resource_groups: Client
    sts: Client
    autoscaling: Client | None = None
    """Auto Scaling, for ``extend`` moving the scale-downs; None: not asked."""
    ec2_once: Client | None = None
    """EC2 without retries, for purchases (PurchaseCapacityBlockExtension has no idempotency token, and botocore
    retries a read timeout); None: use ``ec2``."""
    caller_arn: str = ""
    """Who the clients act as (GetCallerIdentity), once ``stack_clients`` confirmed the account; empty: not asked."""


class PreflightAccessError(Exception):
    """AWS cannot be asked at all (no/expired credentials, unknown profile, unreachable endpoint)."""


# Attempts per call, the first included (botocore's default in standard mode; botocore's ``max_attempts`` key counts
# retries only, so it was 2 here for the same 3 attempts).
MAX_ATTEMPTS = 3
# Error codes EC2 and the other services answer when they throttle the caller (a subset of botocore's
# retries/standard.py ThrottledRetryableChecker codes).
THROTTLING_CODES = frozenset(
    {"RequestLimitExceeded", "Throttling", "ThrottlingException", "TooManyRequestsException", "RequestThrottled"}
)

# Error codes of a call the caller's IAM policy does not allow (EC2 says UnauthorizedOperation, others AccessDenied...).
DENIED_MARKERS = ("AccessDenied", "Unauthorized")


class ApiFailure(Exception):
    """One AWS call failed for a reason other than access; the check that made it reports a fail.

    ``operation`` is the IAM action that allows the call (``facts.aws.permissions``), e.g.
    ec2:DescribeCapacityReservations, so a denied call names what to grant.
    """

    def __init__(self, operation: str, code: str, message: str) -> None:
        self.operation = operation
        self.code = code
        super().__init__(f"{operation} failed ({code}): {message}")

    @property
    def denied(self) -> bool:
        """The caller's IAM policy does not allow the call."""
        return any(marker in self.code for marker in DENIED_MARKERS)

    @property
    def fix(self) -> str:
        """How to get an answer from this call next time."""
        if self.denied:
            return f"grant {self.operation} to the caller's IAM policy (docs/permissions.md lists each command's)"
        if self.code in THROTTLING_CODES:
            return (
                f"AWS throttled {self.operation} after {MAX_ATTEMPTS} attempts (other tools share the account's "
                "request budget); rerun in a minute"
            )
        return f"{self.operation} gave no usable answer; check that the region/endpoint offers it and retry"


def one_line(text: str) -> str:
    """Collapse whitespace so a message fits on one line."""
    return " ".join(str(text).split())


def call(client: Client, operation: str, **kwargs: Any) -> dict:
    """Call one AWS API; raise PreflightAccessError for access problems and ApiFailure for the rest."""
    return _translated(client, operation, lambda: getattr(client, operation)(**kwargs))


def call_all(client: Client, operation: str, **kwargs: Any) -> dict:
    """Call an API that pages its answer and return every page merged (errors as for ``call``).

    EC2 pages DescribeCapacityBlocks, DescribeCapacityBlockStatus, DescribeCapacityBlockExtensionOfferings and
    more (botocore's ec2 paginators-1.json): an answer may end with a NextToken even when ids are given, and a
    single call would drop what follows it.
    """
    return _translated(
        client, operation, lambda: client.get_paginator(operation).paginate(**kwargs).build_full_result()
    )


def _translated(client: Client, operation: str, run: Callable[[], dict]) -> dict:
    service = client.meta.service_model.service_name
    label = iam_action(service, client.meta.method_to_api_mapping.get(operation, operation))
    try:
        return run()
    except (bex.NoCredentialsError, bex.PartialCredentialsError, bex.CredentialRetrievalError) as exc:
        raise PreflightAccessError(
            f"no usable AWS credentials ({one_line(str(exc))}); set AWS_PROFILE / --profile or run `aws sso login`"
        ) from None
    except (bex.TokenRetrievalError, bex.SSOTokenLoadError, bex.UnauthorizedSSOTokenError) as exc:
        raise PreflightAccessError(
            f"AWS SSO session expired or missing ({one_line(str(exc))}); run `aws sso login`"
        ) from None
    except bex.ConfigParseError as exc:
        raise unreadable_aws_file(exc) from None
    except (bex.ConnectionError, bex.HTTPClientError) as exc:
        raise PreflightAccessError(f"cannot reach the AWS endpoint for {service}: {one_line(str(exc))}") from None
    except bex.ClientError as exc:
        error = exc.response.get("Error", {})
        code = str(error.get("Code", "Unknown"))
        message = one_line(error.get("Message", ""))
        if code in CREDENTIAL_ERROR_CODES:
            raise PreflightAccessError(
                f"AWS rejected the credentials ({code}: {message}); refresh them and retry"
            ) from None
        if "<html" in message.lower():
            # A web server (or an emulator without this API) answered, not an AWS service.
            message = "the endpoint answered with an HTML page, not an AWS response"
        raise ApiFailure(label, code, message[:200]) from None
    except ResponseParserError:
        # e.g. an emulator answering an unmodelled call with an HTML error page.
        raise ApiFailure(label, "ResponseParserError", "the endpoint's response is not an AWS response") from None


def stack_clients(
    settings: Settings,
    region: str | None = None,
    profile: str | None = None,
    endpoint_url: str | None = None,
    *,
    confirm: bool = False,
) -> PreflightClients:
    """The clients of every command that asks AWS about a stack, signed as Pulumi's AWS provider signs for it: the
    stack's aws:profile (``profile``, --profile, overrides it), then each role of its aws:assumeRoles in turn.

    When the stack lists aws:allowedAccountIds, or with ``confirm``, the caller is asked first (GetCallerIdentity)
    and an account outside the list stops the command (PreflightAccessError) before any other call.
    """
    clients = make_clients(
        region or settings.region, profile or settings.aws_profile or None, endpoint_url, settings.aws_assume_roles
    )
    if confirm or settings.aws_allowed_account_ids:
        try:
            clients.caller_arn = str(call(clients.sts, "get_caller_identity")["Arn"])
        except ApiFailure as exc:
            raise PreflightAccessError(f"cannot confirm the AWS account: {exc}") from None
        refused = account_problem(settings, clients.caller_arn)
        if refused is not None:
            raise PreflightAccessError(f"{refused} (no other AWS call was made)")
    return clients


def make_clients(
    region: str, profile: str | None = None, endpoint_url: str | None = None, assume_roles: Sequence[Any] = ()
) -> PreflightClients:
    """Build the clients from a profile/region, all pointed at endpoint_url when one is given; with ``assume_roles``
    (the stack's aws:assumeRoles) as the role the AWS provider ends up as, each assumed in turn from the last."""
    try:
        core = botocore.session.Session()
        session = boto3.Session(botocore_session=core, profile_name=profile, region_name=region)
        _credential_process_deadline(core)
        for index, role in enumerate(assume_roles):
            session = _assumed(session, role, f"aws:assumeRoles[{index}]", region, endpoint_url)
        return clients_from_session(session, region, endpoint_url)
    except bex.ProfileNotFound as exc:
        raise PreflightAccessError(f"{one_line(str(exc))}; pick one from `aws configure list-profiles`") from None
    except bex.ConfigParseError as exc:
        raise unreadable_aws_file(exc) from None


CREDENTIAL_PROCESS_SECONDS = 60
"""How long a profile's credential_process may take to answer. botocore waits for it without a limit, and one that
waits for a login (an SSO session to renew, a prompt no one sees in CI) would hang the command with no output."""


def _credential_process_deadline(core: botocore.session.Session) -> None:
    """botocore's credential_process provider, with a deadline (its ``popen`` argument is for this)."""
    resolver = core.get_component("credential_provider")
    profile = core.get_config_variable("profile") or "default"

    class Deadline(subprocess.Popen):
        def communicate(self, input: Any = None, timeout: float | None = None) -> Any:  # noqa: A002 - Popen's name
            try:
                return super().communicate(input, timeout or CREDENTIAL_PROCESS_SECONDS)
            except subprocess.TimeoutExpired:
                self.kill()
                super().communicate()
                command = " ".join(map(str, self.args)) if isinstance(self.args, list) else str(self.args)
                raise PreflightAccessError(
                    f"the credential_process of AWS profile {profile!r} (`{command}`) gave no credentials within "
                    f"{CREDENTIAL_PROCESS_SECONDS} s (one waiting for a login never does); fix: run it once by hand "
                    "(or `aws sso login`) and rerun, or pass --profile with credentials that need no prompt"
                ) from None

    resolver.providers = [
        ProcessProvider(profile, lambda: core.full_config, popen=Deadline) if p.METHOD == ProcessProvider.METHOD else p
        for p in resolver.providers
    ]


def unreadable_aws_file(exc: bex.ConfigParseError) -> PreflightAccessError:
    """An AWS config or credentials file botocore cannot parse (a line outside any [section], a broken header)."""
    path = exc.kwargs.get("path", "")
    return PreflightAccessError(
        f"the AWS config or credentials file {path} cannot be parsed (every setting belongs under a [section] "
        "line; botocore reads it as an INI file); fix it, or point AWS_CONFIG_FILE / AWS_SHARED_CREDENTIALS_FILE "
        "at a valid file"
    )


def _assumed(session: boto3.Session, role: Any, key: str, region: str, endpoint_url: str | None) -> boto3.Session:
    """A session of ``role`` (role_arn, session_name, external_id), assumed with ``session``'s credentials."""
    factory: Any = session.client
    request = {"RoleArn": role.role_arn, "RoleSessionName": role.session_name or "ultraserver"}
    if role.external_id:
        request["ExternalId"] = role.external_id
    try:
        answer = call(factory("sts", region_name=region, endpoint_url=endpoint_url), "assume_role", **request)
    except ApiFailure as exc:
        raise PreflightAccessError(
            f"cannot assume {role.role_arn} ({key}) as Pulumi's AWS provider would: {exc}"
        ) from None
    credentials = answer["Credentials"]
    return boto3.Session(
        aws_access_key_id=credentials["AccessKeyId"],
        aws_secret_access_key=credentials["SecretAccessKey"],
        aws_session_token=credentials["SessionToken"],
        region_name=region,
    )


def clients_from_session(session: boto3.Session, region: str, endpoint_url: str | None = None) -> PreflightClients:
    """Build the clients from an existing boto3 session, all pointed at endpoint_url when one is given."""
    # Fail fast on a dead endpoint instead of retrying for minutes, but ride out throttling: botocore's standard
    # mode retries throttling and transient errors with jittered backoff, MAX_ATTEMPTS attempts in all.
    config = Config(
        connect_timeout=5, read_timeout=30, retries={"total_max_attempts": MAX_ATTEMPTS, "mode": "standard"}
    )

    # The service name is a run-time string, which the per-service overloads of typed stubs cannot match.
    factory: Any = session.client

    def client(name: str, settings: Config = config) -> Client:
        return factory(name, region_name=region, endpoint_url=endpoint_url, config=settings)

    return PreflightClients(
        ec2=client("ec2"),
        ssm=client("ssm"),
        eks=client("eks"),
        service_quotas=client("service-quotas"),
        resource_groups=client("resource-groups"),
        sts=client("sts"),
        autoscaling=client("autoscaling"),
        # A purchase is sent once: a retried one whose first request went through could buy twice (not verified).
        ec2_once=client("ec2", config.merge(Config(retries={"total_max_attempts": 1, "mode": "standard"}))),
    )
