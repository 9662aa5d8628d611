"""Preflight: check a stack's capacity, zones, AMI, subnets, Kubernetes version and quotas against the AWS account."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from functools import partial

import boto3

from ultraserver.facts.aws import limits
from ultraserver.facts.capacity.capacity_blocks import require_aware
from ultraserver.facts.hardware import instances
from ultraserver.facts.pins import ami
from ultraserver.preflight.access_entries import identity_checks
from ultraserver.preflight.addons import check_addon_versions
from ultraserver.preflight.capacity import check_reservations
from ultraserver.preflight.clients import (
    ApiFailure,
    Client,
    PreflightAccessError,
    PreflightClients,
    call,
    call_all,
    clients_from_session,
)
from ultraserver.preflight.report import FAIL, PASS, WARN, check
from ultraserver.preflight.target import PreflightTarget
from ultraserver.problems import Problem

# The EKS UltraServer guide recommends this AL2023 NVIDIA AMI release or later for P6e-GB200 (facts/pins/ami.py).
MIN_AMI_RELEASE = ami.MIN_RELEASE


def ami_release_date(text: str) -> str | None:
    """The YYYYMMDD release date in an AMI release string ("1.35.6-20260714", "v20251103", an AMI name)."""
    return ami.release_date_in(text)


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


def check_zone_opt_in(target: PreflightTarget, ec2: Client) -> list[Problem]:
    """The zone of every GPU group exists and, when it is a Local Zone, is opted in."""
    zones = _zones(ec2, (g.availability_zone for g in target.groups))
    checks = []
    for name in sorted({g.availability_zone for g in target.groups}):
        zone = zones.get(name)
        label = f"zone {name} opted in"
        if zone is None:
            checks.append(
                check(
                    label,
                    FAIL,
                    f"{name} is not a zone of {target.region}",
                    "set the GPU subnets' zone to one the region offers",
                )
            )
        elif zone.get("ZoneType", "availability-zone") == "availability-zone":
            checks.append(check(label, PASS, "regional Availability Zone; no opt-in needed"))
        elif zone.get("OptInStatus") == "opted-in":
            checks.append(check(label, PASS, f"{zone.get('ZoneType')} in group {zone.get('GroupName')}, opted in"))
        else:
            group_name = zone.get("GroupName", name)
            checks.append(
                check(
                    label,
                    FAIL,
                    f"{zone.get('ZoneType')} {name} is {zone.get('OptInStatus', 'not opted in')}",
                    f"aws ec2 modify-availability-zone-group --region {target.region} --group-name {group_name} "
                    "--opt-in-status opted-in",
                )
            )
    return checks


def check_control_plane_zones(target: PreflightTarget, ec2: Client) -> list[Problem]:
    """Each zone of a new VPC's control-plane subnets is a regional zone the region has (the offline plan checks only
    the name's form: which zones exist differs by region and account)."""
    zones = _zones(ec2, target.control_plane_zones)
    checks = []
    for name in sorted(set(target.control_plane_zones)):
        zone, label = zones.get(name), f"zone {name} exists"
        if zone is None:
            listed = f"aws ec2 describe-availability-zones --region {target.region}"
            fix = f"set network.availabilityZones to zones `{listed}` lists"
            checks.append(
                check(label, FAIL, f"{name} is not a zone of {target.region} (DescribeAvailabilityZones)", fix)
            )
        elif zone.get("ZoneType", "availability-zone") != "availability-zone":
            fix = "use regional zones for the control plane (Local Zones cannot host it)"
            checks.append(check(label, FAIL, f"{name} is a {zone.get('ZoneType')}, not a regional zone", fix))
        else:
            checks.append(check(label, PASS, f"availability zone, {zone.get('State', 'available')}"))
    return checks


def check_zone_offerings(target: PreflightTarget, ec2: Client) -> list[Problem]:
    """Each group outside the toolkit's zone catalog (zoneNotInCatalog) is in a zone EC2 says offers its type."""
    unlisted = [g for g in target.groups if g.zone_not_in_catalog]
    if not unlisted:
        return []
    answer = call_all(
        ec2,
        "describe_instance_type_offerings",
        LocationType="availability-zone",
        Filters=[
            {"Name": "instance-type", "Values": sorted({g.instance_type for g in unlisted})},
            {"Name": "location", "Values": sorted({g.availability_zone for g in unlisted})},
        ],
    )
    offered = {(o["InstanceType"], o["Location"]) for o in answer.get("InstanceTypeOfferings", [])}
    checks = []
    for g in unlisted:
        label = f"{g.name}: {g.availability_zone} offers {g.instance_type}"
        if (g.instance_type, g.availability_zone) in offered:
            checks.append(check(label, PASS, "EC2 lists the offering (zoneNotInCatalog: true confirmed)"))
        else:
            checks.append(
                check(
                    label,
                    FAIL,
                    f"EC2 does not offer {g.instance_type} in {g.availability_zone} (DescribeInstanceTypeOfferings)",
                    f"set {g.settings_key}.availabilityZone to the capacity reservation's zone",
                )
            )
    return checks


