"""Preflight: check a stack's capacity, zones, AMI, subnets and quotas against the real AWS account."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import MISSING, dataclass, fields
from datetime import datetime, timedelta, timezone
from functools import partial
from typing import Any, Literal

import boto3
import botocore.exceptions as bex
from botocore.config import Config
from botocore.parsers import ResponseParserError

from ultraserver.config.settings import Settings
from ultraserver.config.subnets import ips_needed
from ultraserver.config.views import gpu_ip_needs
from ultraserver.facts import ami, instances, limits
from ultraserver.problems import ConfigError

Status = Literal["pass", "warn", "fail"]
# Checks accept real, moto-backed or Stubber-wrapped clients of several services alike.
Client = Any

GB200_INSTANCE_TYPE = instances.GB200_INSTANCE_TYPE
# EKS requires this AL2023 NVIDIA AMI release or later (NVIDIA driver 580) for P6e-GB200.
MIN_AMI_RELEASE = ami.MIN_RELEASE
# Service Quotas code for "Managed node groups per cluster" and its EKS default.
MNG_QUOTA_CODE = limits.MANAGED_NODE_GROUP_QUOTA_CODE
MNG_DEFAULT_QUOTA = limits.MANAGED_NODE_GROUPS_PER_CLUSTER.maximum
USABLE_STATES = ("active", "scheduled")
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
STATE_FIXES: dict[str, str] = {
    "payment-pending": "wait until the Capacity Block payment completes, then rerun preflight",
    "payment-failed": "fix the account's payment method and purchase a new Capacity Block",
    "expired": "purchase a new Capacity Block and put its reservation id in the stack",
    "cancelled": "purchase a new Capacity Block and put its reservation id in the stack",
}


@dataclass
class PreflightGroup:
    """One GPU node group as preflight sees it."""

    name: str  # node group name, for messages
    ultraserver_type: str  # "u-p6e-gb200x36" | "u-p6e-gb200x72"
    capacity_reservation_ids: list[str]  # one per UltraServer; empty in grouped mode
    capacity_reservation_resource_group_arn: str | None
    ultraserver_count: int
    instances_per_ultraserver: int  # 9 or 18
    availability_zone: str  # zone of the GPU subnets, e.g. us-east-1-dfw-2a
    managed: bool  # managed node group (counts against the MNG quota)


@dataclass
class PreflightTarget:
    """Everything preflight checks, built from a stack's settings."""

    region: str
    kubernetes_version: str  # e.g. "1.33"
    ami_ssm_parameter: str | None  # SSM name to resolve; None when an image id is pinned
    ami_release: str | None  # pinned release, if any
    groups: list[PreflightGroup]
    existing_subnets: dict[str, str]  # subnet id -> expected zone ("" = any regional zone)
    required_free_ips: dict[str, int]  # subnet id -> IPs needed for planned nodes + pods
    managed_node_group_count: int  # MNGs the stack declares (system + GPU)
    end_horizon_hours: int = 48


@dataclass
class Check:
    """One preflight result line: what was checked, the outcome, and how to fix it."""

    name: str
    status: Status
    detail: str
    fix: str = ""


@dataclass
class PreflightClients:
    """The boto3 clients preflight uses; tests may pass stubbed or moto-backed ones."""

    ec2: Client
    ssm: Client
    eks: Client
    service_quotas: Client
    resource_groups: Client
    sts: Client


class PreflightAccessError(Exception):
    """AWS cannot be asked at all (no/expired credentials, unknown profile, unreachable endpoint)."""


class ApiFailure(Exception):
    """One AWS call failed for a reason other than access; the check that made it reports a fail."""

    def __init__(self, operation: str, code: str, message: str) -> None:
        self.operation = operation
        self.code = code
        super().__init__(f"{operation} failed ({code}): {message}")

    @property
    def fix(self) -> str:
        """How to get an answer from this call next time."""
        if "AccessDenied" in self.code or "Unauthorized" in self.code:
            return f"grant {self.operation} to the caller's IAM policy"
        return f"{self.operation} gave no usable answer; check that the region/endpoint offers it and retry"


