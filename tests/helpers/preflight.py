"""Shared preflight test data: a valid target and group, stubbed clients and the AWS answers they queue."""

from __future__ import annotations

import dataclasses
import socket
from datetime import datetime, timedelta, timezone
from typing import Any

import boto3
from botocore.stub import Stubber
from ultraserver.facts.capacity.capacity_blocks import CapacityBlock, ReservationWindow
from ultraserver.preflight.target import PreflightGroup, PreflightTarget

REGION = "us-east-1"
LOCAL_ZONE = "us-east-1-dfw-2a"
NOW = datetime(2026, 3, 2, 12, 0, tzinfo=timezone.utc)
IMAGE_PARAM = "/ultraserver-test/eks/1.33/nvidia/recommended/image_id"
RELEASE_PARAM = "/ultraserver-test/eks/1.33/nvidia/recommended/release_version"


def stubbed(service: str) -> tuple[Any, Stubber]:
    """A client whose calls are answered by an activated Stubber (validated against the service model)."""
    factory: Any = boto3.client  # a run-time service name matches no typed-stub overload
    client = factory(service, region_name=REGION)
    stub = Stubber(client)
    stub.activate()
    return client, stub


WINDOW = ReservationWindow(NOW - timedelta(days=1), NOW + timedelta(days=7))
"""The window of ``reservation()``, as the default group's stack writes it."""


def group(**changes: Any) -> PreflightGroup:
    """A valid one-UltraServer u-p6e-gb200x72 group on ``reservation()``'s block and window, with changes applied."""
    base = PreflightGroup(
        name="gpu",
        ultraserver_type="u-p6e-gb200x72",
        capacity_reservation_ids=["cr-0aaaaaaaaaaaaaaa1"],
        capacity_reservation_resource_group_arn=None,
        ultraserver_count=1,
        instances_per_ultraserver=18,
        availability_zone=LOCAL_ZONE,
        managed=True,
        instance_type="p6e-gb200.36xlarge",
        blocks=(CapacityBlock(("cr-0aaaaaaaaaaaaaaa1",), WINDOW),),
        settings_key="gpuNodeGroups[0]",
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
    **block: Any,
) -> None:
    """Queue the EC2 answers check_reservations asks for: each reservation, then its blocks (with ``block``'s fields)
    and their status."""
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
                    **block,
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


def quota_answer(value: float) -> Any:
    """A Service Quotas client that answers the EKS managed-node-group quota with value."""
    sq, stub = stubbed("service-quotas")
    stub.add_response(
        "get_service_quota",
        {"Quota": {"ServiceCode": "eks", "QuotaCode": "L-6D54EA21", "Value": value}},
        {"ServiceCode": "eks", "QuotaCode": "L-6D54EA21"},
    )
    return sq


def identity(sts_stub: Stubber) -> None:
    """Queue a GetCallerIdentity answer."""
    sts_stub.add_response(
        "get_caller_identity",
        {"Account": "123456789012", "Arn": "arn:aws:iam::123456789012:user/ci", "UserId": "AIDA"},
    )


def closed_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port
