"""GpuNodeGroup under Pulumi mocks: both modes, the launch template as an EC2 request, schedules, upgrade safety."""

from __future__ import annotations

import base64
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import pulumi
import pytest
import yaml
from ec2_request import create_launch_template_request, request_problems
from test_nodeconfig import parts

from ultraserver import efa
from ultraserver.capacity_block import ReservationWindow
from ultraserver.tags import UPGRADE_SAFE
from ultraserver.errors import ConfigError
from ultraserver.gpu_node_group import GpuNodeGroup, GpuNodeGroupArgs

RECOMMENDED_AMI = "ami-0aaaaaaaaaaaaaaaa"
PINNED_AMI = "ami-0bbbbbbbbbbbbbbbb"
MANAGED_ASG = "eks-gpu-18c9-asg"
START = datetime(2026, 3, 2, 11, 30, tzinfo=timezone.utc)
END = datetime(2026, 3, 9, 11, 30, tzinfo=timezone.utc)
BEFORE = START - timedelta(days=1)


class RecordingMocks(pulumi.runtime.Mocks):
    """Mocks that record every resource and call, and return the outputs the component reads."""

    def __init__(self) -> None:
        self.resources: list[pulumi.runtime.MockResourceArgs] = []
        self.calls: list[pulumi.runtime.MockCallArgs] = []

    def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict]:
        """Record the resource; echo its inputs plus the outputs AWS would add."""
        self.resources.append(args)
        outputs = dict(args.inputs)
        if args.typ == "aws:ec2/launchTemplate:LaunchTemplate":
            outputs["latestVersion"] = 3
        elif args.typ == "aws:eks/nodeGroup:NodeGroup":
            outputs["resources"] = [{"autoscalingGroups": [{"name": MANAGED_ASG}]}]
        elif args.typ in ("aws:iam/role:Role", "aws:iam/instanceProfile:InstanceProfile"):
            kind = "role" if args.typ.endswith("Role") else "instance-profile"
            outputs["arn"] = f"arn:aws:iam::123456789012:{kind}/{args.name}"
        elif args.typ == "aws:autoscaling/group:Group":
            outputs["name"] = f"{args.name}-asg"
        return f"{args.name}-id", outputs

    def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict, list[tuple[str, str]]]:
        """Record the call; SSM lookups return an AMI per parameter."""
        self.calls.append(args)
        if args.token != "aws:ssm/getParameter:getParameter":
            return {}, []
        image = RECOMMENDED_AMI if "/recommended/" in args.args["name"] else PINNED_AMI
        return {"name": args.args["name"], "value": image, "type": "String"}, []


class RecordingMonitor(pulumi.runtime.mocks.MockMonitor):
    """Mock monitor that also records each resource's dependencies (URNs) by resource name and type."""

    def __init__(self, mocks: RecordingMocks) -> None:
        super().__init__(mocks)
        self.recording = mocks
        self.dependencies: dict[tuple[str, str], list[str]] = {}

    def RegisterResource(self, request: Any) -> Any:  # noqa: N802 - gRPC method name
        """Record the dependencies, then register as usual."""
        self.dependencies[(request.type, request.name)] = list(request.dependencies)
        return super().RegisterResource(request)


@pytest.fixture(scope="module")
def monitor() -> RecordingMonitor:
    """Process-wide Pulumi mocks for this module (set_mocks is global, so reset the root first)."""
    recording = RecordingMonitor(RecordingMocks())
    pulumi.runtime.settings.ROOT.set(None)
    pulumi.runtime.set_mocks(recording.recording, project="ultraserver", stack="test", preview=False, monitor=recording)
    return recording


@pytest.fixture
def mocks(monitor: RecordingMonitor) -> RecordingMocks:
    """The recording mocks behind the module's monitor."""
    return monitor.recording


def args(**changes: Any) -> GpuNodeGroupArgs:
    """Arguments the platform would pass, with changes."""
    base: dict[str, Any] = {
        "cluster_name": "gb200",
        "subnet_ids": ["subnet-0aaaaaaaaaaaaaaaa"],
        "security_group_ids": ["sg-0eeeeeeeeeeeeeeee", "sg-0ccccccccccccccc1"],
        "cluster_endpoint": "https://ABC.gr7.us-east-1.eks.amazonaws.com",
        "cluster_certificate_authority": "Y2VydA==",
        "service_cidr": "10.100.0.0/16",
        "capacity_reservation_id": "cr-0123456789abcdef0",
        "labels": {"ultraserver.io/name": "us-a"},
        "tags": {"team": "ml"},
        "now": BEFORE,
    }
    base.update(changes)
    return GpuNodeGroupArgs(**base)


