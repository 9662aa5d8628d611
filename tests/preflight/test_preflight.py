"""Preflight checks against moto (SSM, subnets, zones, quotas) and Stubber (capacity blocks, Local Zones, EKS)."""

from __future__ import annotations

import dataclasses
import socket
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws
from ultraserver.preflight.checks import (
    MIN_AMI_RELEASE,
    Check,
    PreflightAccessError,
    PreflightClients,
    PreflightGroup,
    PreflightTarget,
    ami_release_date,
    check_ami,
    check_kubernetes_version,
    check_node_group_quota,
    check_reservations,
    check_subnets,
    check_zone_opt_in,
    exit_code,
    format_checks,
    make_clients,
    run_preflight,
    target_from_dict,
)
from ultraserver.problems import ConfigError

REGION = "us-east-1"
LOCAL_ZONE = "us-east-1-dfw-2a"
NOW = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)
IMAGE_PARAM = "/ultraserver-test/eks/1.33/nvidia/recommended/image_id"
RELEASE_PARAM = "/ultraserver-test/eks/1.33/nvidia/recommended/release_version"


@pytest.fixture(autouse=True)
def fake_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never let a test reach a real account."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)


@pytest.fixture
def moto() -> Iterator[None]:
    """An in-process moto account."""
    with mock_aws():
        yield


def stubbed(service: str) -> tuple[Any, Stubber]:
    """A client whose calls are answered by an activated Stubber (validated against the service model)."""
    factory: Any = boto3.client  # a run-time service name matches no typed-stub overload
    client = factory(service, region_name=REGION)
    stub = Stubber(client)
    stub.activate()
    return client, stub


def group(**changes: Any) -> PreflightGroup:
    """A valid one-UltraServer u-p6e-gb200x72 group, with changes applied."""
    base = PreflightGroup(
        name="gpu",
        ultraserver_type="u-p6e-gb200x72",
        capacity_reservation_ids=["cr-0aaaaaaaaaaaaaaa1"],
        capacity_reservation_resource_group_arn=None,
        ultraserver_count=1,
        instances_per_ultraserver=18,
        availability_zone=LOCAL_ZONE,
        managed=True,
    )
    return dataclasses.replace(base, **changes)


def target(**changes: Any) -> PreflightTarget:
    """A valid target with one GPU group, with changes applied."""
    base = PreflightTarget(
        region=REGION,
        kubernetes_version="1.33",
        ami_ssm_parameter=IMAGE_PARAM,
        ami_release=None,
        groups=[group()],
        existing_subnets={},
        required_free_ips={},
        managed_node_group_count=2,
    )
    return dataclasses.replace(base, **changes)


def reservation(cr_id: str = "cr-0aaaaaaaaaaaaaaa1", **changes: Any) -> dict[str, Any]:
    """A CapacityReservation as DescribeCapacityReservations returns it for an active UltraServer block."""
    cr: dict[str, Any] = {
        "CapacityReservationId": cr_id,
        "InstanceType": "p6e-gb200.36xlarge",
        "AvailabilityZone": LOCAL_ZONE,
        "TotalInstanceCount": 18,
        "AvailableInstanceCount": 18,
        "State": "active",
        "StartDate": NOW - timedelta(days=1),
        "EndDate": NOW + timedelta(days=7),
        "ReservationType": "capacity-block",
        "CapacityBlockId": "cb-0bbbbbbbbbbbbbbb1",
    }
    cr.update(changes)
    return {k: v for k, v in cr.items() if v is not None}