def _one_line(text: str) -> str:
    """Collapse whitespace so a message fits on one line."""
    return " ".join(str(text).split())


def call(client: Client, operation: str, **kwargs: Any) -> dict:
    """Call one AWS API; raise PreflightAccessError for access problems and ApiFailure for the rest."""
    service = client.meta.service_model.service_name
    label = f"{service}:{client.meta.method_to_api_mapping.get(operation, operation)}"
    try:
        result: dict = getattr(client, operation)(**kwargs)
        return result
    except (bex.NoCredentialsError, bex.PartialCredentialsError, bex.CredentialRetrievalError) as exc:
        raise PreflightAccessError(
            f"no usable AWS credentials ({_one_line(str(exc))}); set AWS_PROFILE / --profile or run `aws sso login`"
        ) from None
    except (bex.TokenRetrievalError, bex.SSOTokenLoadError, bex.UnauthorizedSSOTokenError) as exc:
        raise PreflightAccessError(
            f"AWS SSO session expired or missing ({_one_line(str(exc))}); run `aws sso login`"
        ) from None
    except (bex.ConnectionError, bex.HTTPClientError) as exc:
        raise PreflightAccessError(f"cannot reach the AWS endpoint for {service}: {_one_line(str(exc))}") from None
    except bex.ClientError as exc:
        error = exc.response.get("Error", {})
        code = str(error.get("Code", "Unknown"))
        message = _one_line(error.get("Message", ""))
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


def make_clients(region: str, profile: str | None = None, endpoint_url: str | None = None) -> PreflightClients:
    """Build the clients from a profile/region, all pointed at endpoint_url when one is given."""
    try:
        session = boto3.Session(profile_name=profile, region_name=region)
    except bex.ProfileNotFound as exc:
        raise PreflightAccessError(f"{_one_line(str(exc))}; pick one from `aws configure list-profiles`") from None
    return clients_from_session(session, region, endpoint_url)


def clients_from_session(session: boto3.Session, region: str, endpoint_url: str | None = None) -> PreflightClients:
    """Build the clients from an existing boto3 session, all pointed at endpoint_url when one is given."""
    # Fail fast on a dead endpoint instead of retrying for minutes.
    config = Config(connect_timeout=5, read_timeout=30, retries={"max_attempts": 2, "mode": "standard"})

    # The service name is a run-time string, which the per-service overloads of typed stubs cannot match.
    factory: Any = session.client

    def client(name: str) -> Client:
        return factory(name, region_name=region, endpoint_url=endpoint_url, config=config)

    return PreflightClients(
        ec2=client("ec2"),
        ssm=client("ssm"),
        eks=client("eks"),
        service_quotas=client("service-quotas"),
        resource_groups=client("resource-groups"),
        sts=client("sts"),
    )


def ami_release_date(text: str) -> str | None:
    """The YYYYMMDD release date in an AMI release string ("1.33.5-20251103", "v20251103", an AMI name)."""
    return ami.release_date_in(text)


def _worst(statuses: Iterable[Status]) -> Status:
    """The most severe status among statuses (pass when empty)."""
    ranked = set(statuses)
    if "fail" in ranked:
        return "fail"
    return "warn" if "warn" in ranked else "pass"


def _fmt_time(value: datetime) -> str:
    """A timestamp as a short UTC string."""
    return value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


# ---------------------------------------------------------------- capacity reservations


def _group_reservation_ids(group: PreflightGroup, resource_groups: Client) -> list[str]:
    """The reservation ids a group targets: listed directly, or the members of its resource group."""
    if group.capacity_reservation_ids:
        return list(group.capacity_reservation_ids)
    if not group.capacity_reservation_resource_group_arn:
        return []
    ids: list[str] = []
    token: str | None = None
    while True:
        kwargs: dict[str, Any] = {"Group": group.capacity_reservation_resource_group_arn}
        if token:
            kwargs["NextToken"] = token
        page = call(resource_groups, "list_group_resources", **kwargs)
        for ident in page.get("ResourceIdentifiers", []):
            if ident.get("ResourceType") == "AWS::EC2::CapacityReservation":
                ids.append(ident["ResourceArn"].rsplit("/", 1)[-1])
        token = page.get("NextToken")
        if not token:
            return ids


