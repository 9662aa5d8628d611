"""GpuNodeGroup under the offline engine: both modes, the launch template as an EC2 request, schedules, upgrade
safety.
"""

from __future__ import annotations

import base64
import dataclasses
import typing
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.ec2_request import create_launch_template_request, request_problems
from helpers.mime import parts
from helpers.stacks import STACKS
from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.facts import efa
from ultraserver.facts.capacity_blocks import CapacityBlock, ReservationWindow
from ultraserver.facts.tags import UPGRADE_SAFE
from ultraserver.offline import Plan, placeholders, record, run_plan
from ultraserver.problems import ConfigError
from ultraserver.resources import gpu_node_group_args
from ultraserver.resources.cluster import ClusterCoreData
from ultraserver.resources.gpu_node_group import GpuNodeGroup, GpuNodeGroupArgs

START = datetime(2026, 3, 2, 11, 30, tzinfo=timezone.utc)
END = datetime(2026, 3, 9, 11, 30, tzinfo=timezone.utc)
BEFORE = START - timedelta(days=1)
REGION = "us-east-1"
"""The region record() runs in when the config names none."""
SSM_CALL = "aws:ssm/getParameter:getParameter"
NVIDIA_SSM = "/aws/service/eks/optimized-ami/1.35/amazon-linux-2023/arm64/nvidia/"


def offline(typ: str, name: str, key: str) -> Any:
    """An output the offline engine gives a resource beyond its inputs."""
    return placeholders.resource_outputs(typ, name, {}, REGION)[key]


def core(**changes: Any) -> ClusterCoreData:
    """A cluster declared elsewhere, as plain values."""
    base: dict[str, Any] = {
        "name": "gb200",
        "endpoint": "https://ABC.gr7.us-east-1.eks.amazonaws.com",
        "certificate_authority": "Y2VydA==",
        "service_cidr": "10.100.0.0/16",
        "security_group_id": "sg-0ccccccccccccccc1",
    }
    base.update(changes)
    return ClusterCoreData(**base)


def args(**changes: Any) -> GpuNodeGroupArgs:
    """Arguments the platform would pass, with changes."""
    base: dict[str, Any] = {
        "cluster": core(),
        "subnet_ids": ["subnet-0aaaaaaaaaaaaaaaa"],
        "security_group_ids": ["sg-0eeeeeeeeeeeeeeee"],
        "capacity_reservation_id": "cr-0123456789abcdef0",
        "labels": {"ultraserver.io/name": "us-a"},
        "tags": {"team": "ml"},
        "now": BEFORE,
    }
    base.update(changes)
    return GpuNodeGroupArgs(**base)


def only(plan: Plan, typ: str) -> dict:
    """Inputs of the single resource of a type."""
    (resource,) = plan.of_type(typ)
    return resource.inputs


def lookups(plan: Plan) -> list[str]:
    """The SSM parameters the program read."""
    return [c.split("(name=", 1)[1].split(")", 1)[0] for c in plan.placeholders if c.startswith(SSM_CALL)]


def node_config_of(template: dict) -> dict:
    """The NodeConfig inside a recorded launch template's user data."""
    (part,) = [p for p in parts(base64.b64decode(template["userData"]).decode()) if p.get_content_type() != SCRIPT]
    assert part.get_content_type() == "application/node.eks.aws"
    document: dict = yaml.safe_load(str(part.get_payload()))
    return document


LT = "aws:ec2/launchTemplate:LaunchTemplate"
SCRIPT = "text/x-shellscript"
NG = "aws:eks/nodeGroup:NodeGroup"
ASG = "aws:autoscaling/group:Group"
SCHEDULE = "aws:autoscaling/schedule:Schedule"