def queue_reservations(
    stub: Stubber,
    reservations: list[dict[str, Any]],
    ultraserver_type: str = "u-p6e-gb200x72",
    interconnect: str = "ok",
) -> None:
    """Queue the EC2 answers check_reservations asks for: each reservation, then its blocks and their status."""
    for cr in reservations:
        stub.add_response(
            "describe_capacity_reservations",
            {"CapacityReservations": [cr]},
            {"CapacityReservationIds": [cr["CapacityReservationId"]]},
        )
    blocks = sorted({cr["CapacityBlockId"] for cr in reservations if "CapacityBlockId" in cr})
    if not blocks:
        return
    stub.add_response(
        "describe_capacity_blocks",
        {
            "CapacityBlocks": [
                {
                    "CapacityBlockId": b,
                    "UltraserverType": ultraserver_type,
                    "AvailabilityZone": LOCAL_ZONE,
                    "CapacityReservationIds": [cr["CapacityReservationId"] for cr in reservations],
                    "State": "active",
                }
                for b in blocks
            ]
        },
        {"CapacityBlockIds": blocks},
    )
    stub.add_response(
        "describe_capacity_block_status",
        {
            "CapacityBlockStatuses": [
                {"CapacityBlockId": b, "InterconnectStatus": interconnect, "TotalCapacity": 18} for b in blocks
            ]
        },
        {"CapacityBlockIds": blocks},
    )


def reservation_checks(
    reservations: list[dict[str, Any]], the_group: PreflightGroup | None = None, **queue: Any
) -> dict[str, Check]:
    """Run check_reservations against stubbed answers; results keyed by the part after 'gpu: '."""
    ec2, stub = stubbed("ec2")
    rg, _ = stubbed("resource-groups")
    queue_reservations(stub, reservations, **queue)
    checks = check_reservations(the_group or group(), ec2, rg, NOW, 48)
    stub.assert_no_pending_responses()
    return {c.name.split(": ", 1)[1]: c for c in checks}


# ---------------------------------------------------------------- capacity reservations


def test_reservation_all_pass() -> None:
    checks = reservation_checks([reservation()])
    assert set(checks) == {
        "reservations exist",
        "reservation state",
        "instance type",
        "instance count",
        "reservation zone",
        "reservation window",
        "UltraServer type",
        "interconnect",
    }
    assert {c.status for c in checks.values()} == {"pass"}
    assert all(c.fix == "" for c in checks.values())


def test_reservation_missing_fails() -> None:
    ec2, stub = stubbed("ec2")
    rg, _ = stubbed("resource-groups")
    stub.add_client_error(
        "describe_capacity_reservations",
        service_error_code="InvalidCapacityReservationId.NotFound",
        expected_params={"CapacityReservationIds": ["cr-0aaaaaaaaaaaaaaa1"]},
    )
    checks = check_reservations(group(), ec2, rg, NOW, 48)
    assert [(c.name, c.status) for c in checks] == [("gpu: reservations exist", "fail")]
    assert "cr-0aaaaaaaaaaaaaaa1" in checks[0].detail
    assert "purchase-capacity-block" in checks[0].fix


def test_group_without_any_reservation_fails() -> None:
    ec2, _ = stubbed("ec2")
    rg, _ = stubbed("resource-groups")
    checks = check_reservations(group(capacity_reservation_ids=[]), ec2, rg, NOW, 48)
    assert [(c.name, c.status) for c in checks] == [("gpu: reservations exist", "fail")]


@pytest.mark.parametrize("state", ["active", "scheduled"])
def test_usable_states_pass(state: str) -> None:
    assert reservation_checks([reservation(State=state)])["reservation state"].status == "pass"


@pytest.mark.parametrize("state", ["payment-pending", "payment-failed", "expired", "cancelled", "pending"])
def test_unusable_states_fail(state: str) -> None:
    check = reservation_checks([reservation(State=state)])["reservation state"]
    assert check.status == "fail"
    assert state in check.detail and state in check.fix


def test_wrong_instance_type_fails() -> None:
    check = reservation_checks([reservation(InstanceType="p5.48xlarge")])["instance type"]
    assert check.status == "fail"
    assert "p5.48xlarge" in check.detail


def test_instance_count_mismatch_fails() -> None:
    # An x36 reservation (9 instances) under a group planned as one x72 UltraServer.
    check = reservation_checks([reservation(TotalInstanceCount=9)])["instance count"]
    assert check.status == "fail"
    assert "reserved 9" in check.detail and "= 18" in check.detail