def _describe_reservations(ids: Sequence[str], ec2: Client) -> tuple[dict[str, dict], list[str]]:
    """Describe each reservation id; return the found ones by id and the ids AWS does not know."""
    found: dict[str, dict] = {}
    missing: list[str] = []
    for cr_id in ids:
        # One call per id: a batch call fails as a whole when any one id is unknown.
        try:
            page = call(ec2, "describe_capacity_reservations", CapacityReservationIds=[cr_id])
        except ApiFailure as exc:
            if exc.code.startswith("InvalidCapacityReservationId"):
                missing.append(cr_id)
                continue
            raise
        reservations = page.get("CapacityReservations", [])
        if reservations:
            found[cr_id] = reservations[0]
        else:
            missing.append(cr_id)
    return found, missing


def _aggregate(name: str, items: list[tuple[str, Status, str]], fix: str) -> Check:
    """One check from per-reservation (id, status, text) results; fix is kept only when not all pass."""
    status = _worst(s for _, s, _ in items)
    detail = "; ".join(f"{cr_id}: {text}" for cr_id, _, text in items)
    return Check(name, status, detail, fix if status != "pass" else "")


def check_reservations(
    group: PreflightGroup, ec2: Client, resource_groups: Client, now: datetime, horizon_hours: int
) -> list[Check]:
    """Checks for one GPU group's reservations: existence, state, type, count, zone, window and block."""
    prefix = f"{group.name}:"
    if not group.capacity_reservation_ids and not group.capacity_reservation_resource_group_arn:
        return [
            Check(
                f"{prefix} reservations exist",
                "fail",
                "the group names no capacity reservation or reservation resource group",
                "set the group's capacity reservation ids (one per UltraServer) or its resource group ARN",
            )
        ]
    try:
        ids = _group_reservation_ids(group, resource_groups)
    except ApiFailure as exc:
        return [
            Check(
                f"{prefix} reservations exist",
                "fail",
                f"cannot list resource group {group.capacity_reservation_resource_group_arn}: {exc}",
                "check the resource group ARN and that the caller may call resource-groups:ListGroupResources",
            )
        ]
    found, missing = _describe_reservations(ids, ec2)
    checks: list[Check] = []
    if missing or not ids:
        arn = group.capacity_reservation_resource_group_arn
        where = ", ".join(missing) if missing else f"resource group {arn} is empty"
        checks.append(
            Check(
                f"{prefix} reservations exist",
                "fail",
                f"not found in this account/region: {where}",
                "purchase the Capacity Block (aws ec2 purchase-capacity-block) or correct the reservation id / region",
            )
        )
    else:
        checks.append(Check(f"{prefix} reservations exist", "pass", f"{len(found)} found: {', '.join(found)}"))
    if not found:
        return checks

    states: list[tuple[str, Status, str]] = []
    for cr_id, cr in found.items():
        state = cr.get("State", "unknown")
        states.append((cr_id, "pass" if state in USABLE_STATES else "fail", state))
    bad_states = sorted({text for _, s, text in states if s == "fail"})
    other = "use a reservation that is scheduled or active"
    state_fix = "; ".join(f"{s}: {STATE_FIXES.get(s, other)}" for s in bad_states)
    checks.append(_aggregate(f"{prefix} reservation state", states, state_fix))

    types: list[tuple[str, Status, str]] = [
        (cr_id, "pass" if cr.get("InstanceType") == GB200_INSTANCE_TYPE else "fail", str(cr.get("InstanceType")))
        for cr_id, cr in found.items()
    ]
    checks.append(
        _aggregate(
            f"{prefix} instance type",
            types,
            f"use a Capacity Block for {GB200_INSTANCE_TYPE}; this group only launches that type",
        )
    )

    expected = group.ultraserver_count * group.instances_per_ultraserver
    total = sum(int(cr.get("TotalInstanceCount", 0)) for cr in found.values())
    counts = ", ".join(f"{cr_id}={cr.get('TotalInstanceCount')}" for cr_id, cr in found.items())
    count_ok = total == expected
    checks.append(
        Check(
            f"{prefix} instance count",
            "pass" if count_ok else "fail",
            f"reserved {total} ({counts}); group needs {group.ultraserver_count} x "
            f"{group.instances_per_ultraserver} = {expected}",
            ""
            if count_ok
            else f"set the group's UltraServer count/type to match the reservations ({total} instances), "
            "or purchase a block of the planned size",
        )
    )

    zones: list[tuple[str, Status, str]] = []
    for cr_id, cr in found.items():
        zone = str(cr.get("AvailabilityZone"))
        zones.append((cr_id, "pass" if zone == group.availability_zone else "fail", zone))
    checks.append(
        _aggregate(
            f"{prefix} reservation zone",
            zones,
            f"GPU subnets are in {group.availability_zone}; put the group's subnets in the reservation's zone "
            "or use a reservation there",
        )
    )

    checks.append(_window_check(prefix, found, now, horizon_hours))
    checks.extend(_block_checks(prefix, group, found, ec2))
    return checks


