"""After an extension is bought, the scale-downs tied to the old end move to the new end with no deploy; EKS's own
managed-group action still at the old end − 40 is reported (whether EKS moves it is unverified)."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest
from helpers.capacity import A_END, DURING_A, clients
from helpers.permissions import actions, recorded_operations
from helpers.preflight import stubbed
from helpers.sim_cluster import SimCluster
from ultraserver.builders.reclaim_drain import ReclaimDrainArgs, drain_blocks, drain_manifests
from ultraserver.facts.aws.permissions import COMMAND_ACTIONS
from ultraserver.facts.capacity.capacity_blocks import EKS_MANAGED_SCALEDOWN_ACTION
from ultraserver.status.extend import pick_group, run_extend
from ultraserver.status.extend_moves import planned_moves
from ultraserver.verify.clients import ClusterError

from tests.status.test_extend import SETTINGS, queue_offering, queue_purchase

OURS = "capacity-block-20261201T1130Z-end"
NEW_END = A_END + timedelta(hours=48)


def action(name: str, at: object, group: str = "eks-nvl72-asg") -> dict:
    return {
        "AutoScalingGroupName": group,
        "ScheduledActionName": name,
        "StartTime": at,
        "MinSize": 0,
        "MaxSize": 18,
        "DesiredCapacity": 0,
    }


def test_on_the_clock_the_scale_down_moves_with_the_end_and_nothing_else_does() -> None:
    ours = action(OURS, A_END - timedelta(minutes=90))
    eks = action(EKS_MANAGED_SCALEDOWN_ACTION, A_END - timedelta(minutes=40))
    later = action("capacity-block-20261215T1130Z-end", A_END + timedelta(days=14, minutes=-90))
    start = action("capacity-block-20261215T1130Z-start", A_END)
    moves, stale = planned_moves([ours, eks, later, start], A_END, NEW_END)
    assert [(m.name, m.start, m.desired) for m in moves] == [(OURS, NEW_END - timedelta(minutes=90), 0)]
    assert stale == [eks]
    # Once EKS has moved its action (if it does), nothing is reported.
    moved_by_eks = action(EKS_MANAGED_SCALEDOWN_ACTION, NEW_END - timedelta(minutes=40))
    assert planned_moves([moved_by_eks], A_END, NEW_END) == ([], [])


class DeniedCluster(SimCluster):
    """A kubeconfig identity without rights on the drain's ConfigMap."""

    def config_map_data(self, namespace: str, name: str) -> dict[str, str]:
        raise ClusterError(f"reading configmap {namespace}/{name} failed: HTTP 403 Forbidden")


@pytest.mark.parametrize("denied", [False, True])
def test_extend_yes_moves_the_groups_scale_down_through_auto_scaling(denied: bool) -> None:
    ec2, stub = stubbed("ec2")
    queue_offering(stub)
    queue_purchase(stub)
    autoscaling, a_stub = stubbed("autoscaling")
    for key, values in (("tag-key", ["kubernetes.io/cluster/gb200-x72"]), ("tag:eks:cluster-name", ["gb200-x72"])):
        groups = (
            []
            if key == "tag-key"
            else [
                {
                    "AutoScalingGroupName": "eks-nvl72-asg",
                    "MinSize": 0,
                    "MaxSize": 18,
                    "DesiredCapacity": 18,
                    "DefaultCooldown": 300,
                    "AvailabilityZones": ["us-east-1-dfw-2a"],
                    "HealthCheckType": "EC2",
                    "CreatedTime": A_END - timedelta(days=20),
                }
            ]
        )
        a_stub.add_response(
            "describe_auto_scaling_groups",
            {"AutoScalingGroups": groups},
            {"Filters": [{"Name": key, "Values": values}]},
        )
    old = [
        action(OURS, A_END - timedelta(minutes=90)),
        action(EKS_MANAGED_SCALEDOWN_ACTION, A_END - timedelta(minutes=40)),
    ]
    a_stub.add_response(
        "describe_scheduled_actions", {"ScheduledUpdateGroupActions": old}, {"AutoScalingGroupName": "eks-nvl72-asg"}
    )
    a_stub.add_response(
        "put_scheduled_update_group_action",
        {},
        {
            "AutoScalingGroupName": "eks-nvl72-asg",
            "ScheduledActionName": OURS,
            "StartTime": NEW_END - timedelta(minutes=90),
            "MinSize": 0,
            "MaxSize": 18,
            "DesiredCapacity": 0,
        },
    )
    both = dataclasses.replace(clients(ec2), autoscaling=autoscaling)
    cluster = DeniedCluster() if denied else SimCluster()
    cluster.deploy(drain_manifests(ReclaimDrainArgs(drain_blocks(SETTINGS))))
    with recorded_operations() as seen:
        lines, ok = run_extend(pick_group(SETTINGS, "nvl72"), both, 48, True, DURING_A, "gb200-x72", cluster)
    a_stub.assert_no_pending_responses()
    assert actions(seen) <= set(COMMAND_ACTIONS["extend --yes"])
    text = "\n".join(lines)
    assert ok and f"moved eks-nvl72-asg {OURS} to" in text
    # The in-cluster drain moved too, in the same run (tests/status/test_extend_drain.py walks it on the clock), or
    # extend says it did not, after the purchase and the scale-down moves went through.
    if denied:
        assert "drain: not moved (reading configmap ultraserver-reclaim/reclaim-drain-blocks failed: HTTP 403" in text
    else:
        moved = (
            f"end {A_END:%Y-%m-%d %H:%M} -> {NEW_END:%Y-%m-%d %H:%M} UTC in ultraserver-reclaim/reclaim-drain-blocks"
        )
        assert moved in text
    assert f"WARNING eks-nvl72-asg: EKS's '{EKS_MANAGED_SCALEDOWN_ACTION}' still at" in text and "unverified" in text