def test_instance_count_sums_over_ultraservers() -> None:
    two = group(
        ultraserver_type="u-p6e-gb200x36",
        instances_per_ultraserver=9,
        ultraserver_count=2,
        capacity_reservation_ids=["cr-0aaaaaaaaaaaaaaa1", "cr-0aaaaaaaaaaaaaaa2"],
    )
    crs = [
        reservation("cr-0aaaaaaaaaaaaaaa1", TotalInstanceCount=9),
        reservation("cr-0aaaaaaaaaaaaaaa2", TotalInstanceCount=9),
    ]
    checks = reservation_checks(crs, two, ultraserver_type="u-p6e-gb200x36")
    assert checks["instance count"].status == "pass"
    assert checks["UltraServer type"].status == "pass"


def test_ultraserver_type_mismatch_fails() -> None:
    check = reservation_checks([reservation()], ultraserver_type="u-p6e-gb200x36")["UltraServer type"]
    assert check.status == "fail"
    assert "u-p6e-gb200x36" in check.detail and "u-p6e-gb200x72" in check.fix


def test_reservation_outside_capacity_block_fails() -> None:
    crs = [reservation(ReservationType="default", CapacityBlockId=None)]
    checks = reservation_checks(crs)
    assert checks["UltraServer type"].status == "fail"
    assert "not part of a Capacity Block" in checks["UltraServer type"].detail
    assert "interconnect" not in checks


def test_reservation_zone_mismatch_fails() -> None:
    check = reservation_checks([reservation(AvailabilityZone="us-east-1a")])["reservation zone"]
    assert check.status == "fail"
    assert "us-east-1a" in check.detail and LOCAL_ZONE in check.fix


def test_future_start_warns() -> None:
    later = reservation(State="scheduled", StartDate=NOW + timedelta(days=2))
    check = reservation_checks([later])["reservation window"]
    assert check.status == "warn"
    assert "starts 2026-03-04" in check.detail


def test_end_within_horizon_warns() -> None:
    check = reservation_checks([reservation(EndDate=NOW + timedelta(hours=47))])["reservation window"]
    assert check.status == "warn"
    assert "within 48h" in check.detail


def test_end_beyond_horizon_passes() -> None:
    check = reservation_checks([reservation(EndDate=NOW + timedelta(hours=49))])["reservation window"]
    assert check.status == "pass"


def test_ended_reservation_fails() -> None:
    check = reservation_checks([reservation(EndDate=NOW - timedelta(hours=1))])["reservation window"]
    assert check.status == "fail"


@pytest.mark.parametrize(
    ("interconnect", "status"), [("ok", "pass"), ("insufficient-data", "warn"), ("impaired", "fail")]
)
def test_interconnect_status(interconnect: str, status: str) -> None:
    check = reservation_checks([reservation()], interconnect=interconnect)["interconnect"]
    assert check.status == status
    assert interconnect in check.detail


GROUP_ARN = "arn:aws:resource-groups:us-east-1:123456789012:group/gb200-cb"


def test_resource_group_members_are_checked() -> None:
    ec2, stub = stubbed("ec2")
    rg, rg_stub = stubbed("resource-groups")
    rg_stub.add_response(
        "list_group_resources",
        {
            "ResourceIdentifiers": [
                {
                    "ResourceArn": "arn:aws:ec2:us-east-1:123456789012:capacity-reservation/cr-0aaaaaaaaaaaaaaa1",
                    "ResourceType": "AWS::EC2::CapacityReservation",
                }
            ]
        },
        {"Group": GROUP_ARN},
    )
    queue_reservations(stub, [reservation()])
    grouped = group(capacity_reservation_ids=[], capacity_reservation_resource_group_arn=GROUP_ARN)
    checks = check_reservations(grouped, ec2, rg, NOW, 48)
    stub.assert_no_pending_responses()
    assert {c.status for c in checks} == {"pass"}
    assert "cr-0aaaaaaaaaaaaaaa1" in checks[0].detail