def check_vcpus(target: PreflightTarget, ec2: Client) -> list[Problem]:
    """Each GPU instance type's vCPUs as EC2 reports them (DescribeInstanceTypes, VCpuInfo.DefaultVCpus) against the
    figure the whole-node CPU share rests on (facts/hardware/instances.VCPUS, read from a third-party copy): a
    different count makes the share fit a node twice or never, and Kueue's placement with it."""
    types = sorted({g.instance_type for g in target.groups if g.instance_type in instances.VCPUS})
    if not types:
        return []
    answer = call_all(ec2, "describe_instance_types", InstanceTypes=types)
    reported = {
        t["InstanceType"]: (t.get("VCpuInfo") or {}).get("DefaultVCpus") for t in answer.get("InstanceTypes", [])
    }
    checks = []
    for name in types:
        label, assumed = f"{name}: vCPUs", instances.VCPUS[name]
        if reported.get(name) == assumed:
            checks.append(check(label, PASS, f"EC2 reports {assumed}, the figure the whole-node CPU share rests on"))
            continue
        checks.append(
            check(
                label,
                FAIL,
                f"EC2 reports {reported.get(name, 'no such type')} (DescribeInstanceTypes in {target.region}); the "
                f"toolkit's whole-node CPU share rests on {assumed}",
                "do not deploy GPU jobs with this release: report it, and set VCPUS in "
                "ultraserver/facts/hardware/instances.py to EC2's figure (the share and Kueue's placement follow it)",
            )
        )
    return checks


def _release_parameter(image_parameter: str) -> str | None:
    """The sibling SSM parameter holding the release of an EKS AMI image_id parameter."""
    if image_parameter.endswith("/image_id"):
        return image_parameter[: -len("image_id")] + "release_version"
    return None


def check_ami(target: PreflightTarget, ssm: Client) -> list[Problem]:
    """The AMI SSM parameter resolves and the AMI release is at least MIN_AMI_RELEASE."""
    checks: list[Problem] = []
    release = target.ami_release
    source = "pinned release"
    if target.ami_ssm_parameter:
        try:
            image = call(ssm, "get_parameter", Name=target.ami_ssm_parameter)["Parameter"]["Value"]
        except ApiFailure as exc:
            if exc.denied:  # not a missing parameter: the caller may not read it
                return [check("AMI parameter", FAIL, f"cannot read {target.ami_ssm_parameter}: {exc}", exc.fix)]
            return [
                check(
                    "AMI parameter",
                    FAIL,
                    f"{target.ami_ssm_parameter} does not resolve in {target.region}: {exc}",
                    f"check Kubernetes version {target.kubernetes_version} and the region; EKS publishes "
                    "/aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/arm64/nvidia/recommended/image_id",
                )
            ]
        checks.append(check("AMI parameter", PASS, f"{target.ami_ssm_parameter} -> {image}"))
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
            check(
                "AMI release",
                WARN,
                f"cannot tell the AMI release (from {source}: {release!r})",
                f"pin an AMI release >= {MIN_AMI_RELEASE} so preflight can verify the NVIDIA 580 driver",
            )
        )
    elif date >= MIN_AMI_RELEASE:
        checks.append(check("AMI release", PASS, f"{release} (from {source}) >= {MIN_AMI_RELEASE}"))
    else:
        checks.append(
            check(
                "AMI release",
                FAIL,
                f"{release} (from {source}) is older than {MIN_AMI_RELEASE}",
                f"use AL2023 ARM64 NVIDIA AMI release {MIN_AMI_RELEASE} or later (the EKS UltraServer guide's minimum)",
            )
        )
    return checks


def check_subnets(target: PreflightTarget, ec2: Client) -> list[Problem]:
    """Each existing subnet exists, sits in its expected zone and has enough free IPv4 addresses."""
    subnet_ids = sorted(set(target.existing_subnets) | set(target.required_free_ips))
    found: dict[str, dict] = {}
    checks: list[Problem] = []
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
                check(
                    f"subnet {subnet_id}",
                    FAIL,
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
            check(
                f"subnet {subnet_id}",
                PASS if ok else FAIL,
                f"in {zone} (expected {want})",
                "" if ok else f"use a subnet in {want} for this role",
            )
        )
        need = target.required_free_ips.get(subnet_id)
        if need is not None:
            free = int(subnet.get("AvailableIpAddressCount", 0))
            enough = free >= need
            checks.append(
                check(
                    f"subnet {subnet_id} free IPs",
                    PASS if enough else FAIL,
                    f"{free} free IPv4 addresses, {need} needed for planned nodes and pods",
                    ""
                    if enough
                    else "use a larger subnet (or add a secondary CIDR), free addresses, or plan fewer nodes/pods",
                )
            )
    return checks