def _window_check(prefix: str, found: dict[str, dict], now: datetime, horizon_hours: int) -> Check:
    """Warn when a reservation starts later or ends within the horizon; fail when it has ended."""
    items: list[tuple[str, Status, str]] = []
    for cr_id, cr in found.items():
        start, end = cr.get("StartDate"), cr.get("EndDate")
        if end is not None and end <= now:
            items.append((cr_id, "fail", f"ended {_fmt_time(end)}"))
        elif start is not None and start > now:
            items.append((cr_id, "warn", f"starts {_fmt_time(start)}; nodes wait until then"))
        elif end is not None and end - now <= timedelta(hours=horizon_hours):
            items.append((cr_id, "warn", f"ends {_fmt_time(end)}, within {horizon_hours}h"))
        else:
            items.append((cr_id, "pass", f"running until {_fmt_time(end) if end else 'no end date'}"))
    status = _worst(s for _, s, _ in items)
    fixes = {
        "fail": "purchase a new Capacity Block; an ended reservation launches nothing",
        "warn": "expect the group to wait for the start, or extend the block "
        "(aws ec2 purchase-capacity-block-extension)",
    }
    return _aggregate(f"{prefix} reservation window", items, fixes.get(status, ""))


def _block_checks(prefix: str, group: PreflightGroup, found: dict[str, dict], ec2: Client) -> list[Check]:
    """UltraServer type and interconnect status of the Capacity Blocks behind the reservations."""
    block_of = {cr_id: cr.get("CapacityBlockId") for cr_id, cr in found.items()}
    block_ids = sorted({b for b in block_of.values() if b})
    type_name, link_name = f"{prefix} UltraServer type", f"{prefix} interconnect"
    blocks: dict[str, dict] = {}
    if block_ids:
        try:
            answer = call(ec2, "describe_capacity_blocks", CapacityBlockIds=block_ids)
        except ApiFailure as exc:
            return [Check(type_name, "fail", str(exc), exc.fix)]
        blocks = {b["CapacityBlockId"]: b for b in answer.get("CapacityBlocks", [])}

    type_items: list[tuple[str, Status, str]] = []
    for cr_id, block_id in block_of.items():
        if not block_id:
            kind = found[cr_id].get("ReservationType")
            type_items.append((cr_id, "fail", f"not part of a Capacity Block (ReservationType={kind})"))
            continue
        ultraserver_type = blocks.get(block_id, {}).get("UltraserverType")
        ok = ultraserver_type == group.ultraserver_type
        type_items.append((cr_id, "pass" if ok else "fail", f"{block_id} UltraserverType={ultraserver_type}"))
    checks = [
        _aggregate(
            type_name,
            type_items,
            f"the group is configured for {group.ultraserver_type}; purchase an UltraServer Capacity Block of that "
            "type (--ultraserver-type) or change the group's UltraServer type",
        )
    ]
    if block_ids:
        checks.append(_interconnect_check(link_name, block_ids, ec2))
    return checks