def test_empty_resource_group_fails() -> None:
    ec2, _ = stubbed("ec2")
    rg, rg_stub = stubbed("resource-groups")
    rg_stub.add_response("list_group_resources", {"ResourceIdentifiers": []}, {"Group": GROUP_ARN})
    grouped = group(capacity_reservation_ids=[], capacity_reservation_resource_group_arn=GROUP_ARN)
    checks = check_reservations(grouped, ec2, rg, NOW, 48)
    assert [(c.name, c.status) for c in checks] == [("gpu: reservations exist", "fail")]
    assert "is empty" in checks[0].detail


def test_unknown_resource_group_fails() -> None:
    ec2, _ = stubbed("ec2")
    rg, rg_stub = stubbed("resource-groups")
    rg_stub.add_client_error("list_group_resources", service_error_code="NotFoundException", http_status_code=404)
    grouped = group(capacity_reservation_ids=[], capacity_reservation_resource_group_arn=GROUP_ARN)
    checks = check_reservations(grouped, ec2, rg, NOW, 48)
    assert checks[0].status == "fail"
    assert "NotFoundException" in checks[0].detail


def test_unanswered_block_lookup_fails_type_but_keeps_other_checks() -> None:
    ec2, stub = stubbed("ec2")
    rg, _ = stubbed("resource-groups")
    stub.add_response(
        "describe_capacity_reservations",
        {"CapacityReservations": [reservation()]},
        {"CapacityReservationIds": ["cr-0aaaaaaaaaaaaaaa1"]},
    )
    stub.add_client_error("describe_capacity_blocks", service_error_code="UnauthorizedOperation", http_status_code=403)
    checks = {c.name: c for c in check_reservations(group(), ec2, rg, NOW, 48)}
    assert checks["gpu: UltraServer type"].status == "fail"
    assert checks["gpu: UltraServer type"].fix == "grant ec2:DescribeCapacityBlocks to the caller's IAM policy"
    assert checks["gpu: reservation state"].status == "pass"
    assert "gpu: interconnect" not in checks


def test_unanswered_interconnect_status_warns() -> None:
    ec2, stub = stubbed("ec2")
    rg, _ = stubbed("resource-groups")
    stub.add_response(
        "describe_capacity_reservations",
        {"CapacityReservations": [reservation()]},
        {"CapacityReservationIds": ["cr-0aaaaaaaaaaaaaaa1"]},
    )
    stub.add_response(
        "describe_capacity_blocks",
        {"CapacityBlocks": [{"CapacityBlockId": "cb-0bbbbbbbbbbbbbbb1", "UltraserverType": "u-p6e-gb200x72"}]},
        {"CapacityBlockIds": ["cb-0bbbbbbbbbbbbbbb1"]},
    )
    stub.add_client_error("describe_capacity_block_status", service_error_code="InternalError", http_status_code=500)
    checks = {c.name: c for c in check_reservations(group(), ec2, rg, NOW, 48)}
    assert checks["gpu: UltraServer type"].status == "pass"
    assert checks["gpu: interconnect"].status == "warn"
    assert "InternalError" in checks["gpu: interconnect"].detail


# ---------------------------------------------------------------- zones


def zone_answer(stub: Stubber, names: list[str], zones: list[dict[str, Any]]) -> None:
    """Queue one DescribeAvailabilityZones answer for the given zone names."""
    stub.add_response(
        "describe_availability_zones",
        {"AvailabilityZones": zones},
        {"AllAvailabilityZones": True, "Filters": [{"Name": "zone-name", "Values": names}]},
    )


def local_zone(opt_in: str) -> dict[str, Any]:
    """The Dallas Local Zone as DescribeAvailabilityZones reports it."""
    return {
        "ZoneName": LOCAL_ZONE,
        "ZoneType": "local-zone",
        "OptInStatus": opt_in,
        "GroupName": "us-east-1-dfw-2",
        "RegionName": REGION,
        "State": "available",
    }


def test_opted_in_local_zone_passes() -> None:
    ec2, stub = stubbed("ec2")
    zone_answer(stub, [LOCAL_ZONE], [local_zone("opted-in")])
    [check] = check_zone_opt_in(target(), ec2)
    assert check.status == "pass"