def check_kubernetes_version(target: PreflightTarget, eks: Client) -> list[Problem]:
    """The Kubernetes version is offered by EKS in the region, preferably in standard support."""
    version = target.kubernetes_version
    offered = call_all(eks, "describe_cluster_versions", clusterVersions=[version]).get("clusterVersions", [])
    match = next((v for v in offered if v.get("clusterVersion") == version), None)
    label = f"Kubernetes {version} offered"
    how = f"aws eks describe-cluster-versions --region {target.region}"
    if match is None or match.get("versionStatus") == "UNSUPPORTED":
        detail = f"EKS in {target.region} does not offer {version}"
        return [check(label, FAIL, detail, f"pick an offered version ({how})")]
    if match.get("versionStatus") == "EXTENDED_SUPPORT":
        return [
            check(
                label,
                WARN,
                f"{version} is in extended support (extra cost)",
                f"move to a standard-support version ({how})",
            )
        ]
    return [check(label, PASS, f"{version} in {match.get('versionStatus', 'standard support').lower()}")]


def check_node_group_quota(target: PreflightTarget, service_quotas: Client) -> list[Problem]:
    """The managed node groups the stack declares fit the per-cluster quota."""
    count, code = target.managed_node_group_count, limits.MANAGED_NODE_GROUP_QUOTA_CODE
    label = "managed node group quota"
    try:
        answer = call(service_quotas, "get_service_quota", ServiceCode="eks", QuotaCode=code)
        quota, source, known = int(answer["Quota"]["Value"]), f"Service Quotas {code}", True
    except ApiFailure as exc:
        quota, source, known = (
            limits.MANAGED_NODE_GROUPS_PER_CLUSTER.maximum,
            f"EKS default; Service Quotas did not answer: {exc.code}",
            False,
        )
    detail = f"{count} managed node groups, quota {quota} ({source})"
    increase = (
        f"aws service-quotas request-service-quota-increase --service-code eks --quota-code {code} "
        f"--desired-value {count}, or declare fewer managed node groups"
    )
    if count > quota:
        return [check(label, FAIL, detail, increase)]
    if not known:
        return [check(label, WARN, detail, "allow servicequotas:GetServiceQuota to verify the account's value")]
    return [check(label, PASS, detail)]


# ---------------------------------------------------------------- running every check


def _guarded(name: str, run: Callable[[], list[Problem]]) -> list[Problem]:
    """Run one check; an AWS call it could not make becomes a fail line instead of a traceback."""
    try:
        return run()
    except ApiFailure as exc:
        return [
            check(
                name,
                FAIL,
                str(exc),
                exc.fix,
            )
        ]


def run_preflight(
    target: PreflightTarget, clients: PreflightClients | boto3.Session, now: datetime | None = None
) -> list[Problem]:
    """Run every check against AWS; raises PreflightAccessError when AWS cannot be asked at all."""
    if isinstance(clients, boto3.Session):
        clients = clients_from_session(clients, target.region)
    when = require_aware(now, "run_preflight(now=...)") if now else datetime.now(timezone.utc)
    try:
        # Clients that confirmed the account (stack_clients) already know who they act as.
        caller = clients.caller_arn or call(clients.sts, "get_caller_identity")["Arn"]
    except ApiFailure as exc:
        raise PreflightAccessError(f"cannot confirm AWS identity: {exc}") from None
    checks = identity_checks(target, clients.eks, caller)
    for group in target.groups:
        checks += _guarded(
            f"{group.name}: reservations",
            partial(check_reservations, group, clients.ec2, clients.resource_groups, when, target.end_horizon_hours),
        )
    checks += _guarded("GPU zones opted in", lambda: check_zone_opt_in(target, clients.ec2))
    checks += _guarded("GPU zones offer the type", lambda: check_zone_offerings(target, clients.ec2))
    checks += _guarded("control-plane zones exist", lambda: check_control_plane_zones(target, clients.ec2))
    checks += _guarded("AMI", lambda: check_ami(target, clients.ssm))
    checks += _guarded("subnets", lambda: check_subnets(target, clients.ec2))
    version_name = f"Kubernetes {target.kubernetes_version} offered"
    checks += _guarded(version_name, lambda: check_kubernetes_version(target, clients.eks))
    checks += _guarded("managed node group quota", lambda: check_node_group_quota(target, clients.service_quotas))
    checks += _guarded("GPU instance vCPUs", lambda: check_vcpus(target, clients.ec2))
    if target.addon_versions:
        checks += _guarded("EKS add-on versions", lambda: check_addon_versions(target, clients.eks))
    return checks