def _interconnect_check(name: str, block_ids: list[str], ec2: Client) -> Check:
    """Report each block's interconnect: ok passes, impaired fails, anything else (or no answer) warns."""
    try:
        answer = call(ec2, "describe_capacity_block_status", CapacityBlockIds=block_ids)
    except ApiFailure as exc:
        return Check(name, "warn", f"interconnect status not reported: {exc}", exc.fix)
    statuses = {s["CapacityBlockId"]: s for s in answer.get("CapacityBlockStatuses", [])}
    items: list[tuple[str, Status, str]] = []
    for block_id in block_ids:
        interconnect = statuses.get(block_id, {}).get("InterconnectStatus", "unreported")
        status: Status = "pass" if interconnect == "ok" else "fail" if interconnect == "impaired" else "warn"
        items.append((block_id, status, f"interconnect {interconnect}"))
    fix = (
        "impaired: contact AWS Support before deploying; insufficient-data/unreported: normal before the block "
        "starts, rerun preflight once it is active"
    )
    return _aggregate(name, items, fix)


# ---------------------------------------------------------------- zones, AMI, subnets, EKS


def _zones(ec2: Client, names: Iterable[str]) -> dict[str, dict]:
    """Zone records (regional, Local and Wavelength) by name for the given zone names."""
    wanted = sorted(set(names))
    if not wanted:
        return {}
    page = call(
        ec2,
        "describe_availability_zones",
        AllAvailabilityZones=True,
        Filters=[{"Name": "zone-name", "Values": wanted}],
    )
    return {z["ZoneName"]: z for z in page.get("AvailabilityZones", [])}


def check_zone_opt_in(target: PreflightTarget, ec2: Client) -> list[Check]:
    """The zone of every GPU group exists and, when it is a Local Zone, is opted in."""
    zones = _zones(ec2, (g.availability_zone for g in target.groups))
    checks = []
    for name in sorted({g.availability_zone for g in target.groups}):
        zone = zones.get(name)
        label = f"zone {name} opted in"
        if zone is None:
            checks.append(
                Check(
                    label,
                    "fail",
                    f"{name} is not a zone of {target.region}",
                    "set the GPU subnets' zone to one the region offers",
                )
            )
        elif zone.get("ZoneType", "availability-zone") == "availability-zone":
            checks.append(Check(label, "pass", "regional Availability Zone; no opt-in needed"))
        elif zone.get("OptInStatus") == "opted-in":
            checks.append(Check(label, "pass", f"{zone.get('ZoneType')} in group {zone.get('GroupName')}, opted in"))
        else:
            group_name = zone.get("GroupName", name)
            checks.append(
                Check(
                    label,
                    "fail",
                    f"{zone.get('ZoneType')} {name} is {zone.get('OptInStatus', 'not opted in')}",
                    f"aws ec2 modify-availability-zone-group --region {target.region} --group-name {group_name} "
                    "--opt-in-status opted-in",
                )
            )
    return checks


def _release_parameter(image_parameter: str) -> str | None:
    """The sibling SSM parameter holding the release of an EKS AMI image_id parameter."""
    if image_parameter.endswith("/image_id"):
        return image_parameter[: -len("image_id")] + "release_version"
    return None


