"""Launch template arguments, checked as the EC2 CreateLaunchTemplate request they make."""

from __future__ import annotations

import base64
from dataclasses import replace

import pulumi
import pytest
from helpers.ec2_request import create_launch_template_request, request_problems
from ultraserver.builders.nodeconfig import NodeConfigSpec, user_data
from ultraserver.facts import efa
from ultraserver.resources.launch_template import LaunchTemplateSpec, launch_template_args

GB200 = "p6e-gb200.36xlarge"
SPEC = LaunchTemplateSpec(
    instance_type=GB200,
    interfaces=efa.layout_for(GB200, "one-per-nci-group", None),
    security_group_ids=["sg-0aaaaaaaaaaaaaaaa", "sg-0bbbbbbbbbbbbbbbb"],
    user_data=user_data(NodeConfigSpec()),
    capacity_reservation_id="cr-0123456789abcdef0",
    tags={"team": "ml"},
)


def data_of(spec: LaunchTemplateSpec) -> dict:
    """LaunchTemplateData of the EC2 request the spec makes, after checking the request is valid."""
    args = launch_template_args(spec)
    assert request_problems(args) == []
    request, _ = create_launch_template_request(args)
    return request["LaunchTemplateData"]


@pytest.mark.parametrize("preset", efa.PRESETS)
def test_every_gb200_preset_makes_a_valid_request(preset: str) -> None:
    spec = replace(SPEC, interfaces=efa.layout_for(GB200, preset, None))
    data = data_of(spec)
    assert [(n["NetworkCardIndex"], n["DeviceIndex"], n["InterfaceType"]) for n in data["NetworkInterfaces"]] == [
        (i.network_card_index, i.device_index, i.interface_type) for i in spec.interfaces
    ]


@pytest.mark.parametrize("instance_type", ["p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge"])
def test_other_types_make_valid_requests(instance_type: str) -> None:
    data = data_of(
        replace(SPEC, instance_type=instance_type, interfaces=efa.layout_for(instance_type, "maximum", None))
    )
    assert data["InstanceType"] == instance_type


def test_capacity_block_settings() -> None:
    data = data_of(SPEC)
    assert data["InstanceType"] == GB200
    assert data["InstanceMarketOptions"] == {"MarketType": "capacity-block"}
    assert data["CapacityReservationSpecification"] == {
        "CapacityReservationTarget": {"CapacityReservationId": "cr-0123456789abcdef0"}
    }


def test_grouped_mode_targets_the_resource_group() -> None:
    arn = "arn:aws:resource-groups:us-east-1:123456789012:group/gb200-fleet"
    data = data_of(replace(SPEC, capacity_reservation_id=None, capacity_reservation_resource_group_arn=arn))
    assert data["CapacityReservationSpecification"]["CapacityReservationTarget"] == {
        "CapacityReservationResourceGroupArn": arn
    }


def test_security_defaults() -> None:
    data = data_of(SPEC)
    assert data["MetadataOptions"] == {
        "HttpEndpoint": "enabled",
        "HttpTokens": "required",
        "HttpPutResponseHopLimit": 1,
    }
    (root,) = data["BlockDeviceMappings"]
    assert root["DeviceName"] == "/dev/xvda"
    assert root["Ebs"]["Encrypted"] is True and root["Ebs"]["VolumeType"] == "gp3"
    for interface in data["NetworkInterfaces"]:
        assert interface["Groups"] == ["sg-0aaaaaaaaaaaaaaaa", "sg-0bbbbbbbbbbbbbbbb"]
        assert interface["DeleteOnTermination"] is True
        assert "SubnetId" not in interface  # EKS rejects a subnet in a managed node group template
    assert "IamInstanceProfile" not in data and "ImageId" not in data


def test_user_data_is_base64_and_within_the_ec2_limit() -> None:
    data = data_of(SPEC)
    decoded = base64.b64decode(data["UserData"]).decode()
    assert decoded == SPEC.user_data
    assert len(decoded) <= 16 * 1024


def test_self_managed_extras_and_kms() -> None:
    profile = "arn:aws:iam::123456789012:instance-profile/gpu"
    key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    data = data_of(replace(SPEC, image_id="ami-0123456789abcdef0", iam_instance_profile_arn=profile, kms_key_id=key))
    assert data["ImageId"] == "ami-0123456789abcdef0"
    assert data["IamInstanceProfile"] == {"Arn": profile}
    assert data["BlockDeviceMappings"][0]["Ebs"]["KmsKeyId"] == key


def test_tags_on_template_and_launched_resources() -> None:
    request, _ = create_launch_template_request(launch_template_args(SPEC))
    assert request["TagSpecifications"] == [
        {"ResourceType": "launch-template", "Tags": [{"Key": "team", "Value": "ml"}]}
    ]
    kinds = {spec["ResourceType"] for spec in request["LaunchTemplateData"]["TagSpecifications"]}
    assert kinds == {"instance", "volume", "network-interface"}
    assert "TagSpecifications" not in data_of(replace(SPEC, tags={}))


def test_outputs_pass_through_unchanged() -> None:
    groups = pulumi.Output.from_input(["sg-1"])
    args = launch_template_args(replace(SPEC, security_group_ids=groups))
    assert all(n["security_groups"] is groups for n in args["network_interfaces"])


def test_the_checker_catches_what_ec2_would_refuse() -> None:
    args = launch_template_args(SPEC)
    args["network_interfaces"][1]["interface_type"] = "efa_only"
    args["instance_market_options"]["market_type"] = "capacity_block"
    problems = request_problems(args)
    assert any("InterfaceType: 'efa_only'" in p for p in problems)
    assert any("MarketType: 'capacity_block'" in p for p in problems)
