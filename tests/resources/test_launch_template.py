"""The GPU launch template, checked as the EC2 CreateLaunchTemplate request it makes."""

from __future__ import annotations

import base64
from datetime import datetime, timezone
from typing import Any

import pulumi
import pytest
from helpers.ec2_request import create_launch_template_request, request_problems
from ultraserver.builders.nodeconfig import ClusterDetails
from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.node_group_spec import node_group_spec
from ultraserver.facts.hardware import efa
from ultraserver.offline import record
from ultraserver.resources.launch_template import NodeImage, gpu_launch_template

GB200 = "p6e-gb200.36xlarge"
NOW = datetime(2026, 3, 1, tzinfo=timezone.utc)
CLUSTER = ClusterDetails("gb200", "https://ABC.gr7.us-east-1.eks.amazonaws.com", "Y2VydA==", "10.100.0.0/16")
LT = "aws:ec2/launchTemplate:LaunchTemplate"


def group(**changes: Any) -> GpuNodeGroupSettings:
    base: dict[str, Any] = {
        "name": "gpu",
        "availability_zone": "us-east-1-dfw-2a",
        "capacity_reservation_ids": ("cr-0123456789abcdef0",),
    }
    return GpuNodeGroupSettings(**{**base, **changes})


def template_of(settings: GpuNodeGroupSettings | None = None, **wiring: Any) -> dict[str, Any]:
    """The recorded inputs of the template of one group's first UltraServer."""
    settings = settings or group()
    spec = node_group_spec(settings, 0, NOW, "1.35")
    given: dict[str, Any] = {
        "image": NodeImage(release_version=spec.release_version, managed=True),
        "cluster": pulumi.Output.from_input(CLUSTER),
        "security_group_ids": ["sg-0aaaaaaaaaaaaaaaa", "sg-0bbbbbbbbbbbbbbbb"],
        "instance_profile_arn": None,
        "kms_key_id": None,
        "tags": {"team": "ml"},
        **wiring,
    }
    plan = record(lambda: gpu_launch_template("gpu", settings, spec, **given, opts=pulumi.ResourceOptions()))
    (template,) = plan.of_type(LT)
    return template.inputs


def data_of(settings: GpuNodeGroupSettings | None = None, **wiring: Any) -> dict:
    """LaunchTemplateData of the EC2 request the template makes, after checking the request is valid."""
    template = template_of(settings, **wiring)
    assert request_problems(template, "gpu") == []
    request, _ = create_launch_template_request(template, "gpu")
    return request["LaunchTemplateData"]


@pytest.mark.parametrize("preset", efa.PRESETS)
def test_every_gb200_preset_makes_a_valid_request(preset: str) -> None:
    data = data_of(group(efaLayout=preset))
    assert [(n["NetworkCardIndex"], n["DeviceIndex"], n["InterfaceType"]) for n in data["NetworkInterfaces"]] == [
        (i.network_card_index, i.device_index, i.interface_type) for i in efa.layout_for(GB200, preset, None)
    ]


def test_capacity_block_settings() -> None:
    data = data_of()
    assert data["InstanceType"] == GB200
    assert data["InstanceMarketOptions"] == {"MarketType": "capacity-block"}
    assert data["CapacityReservationSpecification"] == {
        "CapacityReservationTarget": {"CapacityReservationId": "cr-0123456789abcdef0"}
    }


def test_grouped_mode_targets_the_resource_group() -> None:
    arn = "arn:aws:resource-groups:us-east-1:123456789012:group/gb200-fleet"
    data = data_of(group(capacity_reservation_ids=(), capacity_reservation_resource_group_arn=arn, mode="self-managed"))
    assert data["CapacityReservationSpecification"]["CapacityReservationTarget"] == {
        "CapacityReservationResourceGroupArn": arn
    }


def test_security_defaults() -> None:
    data = data_of()
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


def test_the_settings_root_volume_and_hop_limit_reach_the_template() -> None:
    data = data_of(group(root_volume_size_gib=200, imds_hop_limit=2))
    assert data["BlockDeviceMappings"][0]["Ebs"]["VolumeSize"] == 200
    assert data["MetadataOptions"]["HttpPutResponseHopLimit"] == 2


@pytest.mark.parametrize("managed", [True, False])
def test_user_data_is_base64_and_within_the_ec2_limit(managed: bool) -> None:
    """Nodes EKS bootstraps get no cluster section; the others are told the cluster."""
    data = data_of(image=NodeImage(release_version="1.35.6-20260714", managed=managed))
    decoded = base64.b64decode(data["UserData"]).decode()
    assert "ultraserver.io/ultraserver=gpu" in decoded and "nvidia.com/gpu=true:NoSchedule" in decoded
    assert ("apiServerEndpoint: https://ABC.gr7.us-east-1.eks.amazonaws.com" in decoded) is not managed
    assert len(decoded) <= 16 * 1024


def test_self_managed_extras_and_kms() -> None:
    profile = "arn:aws:iam::123456789012:instance-profile/gpu"
    key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    image = NodeImage(release_version="", managed=False, image_id="ami-0123456789abcdef0", ami_release="v20251204")
    data = data_of(image=image, instance_profile_arn=profile, kms_key_id=key)
    assert data["ImageId"] == "ami-0123456789abcdef0"
    assert data["IamInstanceProfile"] == {"Arn": profile}
    assert data["BlockDeviceMappings"][0]["Ebs"]["KmsKeyId"] == key


def test_tags_on_template_and_launched_resources() -> None:
    request, _ = create_launch_template_request(template_of(), "gpu")
    assert request["TagSpecifications"] == [
        {"ResourceType": "launch-template", "Tags": [{"Key": "team", "Value": "ml"}]}
    ]
    kinds = {spec["ResourceType"] for spec in request["LaunchTemplateData"]["TagSpecifications"]}
    assert kinds == {"instance", "volume", "network-interface"}
    assert "TagSpecifications" not in data_of(tags={})


def test_the_checker_catches_what_ec2_would_refuse() -> None:
    template = template_of()
    template["networkInterfaces"][1]["interfaceType"] = "efa_only"
    template["instanceMarketOptions"]["marketType"] = "capacity_block"
    problems = request_problems(template, "gpu")
    assert any("InterfaceType: 'efa_only'" in p for p in problems)
    assert any("MarketType: 'capacity_block'" in p for p in problems)
