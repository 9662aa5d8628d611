"""Shared data for status and extend tests: a two-block stack, stubbed EC2 answers, GPU nodes of a fake cluster."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from botocore.stub import Stubber
from helpers.fake_cluster import FakeCluster
from helpers.preflight import LOCAL_ZONE, stubbed
from helpers.stacks import stack_config
from ultraserver.config.settings import Settings, parse_settings
from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL, ULTRASERVER_LABEL
from ultraserver.preflight.clients import PreflightClients
from ultraserver.verify.clients import Node
from ultraserver.verify.expect import expectation

A, B = "cr-0aaaaaaaaaaaaaaa1", "cr-0bbbbbbbbbbbbbbb2"
BLOCK_A, BLOCK_B = "cb-0aaaaaaaaaaaaaaa1", "cb-0bbbbbbbbbbbbbbb2"
A_START = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
A_END = B_START = datetime(2026, 12, 8, 11, 30, tzinfo=timezone.utc)
B_END = datetime(2026, 12, 15, 11, 30, tzinfo=timezone.utc)
BEFORE, DURING_A, DURING_B, AFTER = (
    A_START - timedelta(days=1),
    A_START + timedelta(days=1),
    B_END - timedelta(hours=24),
    B_END + timedelta(days=1),
)
CLIQUE = "00000000-0000-4000-8000-000000000001.1"


def two_block_settings(handover: str = "switch") -> Settings:
    """The gb200-x72 stack with its group on block A (cr-...1) then block B (cr-...2), handed over by ``handover``."""
    config = stack_config("gb200-x72")
    [group] = config["ultraserver-eks:gpuNodeGroups"]
    group.pop("capacityReservationIds")
    group.pop("reservationWindow")
    group["handover"] = handover
    group["capacityBlocks"] = [
        {"start": A_START.isoformat(), "end": A_END.isoformat(), "capacityReservationIds": [A]},
        {"start": B_START.isoformat(), "end": B_END.isoformat(), "capacityReservationIds": [B]},
    ]
    config["ultraserver-eks:gpuNodeGroups"] = [group]
    return parse_settings(config, stack="gb200-x72")


def reservation(cr_id: str, state: str, start: datetime, end: datetime, block: str, **changes: Any) -> dict:
    """A Capacity Block reservation of 18 p6e-gb200.36xlarge, all running, as DescribeCapacityReservations says."""
    answer = {
        "CapacityReservationId": cr_id,
        "InstanceType": "p6e-gb200.36xlarge",
        "AvailabilityZone": LOCAL_ZONE,
        "TotalInstanceCount": 18,
        "AvailableInstanceCount": 0,
        "State": state,
        "StartDate": start,
        "EndDate": end,
        "ReservationType": "capacity-block",
        "CapacityBlockId": block,
    }
    answer.update(changes)
    return answer


def queue_current(stub: Stubber, answer: dict, interconnect: str = "ok", block_state: str | None = None) -> None:
    """The three calls status makes for the current block: the reservation, its block, the block's status."""
    stub.add_response(
        "describe_capacity_reservations",
        {"CapacityReservations": [answer]},
        {"CapacityReservationIds": [answer["CapacityReservationId"]]},
    )
    block = answer["CapacityBlockId"]
    stub.add_response(
        "describe_capacity_blocks",
        {
            "CapacityBlocks": [
                {
                    "CapacityBlockId": block,
                    "UltraserverType": "u-p6e-gb200x72",
                    "AvailabilityZone": LOCAL_ZONE,
                    "CapacityReservationIds": [answer["CapacityReservationId"]],
                    "StartDate": answer["StartDate"],
                    "EndDate": answer["EndDate"],
                    "State": block_state or answer["State"],
                }
            ]
        },
        {"CapacityBlockIds": [block]},
    )
    stub.add_response(
        "describe_capacity_block_status",
        {
            "CapacityBlockStatuses": [
                {"CapacityBlockId": block, "InterconnectStatus": interconnect, "TotalCapacity": 18}
            ]
        },
        {"CapacityBlockIds": [block]},
    )


def queue_other(stub: Stubber, answer: dict) -> None:
    """The one call status makes per reservation of another block."""
    stub.add_response(
        "describe_capacity_reservations",
        {"CapacityReservations": [answer]},
        {"CapacityReservationIds": [answer["CapacityReservationId"]]},
    )


CALLER = "arn:aws:sts::111122223333:assumed-role/Deployer/ultraserver"
"""Who the stubbed clients' one GetCallerIdentity answers (extend asks before it acts)."""


def clients(ec2: Any) -> PreflightClients:
    """Preflight clients around a stubbed EC2 client; STS answers GetCallerIdentity once (CALLER), any other service
    call fails the test."""
    other = {name: stubbed(name)[0] for name in ("ssm", "eks", "service-quotas", "resource-groups")}
    sts, stub = stubbed("sts")
    stub.add_response("get_caller_identity", {"UserId": "AROA:ultraserver", "Account": "111122223333", "Arn": CALLER})
    other["sts"] = sts
    return PreflightClients(
        ec2=ec2,
        ssm=other["ssm"],
        eks=other["eks"],
        service_quotas=other["service-quotas"],
        resource_groups=other["resource-groups"],
        sts=other["sts"],
    )


def gpu_nodes(
    settings: Settings, ready: int, ready_since: datetime | None, not_ready: int = 0, efa: int | None = None
) -> FakeCluster:
    """A cluster with `ready` Ready and `not_ready` NotReady nodes of the group, allocatable as the layout says."""
    [group] = expectation(settings).groups
    nodes = []
    for n in range(ready + not_ready):
        allocatable = {"nvidia.com/gpu": str(group.gpus_per_node), "vpc.amazonaws.com/efa": str(group.efa_devices)}
        if efa is not None and n == 0:
            allocatable["vpc.amazonaws.com/efa"] = str(efa)
        labels = {ULTRASERVER_LABEL: group.name, CLIQUE_LABEL: CLIQUE}
        provider = f"aws:///us-east-1-dfw-2a/i-0{n:016x}"
        nodes.append(Node(f"ip-10-0-0-{n}.ec2.internal", labels, allocatable, n < ready, ready_since, provider))
    return FakeCluster(node_list=nodes)


def node_object(node: Node) -> dict:
    """A Node as the API server serves it."""
    since = node.ready_changed.isoformat() if node.ready_changed else None
    condition = {"type": "Ready", "status": "True" if node.ready else "False", "lastTransitionTime": since}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "labels": dict(node.labels)},
        "spec": {"providerID": node.provider_id},
        "status": {"conditions": [condition], "allocatable": dict(node.allocatable)},
    }


def launcher(namespace: str, job: str, phase: str, created: datetime, finished: datetime | None) -> dict:
    """The launcher pod of an MPIJob's run as the Job controller labels it."""
    state = {"terminated": {"exitCode": 0 if phase == "Succeeded" else 1, "finishedAt": finished.isoformat()}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": f"{job}-launcher-{created:%H%M}",
            "namespace": namespace,
            "labels": {"job-name": f"{job}-launcher"},
            "creationTimestamp": created.isoformat(),
        },
        "spec": {"containers": [{"name": "launcher", "image": "x"}]},
        "status": {
            "phase": phase,
            "containerStatuses": [
                {
                    "name": "launcher",
                    "image": "x",
                    "imageID": "x",
                    "ready": False,
                    "restartCount": 0,
                    "state": state if finished else {"running": {}},
                }
            ],
        },
    }
