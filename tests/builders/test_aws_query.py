"""The drain's standard-library AWS calls against botocore and moto: each request carries the parameters botocore's
own serializer writes for the same call (ec2 and query protocols), the test double's answers parse under botocore's
parser for the operation (so the double speaks the service's shape), and Auto Scaling and SNS answer the real client
on a moto server."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from typing import Any

import boto3
import pytest
from botocore import parsers, serialize
from botocore.session import get_session
from helpers.fake_aws import FakeAws, Group
from moto.server import ThreadedMotoServer
from ultraserver.incluster import aws_query as aws
from ultraserver.rehearse.cloud import Cloud

NOW = datetime(2026, 12, 15, 9, 0, tzinfo=timezone.utc)
REGION = "us-east-1"
CREDS = {"AccessKeyId": "AKIDEXAMPLE", "SecretAccessKey": "secret", "Token": "session"}


class Recorder:
    """A QueryApi that keeps what it was asked and answers from a FakeAws."""

    def __init__(self, world: FakeAws | Cloud, service: str) -> None:
        self.service, self.sent, self._inner = service, [], world.api(service)

    def call(self, action: str, params: dict[str, str], now: datetime) -> Any:
        self.sent.append({"Action": action, "Version": aws.VERSIONS[self.service], **params})
        return self._inner.call(action, params, now)


def _botocore(service: str, operation: str, arguments: dict[str, Any]) -> dict[str, str]:
    model = get_session().get_service_model(service)
    serializer = serialize.create_serializer(model.metadata["protocol"])
    body = serializer.serialize_to_request(arguments, model.operation_model(operation))["body"]
    return {k: str(v) for k, v in body.items()}  # urlencode writes numbers as their text


def _world() -> FakeAws:
    world = FakeAws()
    world.reservations["cr-0aaaaaaaaaaaaaaaa"] = {"start": NOW, "end": NOW + timedelta(days=1), "state": "active"}
    world.groups["g"] = Group("g", 18, 18, {"capacity-block-end": (NOW + timedelta(hours=1), 0)})
    return world


def test_each_call_sends_what_botocore_sends_for_it() -> None:
    world = _world()
    ec2, scaling, sns = (Recorder(world, s) for s in ("ec2", "autoscaling", "sns"))
    aws.capacity_reservations(ec2, ["cr-0aaaaaaaaaaaaaaaa", "cr-0bbbbbbbbbbbbbbbb"], NOW)
    assert ec2.sent == [
        _botocore(
            "ec2",
            "DescribeCapacityReservations",
            {"CapacityReservationIds": ["cr-0aaaaaaaaaaaaaaaa", "cr-0bbbbbbbbbbbbbbbb"]},
        )
    ]
    aws.cluster_groups(scaling, "demo", NOW)
    assert scaling.sent == [
        _botocore("autoscaling", "DescribeAutoScalingGroups", {"Filters": [{"Name": n, "Values": [v]}]})
        for n, v in (("tag-key", "kubernetes.io/cluster/demo"), ("tag:eks:cluster-name", "demo"))
    ]
    scaling.sent.clear()
    aws.scheduled_actions(scaling, "g", NOW)
    aws.put_scale_down(scaling, "g", "capacity-block-end", "2026-12-16T10:25:00Z", 18, NOW)
    aws.set_desired(scaling, "g", 18, NOW)
    expected = [
        ("DescribeScheduledActions", {"AutoScalingGroupName": "g"}),
        (
            "PutScheduledUpdateGroupAction",
            {
                "AutoScalingGroupName": "g",
                "ScheduledActionName": "capacity-block-end",
                "StartTime": datetime(2026, 12, 16, 10, 25, tzinfo=timezone.utc),
                "MinSize": 0,
                "MaxSize": 18,
                "DesiredCapacity": 0,
            },
        ),
        ("SetDesiredCapacity", {"AutoScalingGroupName": "g", "DesiredCapacity": 18, "HonorCooldown": False}),
    ]
    assert scaling.sent == [_botocore("autoscaling", op, args) for op, args in expected]
    aws.publish(sns, "arn:aws:sns:us-east-1:111122223333:t", "subject\nwith a line break é", "body", NOW)
    wanted = {
        "TopicArn": "arn:aws:sns:us-east-1:111122223333:t",
        "Subject": "subject with a line break  ",
        "Message": "body",
    }
    assert sns.sent == [_botocore("sns", "Publish", wanted)]


def test_a_reboot_sends_what_botocore_sends_and_the_rehearsals_ec2_records_it() -> None:
    cloud = Cloud()
    ec2 = Recorder(cloud, "ec2")
    aws.reboot_instance(ec2, "i-0123456789abcdef0", NOW)
    assert ec2.sent == [_botocore("ec2", "RebootInstances", {"InstanceIds": ["i-0123456789abcdef0"]})]
    assert cloud.rebooted == ["i-0123456789abcdef0"]


@pytest.mark.parametrize(
    ("service", "operation", "field"),
    [
        ("ec2", "DescribeCapacityReservations", "CapacityReservations"),
        ("autoscaling", "DescribeAutoScalingGroups", "AutoScalingGroups"),
        ("autoscaling", "DescribeScheduledActions", "ScheduledUpdateGroupActions"),
    ],
)
def test_the_test_double_answers_in_the_shape_botocore_parses(service: str, operation: str, field: str) -> None:
    world = _world()
    params = {"CapacityReservationId.1": "cr-0aaaaaaaaaaaaaaaa", "AutoScalingGroupName": "g"}
    import xml.etree.ElementTree as ET

    raw = ET.tostring(world.api(service).call(operation, params, NOW))
    model = get_session().get_service_model(service)
    parser = parsers.create_parser(model.metadata["protocol"])
    parsed = parser.parse(
        {"body": raw, "headers": {}, "status_code": 200}, model.operation_model(operation).output_shape
    )
    assert len(parsed[field]) == 1


@pytest.fixture
def moto_url() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}/"
    server.stop()


def _client(service: str, url: str) -> Any:
    return boto3.client(service, endpoint_url=url, region_name=REGION, aws_access_key_id="k", aws_secret_access_key="s")


def test_auto_scaling_and_sns_on_moto(moto_url: str) -> None:
    ec2 = _client("ec2", moto_url)
    image = ec2.describe_images()["Images"][0]["ImageId"]
    name = f"demo-gb200-{uuid.uuid4().hex[:7]}"
    template = ec2.create_launch_template(
        LaunchTemplateName=name, LaunchTemplateData={"ImageId": image, "InstanceType": "t3.micro"}
    )["LaunchTemplate"]["LaunchTemplateId"]
    scaling_client = _client("autoscaling", moto_url)
    scaling_client.create_auto_scaling_group(
        AutoScalingGroupName=name,
        LaunchTemplate={"LaunchTemplateId": template},
        MinSize=0,
        MaxSize=2,
        DesiredCapacity=0,
        AvailabilityZones=["us-east-1a"],
        Tags=[{"Key": "kubernetes.io/cluster/demo", "Value": "owned", "PropagateAtLaunch": True}],
    )
    scaling = aws.QueryApi("autoscaling", REGION, CREDS, moto_url)
    assert [g["name"] for g in aws.cluster_groups(scaling, "demo", NOW)] == [name]
    aws.set_desired(scaling, name, 2, NOW)
    later = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=2)
    aws.put_scale_down(scaling, name, "capacity-block-end", later.strftime("%Y-%m-%dT%H:%M:%SZ"), 2, NOW)
    group = aws.cluster_groups(scaling, "demo", NOW)[0]
    assert group["desired"] == 2 and group["max"] == 2
    assert aws.scheduled_actions(scaling, name, NOW) == {"capacity-block-end": later.strftime("%Y-%m-%dT%H:%M:%SZ")}
    sns_client, sqs = _client("sns", moto_url), _client("sqs", moto_url)
    topic = sns_client.create_topic(Name="alerts")["TopicArn"]
    queue = sqs.create_queue(QueueName="inbox")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns_client.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn)
    aws.publish(aws.QueryApi("sns", REGION, CREDS, moto_url), topic, "demo: drain call failed", "the fix", NOW)
    body = sqs.receive_message(QueueUrl=queue)["Messages"][0]["Body"]
    assert "the fix" in body and "demo: drain call failed" in body
    with pytest.raises(aws.QueryError) as refused:
        aws.publish(aws.QueryApi("sns", REGION, CREDS, moto_url), f"{topic}-gone", "s", "m", NOW)
    assert refused.value.status == 404 and refused.value.code == "NotFound"


def test_a_reboot_on_moto(moto_url: str) -> None:
    ec2 = _client("ec2", moto_url)
    image = ec2.describe_images()["Images"][0]["ImageId"]
    (launched,) = ec2.run_instances(ImageId=image, InstanceType="t3.micro", MinCount=1, MaxCount=1)["Instances"]
    query = aws.QueryApi("ec2", REGION, CREDS, moto_url)
    aws.reboot_instance(query, launched["InstanceId"], NOW)
    with pytest.raises(aws.QueryError) as refused:
        aws.reboot_instance(query, "i-0000000000000dead", NOW)
    assert refused.value.code == "InvalidInstanceID.NotFound"