def test_local_zone_not_opted_in_fails_with_command() -> None:
    ec2, stub = stubbed("ec2")
    zone_answer(stub, [LOCAL_ZONE], [local_zone("not-opted-in")])
    [check] = check_zone_opt_in(target(), ec2)
    assert check.status == "fail"
    assert "--group-name us-east-1-dfw-2 --opt-in-status opted-in" in check.fix


def test_unknown_zone_fails(moto: None) -> None:
    [check] = check_zone_opt_in(target(), boto3.client("ec2", region_name=REGION))
    assert check.status == "fail"
    assert "not a zone of us-east-1" in check.detail


def test_regional_zone_needs_no_opt_in(moto: None) -> None:
    t = target(groups=[group(availability_zone="us-east-1a")])
    [check] = check_zone_opt_in(t, boto3.client("ec2", region_name=REGION))
    assert check.status == "pass"
    assert "no opt-in needed" in check.detail


# ---------------------------------------------------------------- AMI


@pytest.mark.parametrize(
    ("text", "date"),
    [
        ("1.33.5-20251103", "20251103"),
        ("v20251103", "20251103"),
        ("20260110", "20260110"),
        ("amazon-eks-node-al2023-arm64-nvidia-1.33-v20250519", "20250519"),
        ("1.33.5", None),
        ("", None),
    ],
)
def test_ami_release_date(text: str, date: str | None) -> None:
    assert ami_release_date(text) == date


def put_ami(release: str | None) -> Any:
    """Publish the image id (and optionally the release) parameters in moto; returns the SSM client."""
    ssm = boto3.client("ssm", region_name=REGION)
    ssm.put_parameter(Name=IMAGE_PARAM, Value="ami-0123456789abcdef0", Type="String")
    if release is not None:
        ssm.put_parameter(Name=RELEASE_PARAM, Value=release, Type="String")
    return ssm


@pytest.mark.parametrize("release", ["1.33.5-20251103", "1.33.7-20260110"])
def test_current_ami_release_passes(moto: None, release: str) -> None:
    checks = check_ami(target(), put_ami(release))
    assert [(c.name, c.status) for c in checks] == [("AMI parameter", "pass"), ("AMI release", "pass")]
    assert "ami-0123456789abcdef0" in checks[0].detail


def test_old_ami_release_fails(moto: None) -> None:
    checks = check_ami(target(), put_ami("1.33.0-20250519"))
    assert checks[1].status == "fail"
    assert MIN_AMI_RELEASE in checks[1].fix


def test_missing_ami_parameter_fails(moto: None) -> None:
    checks = check_ami(target(), boto3.client("ssm", region_name=REGION))
    assert [(c.name, c.status) for c in checks] == [("AMI parameter", "fail")]
    assert "ParameterNotFound" in checks[0].detail


def test_unknown_release_warns(moto: None) -> None:
    checks = check_ami(target(), put_ami(None))
    assert checks[1].status == "warn"


@pytest.mark.parametrize(("pinned", "status"), [("v20251103", "pass"), ("v20250901", "fail")])
def test_pinned_release_without_parameter(moto: None, pinned: str, status: str) -> None:
    checks = check_ami(target(ami_ssm_parameter=None, ami_release=pinned), boto3.client("ssm", region_name=REGION))
    assert [(c.name, c.status) for c in checks] == [("AMI release", status)]


# ---------------------------------------------------------------- subnets


def make_subnet(zone: str, cidr: str = "10.0.1.0/24") -> str:
    """Create a subnet in moto; returns its id."""
    ec2 = boto3.client("ec2", region_name=REGION)
    vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
    subnet: str = ec2.create_subnet(VpcId=vpc, CidrBlock=cidr, AvailabilityZone=zone)["Subnet"]["SubnetId"]
    return subnet


def test_subnet_in_zone_with_room_passes(moto: None) -> None:
    subnet = make_subnet("us-east-1a")
    t = target(existing_subnets={subnet: "us-east-1a"}, required_free_ips={subnet: 200})
    checks = check_subnets(t, boto3.client("ec2", region_name=REGION))
    assert [(c.name, c.status) for c in checks] == [(f"subnet {subnet}", "pass"), (f"subnet {subnet} free IPs", "pass")]