def check_ami(target: PreflightTarget, ssm: Client) -> list[Check]:
    """The AMI SSM parameter resolves and the AMI release is at least MIN_AMI_RELEASE."""
    checks: list[Check] = []
    release = target.ami_release
    source = "pinned release"
    if target.ami_ssm_parameter:
        try:
            image = call(ssm, "get_parameter", Name=target.ami_ssm_parameter)["Parameter"]["Value"]
        except ApiFailure as exc:
            return [
                Check(
                    "AMI parameter",
                    "fail",
                    f"{target.ami_ssm_parameter} does not resolve in {target.region}: {exc}",
                    f"check Kubernetes version {target.kubernetes_version} and the region; EKS publishes "
                    "/aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/arm64/nvidia/recommended/image_id",
                )
            ]
        checks.append(Check("AMI parameter", "pass", f"{target.ami_ssm_parameter} -> {image}"))
        sibling = _release_parameter(target.ami_ssm_parameter)
        if release is None and sibling:
            source = sibling
            try:
                release = call(ssm, "get_parameter", Name=sibling)["Parameter"]["Value"]
            except ApiFailure:
                release = None
    date = ami_release_date(release) if release else None
    if date is None:
        checks.append(
            Check(
                "AMI release",
                "warn",
                f"cannot tell the AMI release (from {source}: {release!r})",
                f"pin an AMI release >= {MIN_AMI_RELEASE} so preflight can verify the NVIDIA 580 driver",
            )
        )
    elif date >= MIN_AMI_RELEASE:
        checks.append(Check("AMI release", "pass", f"{release} (from {source}) >= {MIN_AMI_RELEASE}"))
    else:
        checks.append(
            Check(
                "AMI release",
                "fail",
                f"{release} (from {source}) is older than {MIN_AMI_RELEASE}",
                f"use AL2023 ARM64 NVIDIA AMI release {MIN_AMI_RELEASE} or later (driver 580, required for P6e-GB200)",
            )
        )
    return checks


def check_subnets(target: PreflightTarget, ec2: Client) -> list[Check]:
    """Each existing subnet exists, sits in its expected zone and has enough free IPv4 addresses."""
    subnet_ids = sorted(set(target.existing_subnets) | set(target.required_free_ips))
    found: dict[str, dict] = {}
    checks: list[Check] = []
    for subnet_id in subnet_ids:
        try:
            subnets = call(ec2, "describe_subnets", SubnetIds=[subnet_id]).get("Subnets", [])
        except ApiFailure as exc:
            if not exc.code.startswith("InvalidSubnetID"):
                raise
            subnets = []
        if subnets:
            found[subnet_id] = subnets[0]
        else:
            checks.append(
                Check(
                    f"subnet {subnet_id}",
                    "fail",
                    f"not found in {target.region}",
                    "correct the subnet id in the stack or let the stack create its VPC",
                )
            )
    zones = _zones(ec2, (s["AvailabilityZone"] for s in found.values()))
    zone_types = {name: z.get("ZoneType", "availability-zone") for name, z in zones.items()}
    for subnet_id, subnet in found.items():
        zone = subnet["AvailabilityZone"]
        expected = target.existing_subnets.get(subnet_id, "")
        if expected:
            ok, want = zone == expected, expected
        else:
            ok, want = zone_types.get(zone, "availability-zone") == "availability-zone", "a regional zone"
        checks.append(
            Check(
                f"subnet {subnet_id}",
                "pass" if ok else "fail",
                f"in {zone} (expected {want})",
                "" if ok else f"use a subnet in {want} for this role",
            )
        )
        need = target.required_free_ips.get(subnet_id)
        if need is not None:
            free = int(subnet.get("AvailableIpAddressCount", 0))
            enough = free >= need
            checks.append(
                Check(
                    f"subnet {subnet_id} free IPs",
                    "pass" if enough else "fail",
                    f"{free} free IPv4 addresses, {need} needed for planned nodes and pods",
                    ""
                    if enough
                    else "use a larger subnet (or add a secondary CIDR), free addresses, or plan fewer nodes/pods",
                )
            )
    return checks


def check_kubernetes_version(target: PreflightTarget, eks: Client) -> list[Check]:
    """The Kubernetes version is offered by EKS in the region, preferably in standard support."""
    version = target.kubernetes_version
    offered = call(eks, "describe_cluster_versions", clusterVersions=[version]).get("clusterVersions", [])
    match = next((v for v in offered if v.get("clusterVersion") == version), None)
    label = f"Kubernetes {version} offered"
    how = f"aws eks describe-cluster-versions --region {target.region}"
    if match is None or match.get("versionStatus") == "UNSUPPORTED":
        detail = f"EKS in {target.region} does not offer {version}"
        return [Check(label, "fail", detail, f"pick an offered version ({how})")]
    if match.get("versionStatus") == "EXTENDED_SUPPORT":
        return [
            Check(
                label,
                "warn",
                f"{version} is in extended support (extra cost)",
                f"move to a standard-support version ({how})",
            )
        ]
    return [Check(label, "pass", f"{version} in {match.get('versionStatus', 'standard support').lower()}")]


