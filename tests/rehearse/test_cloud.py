"""The rehearsal's AWS (rehearse/cloud.py) answers in the shapes botocore's models parse, built from the plan: the
drain's blocks' reservations, each block's Auto Scaling group named as AWS names it with the plan's scale-down."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import datetime, timedelta, timezone
from typing import Any

import botocore.session
from botocore.parsers import create_parser
from helpers.stacks import ROOT, stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.incluster import aws_query, drain_watch
from ultraserver.rehearse.cloud import cloud_of
from ultraserver.rehearse.reclaim import drain_inputs
from ultraserver.rehearse.run import default_moment, plan_objects, stack_plan
from ultraserver.verify.expect import expectation

NOW = datetime(2026, 12, 1, 13, 0, tzinfo=timezone.utc)


def parsed(service: str, action: str, answer: ET.Element) -> dict[str, Any]:
    """The answer as botocore parses it with the service's own model and protocol."""
    model = botocore.session.get_session().get_service_model(service)
    parser = create_parser(model.metadata["protocol"])
    body = ET.tostring(answer)
    return dict(
        parser.parse({"body": body, "headers": {}, "status_code": 200}, model.operation_model(action).output_shape)
    )


def x72_cloud() -> Any:
    settings = parse_settings(stack_config("gb200-x72"))
    moment = default_moment(expectation(settings))
    plan = stack_plan(ROOT, "gb200-x72", settings, moment)
    inputs = drain_inputs(plan_objects(plan))
    assert inputs is not None
    return cloud_of(plan, inputs.blocks, {"nvl72": 18}, moment), inputs.blocks


def test_the_cloud_holds_the_stacks_reservation_and_the_managed_groups_actions() -> None:
    cloud, (block,) = x72_cloud()
    (group,) = cloud.groups.values()
    assert cloud.reservations[block.reservations[0]]["end"] == block.end
    # EKS names a managed node group's Auto Scaling group; the drain finds it by the plan's resource name.
    assert group.name.startswith("eks-gb200-x72-nvl72-") and drain_watch.block_group(
        [{"name": group.name}], block.group
    )
    assert group.desired == 18 and group.managed
    assert group.actions["capacity-block-end"] == (block.end - timedelta(minutes=65), 0)
    assert group.actions["Amazon EKS Node Group Capacity Scaledown Before Reservation End"][0] == block.end - timedelta(
        minutes=40
    )


def test_botocore_parses_every_answer_as_the_drain_reads_it() -> None:
    cloud, (block,) = x72_cloud()
    (group,) = cloud.groups.values()
    rid = block.reservations[0]
    ec2 = parsed(
        "ec2",
        "DescribeCapacityReservations",
        cloud.api("ec2").call("DescribeCapacityReservations", {"CapacityReservationId.1": rid}, NOW),
    )
    (held,) = ec2["CapacityReservations"]
    assert held["CapacityReservationId"] == rid and held["EndDate"] == block.end and held["State"] == "active"
    assert aws_query.capacity_reservations(cloud.api("ec2"), [rid], NOW)[rid]["end"] == "2026-12-15T11:30:00Z"

    filters = {"Filters.member.1.Name": "tag:eks:cluster-name", "Filters.member.1.Values.member.1": "gb200-x72"}
    groups = parsed(
        "autoscaling",
        "DescribeAutoScalingGroups",
        cloud.api("autoscaling").call("DescribeAutoScalingGroups", filters, NOW),
    )
    assert [(g["AutoScalingGroupName"], g["DesiredCapacity"]) for g in groups["AutoScalingGroups"]] == [
        (group.name, 18)
    ]
    scaling = cloud.api("autoscaling")
    aws_query.put_scale_down(scaling, group.name, "capacity-block-end", "2026-12-16T10:25:00Z", 18, NOW)
    aws_query.set_desired(scaling, group.name, 18, NOW)
    actions = parsed(
        "autoscaling",
        "DescribeScheduledActions",
        scaling.call("DescribeScheduledActions", {"AutoScalingGroupName": group.name}, NOW),
    )
    moved = {a["ScheduledActionName"]: a["StartTime"] for a in actions["ScheduledUpdateGroupActions"]}
    assert moved["capacity-block-end"] == datetime(2026, 12, 16, 10, 25, tzinfo=timezone.utc)

    aws_query.publish(cloud.api("sns"), "arn:aws:sns:us-east-1:1:t", "subject", "message", NOW)
    assert cloud.published == [{"TopicArn": "arn:aws:sns:us-east-1:1:t", "Subject": "subject", "Message": "message"}]
    # The drain asks by both tags (self-managed, managed): the managed group answers one, so it is listed once.
    assert aws_query.cluster_groups(scaling, "gb200-x72", NOW) == [{"name": group.name, "desired": 18, "max": 18}]


def test_auto_scaling_runs_each_due_action_once() -> None:
    cloud, (block,) = x72_cloud()
    (group,) = cloud.groups.values()
    ran = cloud.tick(block.end - timedelta(minutes=65))
    assert ran == [f"Auto Scaling ran capacity-block-end on {group.name}: desired 0"] and group.desired == 0
    assert cloud.tick(block.end - timedelta(minutes=60)) == []