def test_subnet_any_regional_zone_passes(moto: None) -> None:
    subnet = make_subnet("us-east-1c")
    [check] = check_subnets(target(existing_subnets={subnet: ""}), boto3.client("ec2", region_name=REGION))
    assert check.status == "pass"
    assert "a regional zone" in check.detail


def test_subnet_wrong_zone_fails(moto: None) -> None:
    subnet = make_subnet("us-east-1b")
    [check] = check_subnets(target(existing_subnets={subnet: "us-east-1a"}), boto3.client("ec2", region_name=REGION))
    assert check.status == "fail"
    assert "us-east-1b" in check.detail and "us-east-1a" in check.fix


def test_subnet_in_local_zone_where_regional_expected_fails() -> None:
    ec2, stub = stubbed("ec2")
    stub.add_response(
        "describe_subnets",
        {
            "Subnets": [
                {"SubnetId": "subnet-0ccccccccccccccc1", "AvailabilityZone": LOCAL_ZONE, "AvailableIpAddressCount": 250}
            ]
        },
        {"SubnetIds": ["subnet-0ccccccccccccccc1"]},
    )
    zone_answer(stub, [LOCAL_ZONE], [local_zone("opted-in")])
    [check] = check_subnets(target(existing_subnets={"subnet-0ccccccccccccccc1": ""}), ec2)
    assert check.status == "fail"


def test_missing_subnet_fails(moto: None) -> None:
    t = target(existing_subnets={"subnet-0123456789abcdef0": "us-east-1a"})
    [check] = check_subnets(t, boto3.client("ec2", region_name=REGION))
    assert check.status == "fail"
    assert "not found" in check.detail


def test_subnet_without_enough_free_ips_fails(moto: None) -> None:
    subnet = make_subnet("us-east-1a", "10.0.1.0/24")
    t = target(existing_subnets={subnet: "us-east-1a"}, required_free_ips={subnet: 300})
    checks = check_subnets(t, boto3.client("ec2", region_name=REGION))
    free = checks[1]
    assert free.status == "fail"
    assert "251 free" in free.detail and "300 needed" in free.detail


# ---------------------------------------------------------------- Kubernetes version and quota


def versions_answer(status: str | None) -> tuple[Any, Stubber]:
    """An EKS client that answers DescribeClusterVersions for 1.33 with the given support status."""
    eks, stub = stubbed("eks")
    offered = [] if status is None else [{"clusterVersion": "1.33", "versionStatus": status}]
    stub.add_response("describe_cluster_versions", {"clusterVersions": offered}, {"clusterVersions": ["1.33"]})
    return eks, stub


@pytest.mark.parametrize(
    ("status", "expected"),
    [("STANDARD_SUPPORT", "pass"), ("EXTENDED_SUPPORT", "warn"), ("UNSUPPORTED", "fail"), (None, "fail")],
)
def test_kubernetes_version(status: str | None, expected: str) -> None:
    eks, _ = versions_answer(status)
    [check] = check_kubernetes_version(target(), eks)
    assert check.status == expected


def quota_answer(value: float) -> Any:
    """A Service Quotas client that answers the EKS managed-node-group quota with value."""
    sq, stub = stubbed("service-quotas")
    stub.add_response(
        "get_service_quota",
        {"Quota": {"ServiceCode": "eks", "QuotaCode": "L-6D54EA21", "Value": value}},
        {"ServiceCode": "eks", "QuotaCode": "L-6D54EA21"},
    )
    return sq


def test_node_groups_within_quota_pass() -> None:
    [check] = check_node_group_quota(target(managed_node_group_count=3), quota_answer(3.0))
    assert check.status == "pass"
    assert "quota 3 (Service Quotas L-6D54EA21)" in check.detail


def test_node_groups_over_quota_fail() -> None:
    [check] = check_node_group_quota(target(managed_node_group_count=3), quota_answer(2.0))
    assert check.status == "fail"
    assert "--quota-code L-6D54EA21 --desired-value 3" in check.fix