def check_node_group_quota(target: PreflightTarget, service_quotas: Client) -> list[Check]:
    """The managed node groups the stack declares fit the per-cluster quota."""
    count = target.managed_node_group_count
    label = "managed node group quota"
    try:
        quota = int(
            call(service_quotas, "get_service_quota", ServiceCode="eks", QuotaCode=MNG_QUOTA_CODE)["Quota"]["Value"]
        )
        source = f"Service Quotas {MNG_QUOTA_CODE}"
        known = True
    except ApiFailure as exc:
        quota, source, known = MNG_DEFAULT_QUOTA, f"EKS default; Service Quotas did not answer: {exc.code}", False
    detail = f"{count} managed node groups, quota {quota} ({source})"
    increase = (
        f"aws service-quotas request-service-quota-increase --service-code eks --quota-code {MNG_QUOTA_CODE} "
        f"--desired-value {count}, or declare fewer managed node groups"
    )
    if count > quota:
        return [Check(label, "fail", detail, increase)]
    if not known:
        return [Check(label, "warn", detail, "allow servicequotas:GetServiceQuota to verify the account's value")]
    return [Check(label, "pass", detail)]


# ---------------------------------------------------------------- running and reporting


def _guarded(name: str, check: Callable[[], list[Check]]) -> list[Check]:
    """Run one check; an AWS call it could not make becomes a fail line instead of a traceback."""
    try:
        return check()
    except ApiFailure as exc:
        return [
            Check(
                name,
                "fail",
                str(exc),
                exc.fix,
            )
        ]


def run_preflight(
    target: PreflightTarget, clients: PreflightClients | boto3.Session, now: datetime | None = None
) -> list[Check]:
    """Run every check against AWS; raises PreflightAccessError when AWS cannot be asked at all."""
    if isinstance(clients, boto3.Session):
        clients = clients_from_session(clients, target.region)
    when = now or datetime.now(timezone.utc)
    try:
        call(clients.sts, "get_caller_identity")
    except ApiFailure as exc:
        raise PreflightAccessError(f"cannot confirm AWS identity: {exc}") from None
    checks: list[Check] = []
    for group in target.groups:
        checks += _guarded(
            f"{group.name}: reservations",
            partial(check_reservations, group, clients.ec2, clients.resource_groups, when, target.end_horizon_hours),
        )
    checks += _guarded("GPU zones opted in", lambda: check_zone_opt_in(target, clients.ec2))
    checks += _guarded("AMI", lambda: check_ami(target, clients.ssm))
    checks += _guarded("subnets", lambda: check_subnets(target, clients.ec2))
    version_name = f"Kubernetes {target.kubernetes_version} offered"
    checks += _guarded(version_name, lambda: check_kubernetes_version(target, clients.eks))
    checks += _guarded("managed node group quota", lambda: check_node_group_quota(target, clients.service_quotas))
    return checks


def format_checks(checks: Sequence[Check]) -> str:
    """A plain-text table of checks, each non-pass line followed by its fix, then a summary line."""
    name_width = max([len("CHECK"), *(len(c.name) for c in checks)])
    lines = [f"{'STATUS':<6}  {'CHECK':<{name_width}}  DETAIL"]
    for c in checks:
        lines.append(f"{c.status.upper():<6}  {c.name:<{name_width}}  {c.detail}")
        if c.fix and c.status != "pass":
            lines.append(f"{'':<6}  {'':<{name_width}}  fix: {c.fix}")
    counts = {s: sum(1 for c in checks if c.status == s) for s in ("pass", "warn", "fail")}
    lines.append(f"{counts['pass']} passed, {counts['warn']} warnings, {counts['fail']} failed")
    return "\n".join(lines)


def exit_code(checks: Sequence[Check]) -> int:
    """1 when any check failed, else 0."""
    return 1 if any(c.status == "fail" for c in checks) else 0