def deploy(mocks: RecordingMocks, build: Callable[[], Any]) -> dict[str, list[pulumi.runtime.MockResourceArgs]]:
    """Run a program under the mocks and return the recorded resources by type."""
    mocks.resources.clear()
    mocks.calls.clear()
    pulumi.runtime.test(build)()
    by_type: dict[str, list[pulumi.runtime.MockResourceArgs]] = {}
    for resource in mocks.resources:
        by_type.setdefault(resource.typ, []).append(resource)
    return by_type


def only(recorded: dict, typ: str) -> dict:
    """Inputs of the single resource of a type."""
    (resource,) = recorded[typ]
    inputs: dict = resource.inputs
    return inputs


def node_config_of(template: dict) -> dict:
    """The NodeConfig inside a recorded launch template's user data."""
    (part,) = parts(base64.b64decode(template["userData"]).decode())
    assert part.get_content_type() == "application/node.eks.aws"
    document: dict = yaml.safe_load(str(part.get_payload()))
    return document


LT = "aws:ec2/launchTemplate:LaunchTemplate"
NG = "aws:eks/nodeGroup:NodeGroup"
ASG = "aws:autoscaling/group:Group"
SCHEDULE = "aws:autoscaling/schedule:Schedule"


def test_managed_mode(mocks: RecordingMocks) -> None:
    recorded = deploy(mocks, lambda: GpuNodeGroup("gpu", args()))
    assert "ultraserver:index:GpuNodeGroup" in recorded
    template, group = only(recorded, LT), only(recorded, NG)
    assert request_problems(template, "gpu") == []
    data = create_launch_template_request(template, "gpu")[0]["LaunchTemplateData"]
    assert data["InstanceType"] == "p6e-gb200.36xlarge"
    assert data["ImageId"] == RECOMMENDED_AMI
    assert data["InstanceMarketOptions"]["MarketType"] == "capacity-block"
    assert data["MetadataOptions"]["HttpTokens"] == "required"
    assert [n["NetworkCardIndex"] for n in data["NetworkInterfaces"]] == [0, 1, 5, 9, 13]
    assert "IamInstanceProfile" not in data  # EKS rejects one in a managed node group template
    (lookup,) = [c for c in mocks.calls if c.token == "aws:ssm/getParameter:getParameter"]
    assert lookup.args["name"].endswith("/1.33/amazon-linux-2023/arm64/nvidia/recommended/image_id")

    assert group["capacityType"] == "CAPACITY_BLOCK"
    assert group["launchTemplate"] == {"id": "gpu-id", "version": "3"}
    assert group["scalingConfig"] == {"minSize": 0, "maxSize": 18, "desiredSize": 18}
    assert group["subnetIds"] == ["subnet-0aaaaaaaaaaaaaaaa"]
    assert group["labels"] == {"ultraserver.io/name": "us-a"}
    assert group["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    for absent in ("instanceTypes", "diskSize", "remoteAccess", "amiType", "releaseVersion", "version"):
        assert absent not in group, absent
    assert UPGRADE_SAFE not in group["tags"]
    role = only(recorded, "aws:iam/role:Role")
    assert group["nodeRoleArn"].endswith(":role/gpu-node")
    assert "ec2.amazonaws.com" in role["assumeRolePolicy"]
    assert "aws:iam/instanceProfile:InstanceProfile" not in recorded
    assert SCHEDULE not in recorded and ASG not in recorded

    spec = node_config_of(template)["spec"]
    assert spec["instance"]["localStorage"]["strategy"] == "RAID0"
    assert spec["cluster"]["name"] == "gb200" and spec["cluster"]["cidr"] == "10.100.0.0/16"
    assert "--register-with-taints=nvidia.com/gpu=true:NoSchedule" in spec["kubelet"]["flags"]


def test_self_managed_mode(mocks: RecordingMocks) -> None:
    recorded = deploy(
        mocks,
        lambda: GpuNodeGroup(
            "gpu",
            args(
                mode="self-managed",
                ultraserver_type="u-p6e-gb200x36",
                interfaces=efa.layout_for("p6e-gb200.36xlarge", "all-odd-cards", None),
            ),
        ),
    )
    assert NG not in recorded
    template, group, entry = only(recorded, LT), only(recorded, ASG), only(recorded, "aws:eks/accessEntry:AccessEntry")
    assert request_problems(template, "gpu") == []
    data = create_launch_template_request(template, "gpu")[0]["LaunchTemplateData"]
    assert data["IamInstanceProfile"] == {"Arn": "arn:aws:iam::123456789012:instance-profile/gpu-node"}
    assert len(data["NetworkInterfaces"]) == 9
    assert all(n["Groups"] == ["sg-0eeeeeeeeeeeeeeee", "sg-0ccccccccccccccc1"] for n in data["NetworkInterfaces"])
    assert entry["type"] == "EC2_LINUX" and entry["principalArn"].endswith(":role/gpu-node")
    assert group["launchTemplate"] == {"id": "gpu-id", "version": "3"}
    assert (group["minSize"], group["maxSize"], group["desiredCapacity"]) == (0, 9, 9)
    assert group["waitForCapacityTimeout"] == "0"
    assert group["vpcZoneIdentifiers"] == ["subnet-0aaaaaaaaaaaaaaaa"]
    assert {"key": "kubernetes.io/cluster/gb200", "value": "owned", "propagateAtLaunch": True} in group["tags"]
    spec = node_config_of(template)["spec"]
    assert spec["cluster"] == {
        "name": "gb200",
        "apiServerEndpoint": "https://ABC.gr7.us-east-1.eks.amazonaws.com",
        "certificateAuthority": "Y2VydA==",
        "cidr": "10.100.0.0/16",
    }
    assert spec["kubelet"]["flags"] == [
        "--node-labels=ultraserver.io/name=us-a",
        "--register-with-taints=nvidia.com/gpu=true:NoSchedule",
    ]


def test_given_role_and_pinned_release(mocks: RecordingMocks) -> None:
    recorded = deploy(
        mocks,
        lambda: GpuNodeGroup(
            "gpu",
            args(
                mode="self-managed",
                node_role_arn="arn:aws:iam::123456789012:role/shared",
                instance_profile_arn="arn:aws:iam::123456789012:instance-profile/shared",
                ami_release="v20251204",
            ),
        ),
    )
    assert "aws:iam/role:Role" not in recorded
    template = only(recorded, LT)
    assert template["imageId"] == PINNED_AMI
    assert template["iamInstanceProfile"] == {"arn": "arn:aws:iam::123456789012:instance-profile/shared"}
    (lookup,) = mocks.calls
    assert lookup.args["name"] == (
        "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/nvidia/"
        "amazon-eks-node-al2023-arm64-nvidia-1.33-v20251204/image_id"
    )


def test_custom_image_skips_the_lookup(mocks: RecordingMocks) -> None:
    recorded = deploy(mocks, lambda: GpuNodeGroup("gpu", args(image_id="ami-0ccccccccccccccc0")))
    assert only(recorded, LT)["imageId"] == "ami-0ccccccccccccccc0"
    assert mocks.calls == []
    assert "amiType" not in only(recorded, NG)


def test_grouped_mode(mocks: RecordingMocks) -> None:
    arn = "arn:aws:resource-groups:us-east-1:123456789012:group/gb200-fleet"
    recorded = deploy(
        mocks,
        lambda: GpuNodeGroup(
            "fleet", args(capacity_reservation_id=None, capacity_reservation_resource_group_arn=arn, ultraserver_count=4)
        ),
    )
    template, group = only(recorded, LT), only(recorded, NG)
    assert request_problems(template, "fleet") == []
    target = template["capacityReservationSpecification"]["capacityReservationTarget"]
    assert target == {"capacityReservationResourceGroupArn": arn}
    assert group["scalingConfig"] == {"minSize": 0, "maxSize": 72, "desiredSize": 72}


@pytest.mark.parametrize("mode", ["managed", "self-managed"])
def test_reservation_window_schedules_on_the_group(mocks: RecordingMocks, mode: str) -> None:
    window = ReservationWindow(START, END, scale_down_lead_minutes=90)
    recorded = deploy(mocks, lambda: GpuNodeGroup("gpu", args(mode=mode, reservation_window=window)))
    expected_group = MANAGED_ASG if mode == "managed" else "gpu-asg"
    schedules = {s.inputs["scheduledActionName"]: s.inputs for s in recorded[SCHEDULE]}
    assert set(schedules) == {"capacity-block-start", "capacity-block-end"}
    up, down = schedules["capacity-block-start"], schedules["capacity-block-end"]
    assert up["autoscalingGroupName"] == down["autoscalingGroupName"] == expected_group
    assert (up["startTime"], up["desiredCapacity"], up["maxSize"]) == ("2026-03-02T11:30:00Z", 18, 18)
    assert (down["startTime"], down["desiredCapacity"], down["minSize"]) == ("2026-03-09T10:00:00Z", 0, 0)
    # Before the block starts the group waits at 0; the start action brings it up.
    sizes = only(recorded, NG)["scalingConfig"] if mode == "managed" else only(recorded, ASG)
    assert sizes.get("desiredSize", sizes.get("desiredCapacity")) == 0


def test_inside_the_window_only_the_scale_down_remains(mocks: RecordingMocks) -> None:
    window = ReservationWindow(START, END)
    recorded = deploy(mocks, lambda: GpuNodeGroup("gpu", args(reservation_window=window, now=START + timedelta(hours=2))))
    assert [s.inputs["scheduledActionName"] for s in recorded[SCHEDULE]] == ["capacity-block-end"]
    assert only(recorded, NG)["scalingConfig"]["desiredSize"] == 18


@pytest.mark.parametrize("mode", ["managed", "self-managed"])
def test_scale_to_zero_for_upgrade(mocks: RecordingMocks, mode: str) -> None:
    window = ReservationWindow(START, END)
    holder: list[GpuNodeGroup] = []
    recorded = deploy(
        mocks,
        lambda: holder.append(
            GpuNodeGroup(
                "gpu",
                args(mode=mode, reservation_window=window, scale_to_zero_for_upgrade=True, now=START + timedelta(hours=1)),
            )
        ),
    )
    assert holder[0].upgrade_safe and holder[0].desired_size == 0
    assert SCHEDULE not in recorded
    # The template must not change (a new version is itself an upgrade), so only the group is tagged.
    template = only(recorded, LT)
    assert UPGRADE_SAFE not in template["tags"]
    assert all(UPGRADE_SAFE not in spec["tags"] for spec in template["tagSpecifications"])
    if mode == "managed":
        group = only(recorded, NG)
        assert group["scalingConfig"] == {"minSize": 0, "maxSize": 18, "desiredSize": 0}
        assert group["tags"][UPGRADE_SAFE] == "true"
    else:
        group = only(recorded, ASG)
        assert (group["minSize"], group["desiredCapacity"]) == (0, 0)
        assert {"key": UPGRADE_SAFE, "value": "true", "propagateAtLaunch": False} in group["tags"]


def test_desired_size_below_full(mocks: RecordingMocks) -> None:
    recorded = deploy(mocks, lambda: GpuNodeGroup("gpu", args(ultraserver_type="u-p6e-gb200x36", desired_size=8)))
    assert only(recorded, NG)["scalingConfig"] == {"minSize": 0, "maxSize": 9, "desiredSize": 8}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"ultraserver_type": "u-p6e-gb200x36", "desired_size": 10}, "desiredSize: 10 must be between 0 and 9"),
        ({"ami_release": "v20250704"}, "amiRelease: 'v20250704' is older than v20251103"),
        ({"mode": "spot"}, "mode: 'spot'"),
        ({"ultraserver_count": 2}, "ultraserverCount: 2 needs grouped mode"),
        ({"capacity_reservation_id": "cr-123"}, "capacityReservationId: 'cr-123'"),
        ({"service_cidr": None}, "serviceCidr: required"),
        ({"ultraserver_type": "u-p6e-gb200x8"}, "ultraserverType: 'u-p6e-gb200x8'"),
        ({"instance_type": "p4d.24xlarge"}, "'p4d.24xlarge' is not in the EFA network-card catalog"),
        ({"kubernetes_version": "1.33.2"}, "kubernetesVersion: '1.33.2'"),
        ({"local_storage": "raid0"}, "localStorage: 'raid0'"),
        ({"capacity_reservation_id": None}, "set exactly one"),
        (
            {"interfaces": [efa.EfaInterface(0, 0, "interface"), efa.EfaInterface(3, 0, "interface")]},
            "efa: card 3 device 0",
        ),
        (
            {"mode": "self-managed", "node_role_arn": "arn:aws:iam::123456789012:role/shared"},
            "instanceProfileArn: required",
        ),
        (
            {"reservation_window": ReservationWindow(START, END, scale_down_lead_minutes=10)},
            "scaleDownLeadMinutes: 10",
        ),
    ],
)
def test_bad_settings_name_the_key(mocks: RecordingMocks, changes: dict, message: str) -> None:
    with pytest.raises(ConfigError) as error:
        deploy(mocks, lambda: GpuNodeGroup("gpu", args(**changes)))
    text = str(error.value)
    assert message in text and text.startswith("nodeGroups.gpu: ")


@pytest.mark.parametrize(("mode", "typ"), [("managed", NG), ("self-managed", "aws:eks/accessEntry:AccessEntry")])
def test_nodes_wait_for_the_role_policies(monitor: RecordingMonitor, mode: str, typ: str) -> None:
    monitor.dependencies.clear()
    deploy(monitor.recording, lambda: GpuNodeGroup("gpu", args(mode=mode)))
    dependencies = monitor.dependencies[(typ, "gpu")]
    attachments = [n for (t, n) in monitor.dependencies if t == "aws:iam/rolePolicyAttachment:RolePolicyAttachment"]
    assert attachments and all(any(urn.endswith(f"::{n}") for urn in dependencies) for n in attachments)