def test_quota_falls_back_to_default_with_warning(moto: None) -> None:
    # moto's Service Quotas does not know EKS, like an account where the call is not answered.
    quotas = boto3.client("service-quotas", region_name=REGION)
    [check] = check_node_group_quota(target(managed_node_group_count=30), quotas)
    assert check.status == "warn"
    assert "quota 30 (EKS default" in check.detail


def test_default_quota_exceeded_fails(moto: None) -> None:
    quotas = boto3.client("service-quotas", region_name=REGION)
    [check] = check_node_group_quota(target(managed_node_group_count=31), quotas)
    assert check.status == "fail"


# ---------------------------------------------------------------- whole run, access errors, output


def identity(sts_stub: Stubber) -> None:
    """Queue a GetCallerIdentity answer."""
    sts_stub.add_response(
        "get_caller_identity",
        {"Account": "123456789012", "Arn": "arn:aws:iam::123456789012:user/ci", "UserId": "AIDA"},
    )


def test_run_preflight_all_pass(moto: None) -> None:
    put_ami("1.33.5-20251103")
    ec2, ec2_stub = stubbed("ec2")
    queue_reservations(ec2_stub, [reservation()])
    zone_answer(ec2_stub, [LOCAL_ZONE], [local_zone("opted-in")])
    gpu_subnet = "subnet-0ccccccccccccccc1"
    ec2_stub.add_response(
        "describe_subnets",
        {"Subnets": [{"SubnetId": gpu_subnet, "AvailabilityZone": LOCAL_ZONE, "AvailableIpAddressCount": 250}]},
        {"SubnetIds": [gpu_subnet]},
    )
    zone_answer(ec2_stub, [LOCAL_ZONE], [local_zone("opted-in")])
    eks, _ = versions_answer("STANDARD_SUPPORT")
    sts, sts_stub = stubbed("sts")
    identity(sts_stub)
    rg, _ = stubbed("resource-groups")
    clients = PreflightClients(
        ec2=ec2,
        ssm=boto3.client("ssm", region_name=REGION),
        eks=eks,
        service_quotas=quota_answer(30.0),
        resource_groups=rg,
        sts=sts,
    )
    t = target(existing_subnets={gpu_subnet: LOCAL_ZONE}, required_free_ips={gpu_subnet: 100})
    checks = run_preflight(t, clients, now=NOW)
    ec2_stub.assert_no_pending_responses()
    assert [c.name for c in checks if c.status != "pass"] == []
    # 8 reservation checks, zone, AMI parameter + release, subnet zone + free IPs, version, quota.
    assert len(checks) == 8 + 1 + 2 + 2 + 1 + 1
    assert exit_code(checks) == 0


def test_run_preflight_reports_unanswered_call_as_fail() -> None:
    eks, eks_stub = stubbed("eks")
    eks_stub.add_client_error(
        "describe_cluster_versions", service_error_code="AccessDeniedException", http_status_code=403
    )
    sts, sts_stub = stubbed("sts")
    identity(sts_stub)
    ec2, _ = stubbed("ec2")
    ssm, _ = stubbed("ssm")
    rg, _ = stubbed("resource-groups")
    clients = PreflightClients(
        ec2=ec2, ssm=ssm, eks=eks, service_quotas=quota_answer(30.0), resource_groups=rg, sts=sts
    )
    t = target(groups=[], ami_ssm_parameter=None, ami_release="v20251103", managed_node_group_count=1)
    checks = {c.name: c for c in run_preflight(t, clients, now=NOW)}
    version = checks["Kubernetes 1.33 offered"]
    assert version.status == "fail"
    assert "AccessDeniedException" in version.detail
    assert version.fix == "grant eks:DescribeClusterVersions to the caller's IAM policy"
    assert exit_code(list(checks.values())) == 1


def test_run_preflight_accepts_a_session(moto: None) -> None:
    # Everything moto models answers through clients built from the session; no groups, no subnets.
    boto3.client("ssm", region_name=REGION).put_parameter(Name=IMAGE_PARAM, Value="ami-1", Type="String")
    t = target(groups=[], ami_ssm_parameter=IMAGE_PARAM, ami_release="v20251103", managed_node_group_count=2)
    checks = {c.name: c for c in run_preflight(t, boto3.Session(region_name=REGION), now=NOW)}
    assert checks["AMI parameter"].status == "pass"
    assert checks["AMI release"].status == "pass"
    assert checks["managed node group quota"].status == "warn"


