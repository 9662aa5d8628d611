"""Zone, AMI, subnet, Kubernetes version and quota checks, and whole runs, against moto and Stubber."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from helpers.preflight import (
    IMAGE_PARAM,
    LOCAL_ZONE,
    NOW,
    REGION,
    RELEASE_PARAM,
    group,
    identity,
    local_zone,
    queue_reservations,
    quota_answer,
    reservation,
    stubbed,
    target,
    zone_answer,
)
from ultraserver.preflight.checks import (
    MIN_AMI_RELEASE,
    ami_release_date,
    check_ami,
    check_kubernetes_version,
    check_node_group_quota,
    check_subnets,
    check_vcpus,
    check_zone_opt_in,
    run_preflight,
)
from ultraserver.preflight.clients import PreflightClients
from ultraserver.preflight.report import FAIL, PASS, WARN, exit_code


def test_opted_in_local_zone_passes() -> None:
    ec2, stub = stubbed("ec2")
    zone_answer(stub, [LOCAL_ZONE], [local_zone("opted-in")])
    [check] = check_zone_opt_in(target(), ec2)
    assert check.level == PASS


def test_local_zone_not_opted_in_fails_with_command() -> None:
    ec2, stub = stubbed("ec2")
    zone_answer(stub, [LOCAL_ZONE], [local_zone("not-opted-in")])
    [check] = check_zone_opt_in(target(), ec2)
    assert check.level == FAIL
    assert "--group-name us-east-1-dfw-2 --opt-in-status opted-in" in check.fix


def test_unknown_zone_fails(moto: None) -> None:
    [check] = check_zone_opt_in(target(), boto3.client("ec2", region_name=REGION))
    assert check.level == FAIL
    assert "not a zone of us-east-1" in check.value


def test_regional_zone_needs_no_opt_in(moto: None) -> None:
    t = target(groups=[group(availability_zone="us-east-1a")])
    [check] = check_zone_opt_in(t, boto3.client("ec2", region_name=REGION))
    assert check.level == PASS
    assert "no opt-in needed" in check.value


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
    assert [(c.key, c.level) for c in checks] == [("AMI parameter", PASS), ("AMI release", PASS)]
    assert "ami-0123456789abcdef0" in checks[0].value


def test_old_ami_release_fails(moto: None) -> None:
    checks = check_ami(target(), put_ami("1.33.0-20250519"))
    assert checks[1].level == FAIL
    assert MIN_AMI_RELEASE in checks[1].fix


def test_missing_ami_parameter_fails(moto: None) -> None:
    checks = check_ami(target(), boto3.client("ssm", region_name=REGION))
    assert [(c.key, c.level) for c in checks] == [("AMI parameter", FAIL)]
    assert "ParameterNotFound" in checks[0].value


def test_unknown_release_warns(moto: None) -> None:
    checks = check_ami(target(), put_ami(None))
    assert checks[1].level == WARN


@pytest.mark.parametrize(("pinned", "status"), [("v20251103", PASS), ("v20250901", FAIL)])
def test_pinned_release_without_parameter(moto: None, pinned: str, status: str) -> None:
    checks = check_ami(target(ami_ssm_parameter=None, ami_release=pinned), boto3.client("ssm", region_name=REGION))
    assert [(c.key, c.level) for c in checks] == [("AMI release", status)]


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
    assert [(c.key, c.level) for c in checks] == [(f"subnet {subnet}", PASS), (f"subnet {subnet} free IPs", PASS)]


def test_subnet_any_regional_zone_passes(moto: None) -> None:
    subnet = make_subnet("us-east-1c")
    [check] = check_subnets(target(existing_subnets={subnet: ""}), boto3.client("ec2", region_name=REGION))
    assert check.level == PASS
    assert "a regional zone" in check.value


def test_subnet_wrong_zone_fails(moto: None) -> None:
    subnet = make_subnet("us-east-1b")
    [check] = check_subnets(target(existing_subnets={subnet: "us-east-1a"}), boto3.client("ec2", region_name=REGION))
    assert check.level == FAIL
    assert "us-east-1b" in check.value and "us-east-1a" in check.fix


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
    assert check.level == FAIL


def test_missing_subnet_fails(moto: None) -> None:
    t = target(existing_subnets={"subnet-0123456789abcdef0": "us-east-1a"})
    [check] = check_subnets(t, boto3.client("ec2", region_name=REGION))
    assert check.level == FAIL
    assert "not found" in check.value


def test_subnet_without_enough_free_ips_fails(moto: None) -> None:
    subnet = make_subnet("us-east-1a", "10.0.1.0/24")
    t = target(existing_subnets={subnet: "us-east-1a"}, required_free_ips={subnet: 300})
    checks = check_subnets(t, boto3.client("ec2", region_name=REGION))
    free = checks[1]
    assert free.level == FAIL
    assert "251 free" in free.value and "300 needed" in free.value


# ---------------------------------------------------------------- Kubernetes version and quota


def versions_answer(status: str | None) -> tuple[Any, Stubber]:
    """An EKS client that answers DescribeClusterVersions for 1.33 with the given support status."""
    eks, stub = stubbed("eks")
    offered = [] if status is None else [{"clusterVersion": "1.33", "versionStatus": status}]
    stub.add_response("describe_cluster_versions", {"clusterVersions": offered}, {"clusterVersions": ["1.33"]})
    return eks, stub


@pytest.mark.parametrize(
    ("status", "expected"),
    [("STANDARD_SUPPORT", PASS), ("EXTENDED_SUPPORT", WARN), ("UNSUPPORTED", FAIL), (None, FAIL)],
)
def test_kubernetes_version(status: str | None, expected: str) -> None:
    eks, _ = versions_answer(status)
    [check] = check_kubernetes_version(target(), eks)
    assert check.level == expected


def test_node_groups_within_quota_pass() -> None:
    [check] = check_node_group_quota(target(managed_node_group_count=3), quota_answer(3.0))
    assert check.level == PASS
    assert "quota 3 (Service Quotas L-6D54EA21)" in check.value


def test_node_groups_over_quota_fail() -> None:
    [check] = check_node_group_quota(target(managed_node_group_count=3), quota_answer(2.0))
    assert check.level == FAIL
    assert "--quota-code L-6D54EA21 --desired-value 3" in check.fix


def test_quota_falls_back_to_default_with_warning(moto: None) -> None:
    # moto's Service Quotas does not know EKS, like an account where the call is not answered.
    quotas = boto3.client("service-quotas", region_name=REGION)
    [check] = check_node_group_quota(target(managed_node_group_count=30), quotas)
    assert check.level == WARN
    assert "quota 30 (EKS default" in check.value


def test_default_quota_exceeded_fails(moto: None) -> None:
    quotas = boto3.client("service-quotas", region_name=REGION)
    [check] = check_node_group_quota(target(managed_node_group_count=31), quotas)
    assert check.level == FAIL


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
    ec2_stub.add_response("describe_instance_types", vcpus_answer(144), {"InstanceTypes": [GB200]})
    t = target(existing_subnets={gpu_subnet: LOCAL_ZONE}, required_free_ips={gpu_subnet: 100})
    checks = run_preflight(t, clients, now=NOW)
    ec2_stub.assert_no_pending_responses()
    assert [c.key for c in checks if c.level != PASS] == []
    # The creator, 9 reservation checks, zone, AMI parameter + release, subnet zone + free IPs, version, quota, vCPUs.
    assert len(checks) == 1 + 9 + 1 + 2 + 2 + 1 + 1 + 1
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
    checks = {c.key: c for c in run_preflight(t, clients, now=NOW)}
    version = checks["Kubernetes 1.33 offered"]
    assert version.level == FAIL
    assert "AccessDeniedException" in version.value
    assert version.fix.startswith("grant eks:DescribeClusterVersions to the caller's IAM policy")
    assert exit_code(list(checks.values())) == 1


def test_run_preflight_accepts_a_session(moto: None) -> None:
    # Everything moto models answers through clients built from the session; no groups, no subnets.
    boto3.client("ssm", region_name=REGION).put_parameter(Name=IMAGE_PARAM, Value="ami-1", Type="String")
    t = target(groups=[], ami_ssm_parameter=IMAGE_PARAM, ami_release="v20251103", managed_node_group_count=2)
    checks = {c.key: c for c in run_preflight(t, boto3.Session(region_name=REGION), now=NOW)}
    assert checks["AMI parameter"].level == PASS
    assert checks["AMI release"].level == PASS
    assert checks["managed node group quota"].level == WARN


GB200 = "p6e-gb200.36xlarge"


def vcpus_answer(vcpus: int) -> dict:
    return {"InstanceTypes": [{"InstanceType": GB200, "VCpuInfo": {"DefaultVCpus": vcpus}}]}


@pytest.mark.parametrize("vcpus", [72, 143, 288])
def test_a_vcpu_count_other_than_the_share_rests_on_fails(vcpus: int) -> None:
    ec2, stub = stubbed("ec2")
    stub.add_response("describe_instance_types", vcpus_answer(vcpus), {"InstanceTypes": [GB200]})
    [found] = check_vcpus(target(), ec2)
    stub.assert_no_pending_responses()
    assert found.level == FAIL and f"EC2 reports {vcpus}" in found.value and "rests on 144" in found.value
    assert "facts/hardware/instances.py" in found.fix


def test_the_vcpu_count_the_share_rests_on_passes() -> None:
    ec2, stub = stubbed("ec2")
    stub.add_response("describe_instance_types", vcpus_answer(144), {"InstanceTypes": [GB200]})
    [found] = check_vcpus(target(), ec2)
    assert found.level == PASS