def _from_fields(cls: type, data: Any, where: str) -> dict[str, Any]:
    """Check a JSON object's keys against a dataclass's fields; returns the object for construction."""
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: expected a JSON object, got {type(data).__name__}; write it as {{...}}")
    names = {f.name for f in fields(cls)}
    required = {f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING}
    problems = [
        f"{where}.{key}: unknown field; allowed: {', '.join(sorted(names))}" for key in sorted(set(data) - names)
    ]
    problems += [f"{where}.{key}: missing; add it" for key in sorted(required - set(data))]
    if problems:
        raise ConfigError(problems)
    return data


def target_from_dict(data: Any) -> PreflightTarget:
    """Build a PreflightTarget from its JSON form (field names as in the dataclasses)."""
    values = dict(_from_fields(PreflightTarget, data, "target"))
    groups = values.get("groups")
    if not isinstance(groups, list):
        raise ConfigError(f"target.groups: expected a list of groups, got {groups!r}; write it as [...]")
    values["groups"] = [
        PreflightGroup(**_from_fields(PreflightGroup, g, f"target.groups[{i}]")) for i, g in enumerate(groups)
    ]
    return PreflightTarget(**values)


def target_from_settings(settings: Settings) -> PreflightTarget:
    """What to check for a stack: its reservations, zones, AMI, existing subnets and node-group count."""

    release = next((g.ami_release for g in settings.gpu_node_groups if g.ami_release), None)
    pinned_image = any(g.ami_id for g in settings.gpu_node_groups)
    version = settings.cluster.kubernetes_version
    parameter = (
        None
        if pinned_image
        else (ami.pinned_ssm_parameter_name(version, release) if release else ami.ssm_parameter_name(version))
    )
    groups = [
        PreflightGroup(
            name=g.name,
            ultraserver_type=g.ultraserver_type,
            capacity_reservation_ids=list(g.capacity_reservation_ids),
            capacity_reservation_resource_group_arn=g.capacity_reservation_resource_group_arn or None,
            ultraserver_count=g.ultraservers,
            instances_per_ultraserver=g.instances_per_ultraserver,
            availability_zone=g.availability_zone,
            managed=g.mode == "managed",
        )
        for g in settings.gpu_node_groups
    ]
    net = settings.network
    subnets: dict[str, str] = {s: "" for s in (*net.private_subnet_ids, *net.public_subnet_ids)}
    needs: dict[str, int] = {}
    if net.private_subnet_ids:
        system = ips_needed(settings.system_node_group.max_size, net.pods_per_node, 1)
        needs.update({s: -(-system // len(net.private_subnet_ids)) for s in net.private_subnet_ids})
    zone_needs = gpu_ip_needs(settings) if net.existing else {}
    for zone, ids in net.gpu_subnet_ids.items():
        subnets.update({s: zone for s in ids})
        needs.update({s: -(-zone_needs.get(zone, 0) // len(ids)) for s in ids})
    managed = 1 + sum(g.node_groups for g in settings.gpu_node_groups if g.mode == "managed")
    return PreflightTarget(settings.region, version, parameter, release, groups, subnets, needs, managed)


def main(argv: Sequence[str] | None = None) -> int:
    """Run preflight for a target JSON file; 0 all pass, 1 a check failed, 2 AWS or the input unusable."""
    parser = argparse.ArgumentParser(prog="python -m ultraserver.preflight", description=__doc__)
    parser.add_argument("--target", required=True, help="PreflightTarget as a JSON file")
    parser.add_argument("--region", help="AWS region (default: the target's region)")
    parser.add_argument("--profile", help="AWS profile name")
    parser.add_argument("--endpoint-url", help="send every AWS call here (e.g. a local emulator)")
    args = parser.parse_args(argv)
    try:
        with open(args.target, encoding="utf-8") as handle:
            target = target_from_dict(json.load(handle))
        if args.region:
            target.region = args.region
        checks = run_preflight(target, make_clients(target.region, args.profile, args.endpoint_url))
    except (OSError, json.JSONDecodeError) as exc:
        print(f"preflight: cannot read target file {args.target}: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except (ConfigError, PreflightAccessError) as exc:
        print(f"preflight: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    print(format_checks(checks))
    return exit_code(checks)


if __name__ == "__main__":
    sys.exit(main())