def test_managed_mode() -> None:
    """EKS picks the pinned AMI (amiType + releaseVersion) and merges its bootstrap: no ImageId, no cluster section."""
    recorded = record(lambda: GpuNodeGroup("gpu", args()))
    assert recorded.of_type("ultraserver:index:GpuNodeGroup")
    template, group = only(recorded, LT), only(recorded, NG)
    assert request_problems(template, "gpu") == []
    data = create_launch_template_request(template, "gpu")[0]["LaunchTemplateData"]
    assert data["InstanceType"] == "p6e-gb200.36xlarge"
    assert "ImageId" not in data
    assert data["InstanceMarketOptions"]["MarketType"] == "capacity-block"
    assert data["MetadataOptions"]["HttpTokens"] == "required"
    assert data["MetadataOptions"]["HttpPutResponseHopLimit"] == 1
    assert [n["NetworkCardIndex"] for n in data["NetworkInterfaces"]] == [0, 1, 5, 9, 13]
    # The cluster security group comes from the cluster object: EKS adds none to a template with its own groups.
    assert all(n["Groups"] == ["sg-0eeeeeeeeeeeeeeee", "sg-0ccccccccccccccc1"] for n in data["NetworkInterfaces"])
    assert "IamInstanceProfile" not in data  # EKS rejects one in a managed node group template
    assert lookups(recorded) == [] and recorded.placeholders == []  # no SSM lookup: nothing moves between runs

    assert group["capacityType"] == "CAPACITY_BLOCK"
    assert (group["amiType"], group["releaseVersion"]) == ("AL2023_ARM_64_NVIDIA", "1.35.6-20260714")
    assert group["launchTemplate"] == {
        "id": placeholders.resource_id("gpu"),
        "version": str(offline(LT, "gpu", "latestVersion")),
    }
    assert group["scalingConfig"] == {"minSize": 0, "maxSize": 18, "desiredSize": 18}
    assert group["subnetIds"] == ["subnet-0aaaaaaaaaaaaaaaa"]
    assert group["labels"] == {"ultraserver.io/name": "us-a"}
    assert group["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    for absent in ("instanceTypes", "diskSize", "remoteAccess", "version"):
        assert absent not in group, absent
    assert UPGRADE_SAFE not in group["tags"]
    role = only(recorded, "aws:iam/role:Role")
    assert group["nodeRoleArn"].endswith(":role/gpu-node")
    assert "ec2.amazonaws.com" in role["assumeRolePolicy"]
    assert recorded.of_type("aws:iam/instanceProfile:InstanceProfile") == []
    assert recorded.of_type(SCHEDULE) == recorded.of_type(ASG) == []

    spec = node_config_of(template)["spec"]
    assert set(spec) == {"instance", "kubelet"}
    assert spec["instance"]["localStorage"]["strategy"] == "RAID0"
    assert "--register-with-taints=nvidia.com/gpu=true:NoSchedule" in spec["kubelet"]["flags"]


@pytest.mark.parametrize(
    ("version", "release"), [("1.33", "1.33.13-20260714"), ("1.34", "1.34.9-20260714"), ("1.35", "1.35.6-20260714")]
)
def test_default_release_follows_the_cluster_minor(version: str, release: str) -> None:
    recorded = record(lambda: GpuNodeGroup("gpu", args(cluster=core(kubernetes_version=version))))
    assert only(recorded, NG)["releaseVersion"] == release


def test_pinned_release_version_is_passed_unchanged() -> None:
    recorded = record(lambda: GpuNodeGroup("gpu", args(release_version="1.35.0-20260204")))
    assert only(recorded, NG)["releaseVersion"] == "1.35.0-20260204"
    assert "imageId" not in only(recorded, LT)


def test_hop_limit_two_on_request() -> None:
    recorded = record(lambda: GpuNodeGroup("gpu", args(imds_hop_limit=2)))
    assert only(recorded, LT)["metadataOptions"]["httpPutResponseHopLimit"] == 2


def test_nodes_wait_for_what_the_cluster_says_they_need() -> None:
    holder: list[object] = []

    def program() -> None:
        import pulumi_aws as aws

        prerequisite = aws.eks.PodIdentityAssociation(
            "cni", cluster_name="gb200", namespace="kube-system", service_account="aws-node", role_arn="arn:r"
        )
        holder.append(GpuNodeGroup("gpu", args(cluster=core(node_prerequisites=[prerequisite]))))

    recorded = record(program)
    (association,) = recorded.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert association.urn in next(r for r in recorded.of_type(NG)).dependencies


def test_self_managed_mode() -> None:
    recorded = record(
        lambda: GpuNodeGroup(
            "gpu",
            args(
                mode="self-managed",
                ultraserver_type="u-p6e-gb200x36",
                interfaces=efa.layout_for("p6e-gb200.36xlarge", "all-odd-cards", None),
            ),
        ),
    )
    assert recorded.of_type(NG) == []
    template, group, entry = only(recorded, LT), only(recorded, ASG), only(recorded, "aws:eks/accessEntry:AccessEntry")
    assert request_problems(template, "gpu") == []
    data = create_launch_template_request(template, "gpu")[0]["LaunchTemplateData"]
    assert data["IamInstanceProfile"] == {"Arn": offline("aws:iam/instanceProfile:InstanceProfile", "gpu-node", "arn")}
    assert len(data["NetworkInterfaces"]) == 9
    assert all(n["Groups"] == ["sg-0eeeeeeeeeeeeeeee", "sg-0ccccccccccccccc1"] for n in data["NetworkInterfaces"])
    assert entry["type"] == "EC2_LINUX" and entry["principalArn"].endswith(":role/gpu-node")
    assert group["launchTemplate"] == {
        "id": placeholders.resource_id("gpu"),
        "version": str(offline(LT, "gpu", "latestVersion")),
    }
    # No reservation window and no explicit desiredSize: created at 0 (EKS capacity-blocks guide, self-managed).
    assert (group["minSize"], group["maxSize"], group["desiredCapacity"]) == (0, 9, 0)
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


def test_given_role_and_pinned_release() -> None:
    """Self-managed nodes boot the pinned release's AMI id, read from its dated SSM parameter (same id every run)."""
    recorded = record(
        lambda: GpuNodeGroup(
            "gpu",
            args(
                mode="self-managed",
                node_role_arn="arn:aws:iam::123456789012:role/shared",
                instance_profile_arn="arn:aws:iam::123456789012:instance-profile/shared",
                release_version="1.35.0-20260204",
            ),
        ),
    )
    assert recorded.of_type("aws:iam/role:Role") == []
    template = only(recorded, LT)
    assert template["imageId"] == placeholders.AMI
    assert template["iamInstanceProfile"] == {"arn": "arn:aws:iam::123456789012:instance-profile/shared"}
    assert lookups(recorded) == [NVIDIA_SSM + "amazon-eks-node-al2023-arm64-nvidia-1.35-v20260204/image_id"]
    assert len(recorded.placeholders) == 1
    assert "recommended" not in recorded.placeholders[0]


@pytest.mark.parametrize("mode", ["managed", "self-managed"])
def test_custom_image_skips_the_lookup(mode: str) -> None:
    recorded = record(
        lambda: GpuNodeGroup("gpu", args(mode=mode, image_id="ami-0ccccccccccccccc0", ami_release="v20251204"))
    )
    template = only(recorded, LT)
    assert template["imageId"] == "ami-0ccccccccccccccc0"
    assert recorded.placeholders == []
    # EKS merges no bootstrap into a template with its own AMI: the NodeConfig names the cluster.
    assert node_config_of(template)["spec"]["cluster"]["name"] == "gb200"
    if mode == "managed":
        assert "amiType" not in only(recorded, NG) and "releaseVersion" not in only(recorded, NG)


def test_self_managed_group_on_a_resource_group() -> None:
    arn = "arn:aws:resource-groups:us-east-1:123456789012:group/gb200-fleet"
    recorded = record(
        lambda: GpuNodeGroup(
            "fleet",
            args(
                mode="self-managed",
                capacity_reservation_id=None,
                capacity_reservation_resource_group_arn=arn,
                ultraserver_count=4,
            ),
        ),
    )
    template, group = only(recorded, LT), only(recorded, ASG)
    assert request_problems(template, "fleet") == []
    target = template["capacityReservationSpecification"]["capacityReservationTarget"]
    assert target == {"capacityReservationResourceGroupArn": arn}
    # No reservation window and no explicit desiredSize: a self-managed group is created at 0 (EKS guide).
    assert (group["minSize"], group["maxSize"], group["desiredCapacity"]) == (0, 72, 0)


@pytest.mark.parametrize("mode", ["managed", "self-managed"])
def test_reservation_window_schedules_on_the_group(mode: str) -> None:
    window = ReservationWindow(START, END, scale_down_lead_minutes=90)
    recorded = record(lambda: GpuNodeGroup("gpu", args(mode=mode, reservation_window=window)))
    # The schedules name the group AWS created: EKS's own autoscaling group, or ours.
    managed_asg = offline(NG, "gpu", "resources")[0]["autoscalingGroups"][0]["name"]
    expected_group = managed_asg if mode == "managed" else offline(ASG, "gpu", "name")
    schedules = {s.inputs["scheduledActionName"]: s.inputs for s in recorded.of_type(SCHEDULE)}
    assert set(schedules) == {"capacity-block-start", "capacity-block-end"}
    up, down = schedules["capacity-block-start"], schedules["capacity-block-end"]
    assert up["autoscalingGroupName"] == down["autoscalingGroupName"] == expected_group
    # The name is an output of the group, so each action waits for the group (and its Auto Scaling group) to exist.
    owner = recorded.of_type(NG if mode == "managed" else ASG)[0].urn
    assert all(s.property_dependencies["autoscalingGroupName"] == [owner] for s in recorded.of_type(SCHEDULE))
    assert (up["startTime"], up["desiredCapacity"], up["maxSize"]) == ("2026-03-02T11:30:00Z", 18, 18)
    assert (down["startTime"], down["desiredCapacity"], down["minSize"]) == ("2026-03-09T10:00:00Z", 0, 0)
    # Before the block starts the group waits at 0; the start action brings it up.
    sizes = only(recorded, NG)["scalingConfig"] if mode == "managed" else only(recorded, ASG)
    assert sizes.get("desiredSize", sizes.get("desiredCapacity")) == 0


def test_inside_the_window_only_the_scale_down_remains() -> None:
    window = ReservationWindow(START, END)
    recorded = record(lambda: GpuNodeGroup("gpu", args(reservation_window=window, now=START + timedelta(hours=2))))
    assert [s.inputs["scheduledActionName"] for s in recorded.of_type(SCHEDULE)] == ["capacity-block-end"]
    assert only(recorded, NG)["scalingConfig"]["desiredSize"] == 18


def test_a_program_whose_every_block_has_ended_is_refused() -> None:
    """EC2 launches nothing into an expired reservation: a program's group on an ended window is an argument error
    (a stack file's is left out with a warning instead, config/expiry.py)."""
    window = ReservationWindow(START, END)
    with pytest.raises(ConfigError) as err:
        args(reservation_window=window, now=END + timedelta(minutes=1))
    (problem,) = [p for p in err.value.items if "expired" in p.allowed]
    assert problem.key == "GpuNodeGroupArgs.reservation_window.end"
    assert problem.value == END.isoformat() and "next block" in problem.fix
    # A window still running at the same moment is fine.
    args(reservation_window=ReservationWindow(START, END + timedelta(days=1)), now=END + timedelta(minutes=1))


@pytest.mark.parametrize("mode", ["managed", "self-managed"])
def test_scale_to_zero_for_upgrade(mode: str) -> None:
    window = ReservationWindow(START, END)
    holder: list[GpuNodeGroup] = []
    recorded = record(
        lambda: holder.append(
            GpuNodeGroup(
                "gpu",
                args(
                    mode=mode, reservation_window=window, scale_to_zero_for_upgrade=True, now=START + timedelta(hours=1)
                ),
            )
        ),
    )
    assert holder[0].upgrade_safe and holder[0].desired_size == 0
    assert recorded.of_type(SCHEDULE) == []
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


def test_desired_size_below_full() -> None:
    recorded = record(lambda: GpuNodeGroup("gpu", args(ultraserver_type="u-p6e-gb200x36", desired_size=8)))
    assert only(recorded, NG)["scalingConfig"] == {"minSize": 0, "maxSize": 9, "desiredSize": 8}


RG_ARN = "arn:aws:resource-groups:us-east-1:123456789012:group/g"


@pytest.mark.parametrize(
    ("changes", "key", "says"),
    [
        ({"ultraserver_type": "u-p6e-gb200x36", "desired_size": 10}, "desired_size", "got 10; allowed: 0 to 9"),
        (
            {"image_id": "ami-0ccccccccccccccc0", "ami_release": "v20250704"},
            "ami_release",
            "got 'v20250704'; allowed: v20251103 or later",
        ),
        ({"ami_release": "v20251204"}, "image_id", "image_id and ami_release together: a custom AMI needs both"),
        ({"image_id": "ami-0ccccccccccccccc0"}, "ami_release", "a custom AMI needs both"),
        ({"release_version": "1.34.2-20260120"}, "release_version", "a release of the cluster's Kubernetes 1.35"),
        ({"release_version": "1.35.5-20250704"}, "release_version", "release 20251103 or later"),
        ({"release_version": "1.35.5-20991231"}, "release_version", "a release already published"),
        ({"cluster": core(kubernetes_version="1.37")}, "release_version", "no default for Kubernetes 1.37"),
        ({"imds_hop_limit": 3}, "imds_hop_limit", "got 3; allowed: 1 or 2"),
        (
            {
                "capacity_reservation_id": None,
                "capacity_reservation_resource_group_arn": RG_ARN,
                "ultraserver_count": 2,
            },
            "capacity_reservation_resource_group_arn",
            "managed node groups target one capacity reservation each",
        ),
        ({"mode": "spot"}, "mode", "got 'spot'; allowed: one of managed, self-managed"),
        ({"ultraserver_count": 2}, "ultraserver_count", "got 2; allowed: 1 with a capacity reservation ID"),
        ({"capacity_reservation_id": "cr-123"}, "capacity_reservation_id", "got 'cr-123'; allowed: a Capacity"),
        ({"ultraserver_type": "u-p6e-gb200x8"}, "ultraserver_type", "got 'u-p6e-gb200x8'; allowed: one of"),
        ({"instance_type": "p4d.24xlarge"}, "instance_type", "allowed: a type of the EFA network-card catalog"),
        ({"cluster": core(kubernetes_version="1.33.2")}, "cluster.kubernetes_version", "got '1.33.2'"),
        ({"local_storage": "raid0"}, "local_storage", "got 'raid0'; allowed: a nodeadm strategy"),
        ({"capacity_reservation_id": None}, "capacity_reservation_id", "fix: set exactly one"),
        ({"capacity_reservation_resource_group_arn": RG_ARN}, "capacity_reservation_id", "fix: set exactly one"),
        (
            {"mode": "self-managed", "capacity_reservation_id": None, "capacity_reservation_resource_group_arn": "g"},
            "capacity_reservation_resource_group_arn",
            "got 'g'; allowed: a resource group ARN",
        ),
        (
            {"interfaces": [efa.EfaInterface(0, 0, "interface"), efa.EfaInterface(3, 0, "interface")]},
            "interfaces",
            "got card 3 device 0: interface; allowed: efa-only on this card",
        ),
        (
            {"mode": "self-managed", "node_role_arn": "arn:aws:iam::123456789012:role/shared"},
            "instance_profile_arn",
            "required with it for self-managed nodes",
        ),
        (
            {"reservation_window": ReservationWindow(START, END, scale_down_lead_minutes=60)},
            "reservation_window.scale_down_lead_minutes",
            "got 60; allowed: 75 or more: EC2 starts terminating an UltraServer block's instances 60 minutes",
        ),
        (
            {
                "capacity_reservation_id": None,
                "capacity_blocks": [CapacityBlock(("cr-0123456789abcdef0",), ReservationWindow(START, END, 74))],
            },
            "capacity_blocks[0].window.scale_down_lead_minutes",
            "got 74; allowed: 75 or more",
        ),
    ],
)
def test_bad_arguments_name_the_python_argument(changes: dict, key: str, says: str) -> None:
    """Each Problem is keyed by the argument a program passed (GpuNodeGroupArgs.<python name>), never a stack key."""
    with pytest.raises(ConfigError) as error:
        record(lambda: GpuNodeGroup("gpu", args(**changes)))
    found = {p.key: str(p) for p in error.value.items}
    assert f"GpuNodeGroupArgs.{key}" in found, found
    assert says in found[f"GpuNodeGroupArgs.{key}"]
    assert not any(c.isupper() for k in found for c in k.removeprefix("GpuNodeGroupArgs")), found


@pytest.mark.parametrize("cluster", [None, "gb200", {"name": "gb200"}])
def test_a_missing_cluster_is_a_config_error(cluster: object) -> None:
    with pytest.raises(
        ConfigError, match="GpuNodeGroupArgs.cluster: got .*; allowed: a Cluster component or its ClusterCoreData"
    ):
        args(cluster=cluster)


def test_arguments_from_settings_are_not_checked_again(monkeypatch: pytest.MonkeyPatch, repo_root: Path) -> None:
    """Stack files are checked by their settings; the component does not run the same rules a second time."""
    calls: list[object] = []
    monkeypatch.setattr(gpu_node_group_args, "args_problems", lambda a: calls.append(a) or [])
    args()
    assert len(calls) == 1
    calls.clear()
    assert run_plan(repo_root, "gb200-multi").of_type(LT)
    assert calls == []


@pytest.mark.parametrize(("mode", "typ"), [("managed", NG), ("self-managed", "aws:eks/accessEntry:AccessEntry")])
def test_nodes_wait_for_the_role_policies(mode: str, typ: str) -> None:
    recorded = record(lambda: GpuNodeGroup("gpu", args(mode=mode)))
    (nodes,) = [r for r in recorded.of_type(typ) if r.name == "gpu"]
    attachments = [r.urn for r in recorded.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")]
    assert attachments and set(attachments) <= set(nodes.dependencies)


def test_group_follows_the_templates_latest_version(monkeypatch: pytest.MonkeyPatch) -> None:
    """The group launches the template's latest version, whatever number EC2 gives it (not a fixed "1")."""
    offline_outputs = placeholders.resource_outputs

    def version_7(typ: str, name: str, inputs: dict[str, Any], region: str) -> dict[str, Any]:
        return {**offline_outputs(typ, name, inputs, region), **({"latestVersion": 7} if typ == LT else {})}

    monkeypatch.setattr(placeholders, "resource_outputs", version_7)
    for mode, group_type in (("managed", NG), ("self-managed", ASG)):
        recorded = record(lambda mode=mode: GpuNodeGroup("gpu", args(mode=mode)))
        assert only(recorded, group_type)["launchTemplate"]["version"] == "7"


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_gpu_template_masks_the_host_imex_service(shipped_plan, stack: str) -> None:  # type: ignore[no-untyped-def]
    gpu_templates = [t for t in shipped_plan(stack).of_type(LT) if "GpuNodeGroup" in t.urn]
    assert gpu_templates
    for template in gpu_templates:
        scripts = [
            p for p in parts(base64.b64decode(template.inputs["userData"]).decode()) if p.get_content_type() == SCRIPT
        ]
        assert len(scripts) == 1 and "systemctl mask nvidia-imex.service" in str(scripts[0].get_payload())


def test_auto_repair_is_off_by_default_and_cautious_when_on() -> None:
    assert "nodeRepairConfig" not in only(record(lambda: GpuNodeGroup("gpu", args())), NG)
    group = only(record(lambda: GpuNodeGroup("gpu", args(auto_repair=True))), NG)
    assert group["nodeRepairConfig"] == {
        "enabled": True,
        "maxParallelNodesRepairedCount": 1,
        "maxUnhealthyNodeThresholdCount": 2,
    }


def test_auto_repair_needs_a_managed_group() -> None:
    with pytest.raises(
        ConfigError, match="GpuNodeGroupArgs.auto_repair: got True; allowed: auto_repair only with mode managed"
    ):
        record(lambda: GpuNodeGroup("gpu", args(auto_repair=True, mode="self-managed")))


def test_arguments_and_settings_share_field_names_and_literal_types() -> None:
    """A settings field and the argument it becomes have one name and, for choices, one Literal type."""
    module = vars(gpu_node_group_args)
    settings = GpuNodeGroupSettings.model_fields
    for name in ("mode", "ultraserver_type", "local_storage"):
        hint = eval(GpuNodeGroupArgs.__annotations__[name], module)  # noqa: S307 -- the module's own annotation
        assert typing.get_origin(hint) is typing.Literal
        assert hint == settings[name].annotation, name
    shared = {f.name for f in dataclasses.fields(GpuNodeGroupArgs)} & set(settings)
    assert {"desired_size", "release_version", "ami_release", "imds_hop_limit", "auto_repair"} <= shared