def test_expired_credentials_raise_access_error() -> None:
    sts, sts_stub = stubbed("sts")
    sts_stub.add_client_error(
        "get_caller_identity",
        service_error_code="ExpiredToken",
        service_message="The security token included in the request is expired",
    )
    ec2, ssm, eks, sq, rg = (stubbed(s)[0] for s in ("ec2", "ssm", "eks", "service-quotas", "resource-groups"))
    clients = PreflightClients(ec2=ec2, ssm=ssm, eks=eks, service_quotas=sq, resource_groups=rg, sts=sts)
    with pytest.raises(PreflightAccessError, match="ExpiredToken"):
        run_preflight(target(), clients, now=NOW)


def test_no_credentials_raise_access_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(PreflightAccessError, match="no usable AWS credentials"):
        run_preflight(target(), make_clients(REGION, endpoint_url="http://127.0.0.1:9"), now=NOW)


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


def test_unreachable_endpoint_raises_access_error() -> None:
    clients = make_clients(REGION, endpoint_url=f"http://127.0.0.1:{closed_port()}")
    with pytest.raises(PreflightAccessError, match="cannot reach the AWS endpoint"):
        run_preflight(target(), clients, now=NOW)


def test_unknown_profile_raises_access_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(PreflightAccessError, match="no-such-profile"):
        make_clients(REGION, profile="no-such-profile")


def test_format_checks_shows_fixes_for_problems_only() -> None:
    checks = [
        Check("gpu: reservation state", "fail", "cr-1: payment-failed", "fix the payment method"),
        Check("AMI release", "pass", "v20251103", "never shown"),
        Check("zone us-east-1-dfw-2a opted in", "warn", "unknown", "opt in"),
    ]
    text = format_checks(checks)
    lines = text.splitlines()
    assert lines[0].split() == ["STATUS", "CHECK", "DETAIL"]
    assert lines[1].startswith("FAIL    gpu: reservation state")
    assert lines[2].strip() == "fix: fix the payment method"
    assert "never shown" not in text
    assert lines[-2].strip() == "fix: opt in"
    assert lines[-1] == "1 passed, 1 warnings, 1 failed"


@pytest.mark.parametrize(("statuses", "code"), [(["pass", "warn"], 0), (["pass", "fail", "warn"], 1), ([], 0)])
def test_exit_code(statuses: list[str], code: int) -> None:
    assert exit_code([Check("c", s, "") for s in statuses]) == code  # type: ignore[arg-type]


def test_target_round_trips_through_json_form() -> None:
    t = target(existing_subnets={"subnet-1": ""}, required_free_ips={"subnet-1": 40})
    assert target_from_dict(dataclasses.asdict(t)) == t


def test_target_missing_field_is_a_config_error() -> None:
    data = dataclasses.asdict(target())
    del data["region"]
    with pytest.raises(ConfigError, match=r"target\.region: missing"):
        target_from_dict(data)


def test_group_unknown_field_is_a_config_error() -> None:
    data = dataclasses.asdict(target())
    data["groups"][0]["colour"] = "green"
    with pytest.raises(ConfigError, match=r"target\.groups\[0\]\.colour: unknown field; allowed: availability_zone"):
        target_from_dict(data)


@pytest.mark.parametrize("stack", ["gb200-x72", "gb200-x36"])
def test_preflight_resolves_the_pinned_release_not_recommended(stack: str) -> None:
    from helpers.stacks import stack_config
    from ultraserver.config.settings import parse_settings
    from ultraserver.preflight.checks import target_from_settings

    t = target_from_settings(parse_settings(stack_config(stack), stack=stack))
    assert t.ami_release == "1.33.5-20251103"
    assert t.ami_ssm_parameter == (
        "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/nvidia/"
        "amazon-eks-node-al2023-arm64-nvidia-1.33-v20251103/image_id"
    )
