"""GpuNodeGroup under the offline engine: both modes, the launch template as an EC2 request, schedules, upgrade
safety.
"""

from __future__ import annotations

import base64
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
import yaml
from helpers.ec2_request import create_launch_template_request, request_problems
from helpers.mime import parts
from helpers.preflight import stubbed
from helpers.stacks import STACKS
from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.gpu_rules import group_problems
from ultraserver.facts.aws.aws_ids import UPGRADE_SAFE
from ultraserver.offline import Plan, placeholders, record
from ultraserver.problems import ConfigError
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


WIRING = {"cluster", "subnet_ids", "security_group_ids", "node_role_arn", "instance_profile_arn", "tags", "now"}


def settings(**changes: Any) -> GpuNodeGroupSettings:
    """One UltraServer's group as a program writes it, with changes."""
    base: dict[str, Any] = {
        "name": "gpu",
        "availability_zone": "us-east-1-dfw-2a",
        "capacity_reservation_ids": ("cr-0123456789abcdef0",),
        "labels": {"ultraserver.io/name": "us-a"},
    }
    return GpuNodeGroupSettings(**{**base, **changes})


def window(start: datetime, end: datetime, lead: int = 90) -> dict[str, Any]:
    """A reservationWindow as a program writes it."""
    return {"start": start.isoformat(), "end": end.isoformat(), "scaleDownLeadMinutes": lead}


def args(**changes: Any) -> GpuNodeGroupArgs:
    """Arguments the platform would pass: settings with the changes to settings, wiring with the rest."""
    base: dict[str, Any] = {
        "cluster": core(),
        "subnet_ids": ["subnet-0aaaaaaaaaaaaaaaa"],
        "security_group_ids": ["sg-0eeeeeeeeeeeeeeee"],
        "tags": {"team": "ml"},
        "now": BEFORE,
    }
    base.update({k: v for k, v in changes.items() if k in WIRING})
    return GpuNodeGroupArgs(settings=settings(**{k: v for k, v in changes.items() if k not in WIRING}), **base)


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
    assert group["labels"] == {"ultraserver.io/name": "us-a", "ultraserver.io/ultraserver": "gpu"}
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
                efaLayout="all-odd-cards",
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
        "--node-labels=ultraserver.io/name=us-a,ultraserver.io/ultraserver=gpu",
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
        lambda: GpuNodeGroup("gpu", args(mode=mode, ami_id="ami-0ccccccccccccccc0", ami_release="v20251204"))
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
                capacity_reservation_ids=(),
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
    recorded = record(lambda: GpuNodeGroup("gpu", args(mode=mode, reservationWindow=window(START, END, 90))))
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
    recorded = record(
        lambda: GpuNodeGroup("gpu", args(reservationWindow=window(START, END), now=START + timedelta(hours=2)))
    )
    assert [s.inputs["scheduledActionName"] for s in recorded.of_type(SCHEDULE)] == ["capacity-block-end"]
    assert only(recorded, NG)["scalingConfig"]["desiredSize"] == 18


def test_a_program_whose_every_block_has_ended_is_refused() -> None:
    """EC2 launches nothing into an expired reservation: a program's group on an ended window is an argument error
    (a stack file's is left out with a warning instead, config/expiry.py)."""
    with pytest.raises(ConfigError) as err:
        args(reservationWindow=window(START, END), now=END + timedelta(minutes=1))
    (problem,) = [p for p in err.value.items if "expired" in p.allowed]
    assert problem.key == "GpuNodeGroupArgs.settings.reservationWindow.end"
    assert problem.value == END.isoformat() and "next block" in problem.fix
    # A window still running at the same moment is fine.
    args(reservationWindow=window(START, END + timedelta(days=1)), now=END + timedelta(minutes=1))


@pytest.mark.parametrize("mode", ["managed", "self-managed"])
def test_scale_to_zero_for_upgrade(mode: str) -> None:
    holder: list[GpuNodeGroup] = []
    recorded = record(
        lambda: holder.append(
            GpuNodeGroup(
                "gpu",
                args(
                    mode=mode,
                    reservationWindow=window(START, END),
                    scale_to_zero_for_upgrade=True,
                    now=START + timedelta(hours=1),
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
        ({"ultraserver_type": "u-p6e-gb200x36", "desired_size": 10}, "settings.desiredSize", "got 10; allowed: 0 to 9"),
        (
            {"ami_id": "ami-0ccccccccccccccc0", "ami_release": "v20250704"},
            "settings.amiRelease",
            "got 'v20250704'; allowed: v20251103 or later",
        ),
        ({"ami_release": "v20251204"}, "settings.amiRelease", "amiRelease only with amiId"),
        ({"ami_id": "ami-0ccccccccccccccc0"}, "settings.amiId", "a pinned AMI together with amiRelease"),
        (
            {"release_version": "1.34.2-20260120"},
            "settings.releaseVersion",
            "a release of the cluster's Kubernetes 1.35",
        ),
        ({"release_version": "1.35.5-20250704"}, "settings.releaseVersion", "release 20251103 or later"),
        ({"release_version": "1.35.5-20991231"}, "settings.releaseVersion", "a release already published"),
        ({"cluster": core(kubernetes_version="1.33.2")}, "cluster.kubernetes_version", "got '1.33.2'"),
        (
            {"capacity_reservation_ids": (), "capacity_reservation_resource_group_arn": RG_ARN},
            "settings.capacityReservationResourceGroupArn",
            "resource-group targets only with mode: self-managed",
        ),
        ({"capacity_reservation_ids": ()}, "settings.capacityReservationIds", "not both and not neither"),
        (
            {"efaLayout": [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}] * 2},
            "settings.efaLayout",
            "allowed:",
        ),
        (
            {"mode": "self-managed", "node_role_arn": "arn:aws:iam::123456789012:role/shared"},
            "instance_profile_arn",
            "required with it for self-managed nodes",
        ),
        ({"auto_repair": True, "mode": "self-managed"}, "settings.autoRepair", "autoRepair only on managed groups"),
    ],
)
def test_the_stack_files_group_rules_check_a_programs_settings(changes: dict, key: str, says: str) -> None:
    """The rules a stack file's gpuNodeGroups[] entry passes are the ones a program's settings pass, keyed under the
    argument (GpuNodeGroupArgs.settings.<key>)."""
    with pytest.raises(ConfigError) as error:
        record(lambda: GpuNodeGroup("gpu", args(**changes)))
    found = {p.key: str(p) for p in error.value.items}
    assert f"GpuNodeGroupArgs.{key}" in found, found
    assert says in found[f"GpuNodeGroupArgs.{key}"]


@pytest.mark.parametrize(
    "changes",
    [
        {"reservationWindow": window(START, END, lead=64)},
        {
            "capacity_reservation_ids": (),
            "capacityBlocks": [{"capacityReservationIds": ["cr-0123456789abcdef0"], **window(START, END, lead=64)}],
        },
    ],
)
def test_a_programs_scale_down_inside_the_reclaim_is_refused(changes: dict) -> None:
    """A program's window gets the stack file's floor: EC2 reclaims an UltraServer block 60 minutes before its end,
    so a scale-down 64 minutes before leaves too little time for the scheduled action to run."""
    with pytest.raises(ValueError, match="65"):
        settings(**changes)


def test_one_group_check_serves_the_stack_file_and_the_program() -> None:
    """A root volume of 1 GiB is refused from a program as from a stack file (the model's bound, 50 GiB), and a
    rule's finding is the same text on both paths."""
    with pytest.raises(ValueError, match="root_volume_size_gib"):
        settings(root_volume_size_gib=1)
    group = settings(ultraserver_type="u-p6e-gb200x36", desired_size=10, reservationWindow=window(START, END))
    (stack,) = group_problems(group, "ultraserver-eks:gpuNodeGroups[0]", "1.35", BEFORE.date())
    with pytest.raises(ConfigError) as error:
        GpuNodeGroupArgs(settings=group, cluster=core(), subnet_ids=["subnet-0a"], now=BEFORE)
    (program,) = error.value.items
    assert (
        program.key
        == "GpuNodeGroupArgs.settings.desiredSize"
        == stack.key.replace("ultraserver-eks:gpuNodeGroups[0]", "GpuNodeGroupArgs.settings")
    )
    assert program.finding() == stack.finding()


@pytest.mark.parametrize(
    ("changes", "key", "allowed"),
    [
        ({"subnet_ids": "subnet-0aaaaaaaaaaaaaaaa"}, "subnet_ids", "a list of strings"),
        ({"security_group_ids": "sg-0eeeeeeeeeeeeeeee"}, "security_group_ids", "a list of strings"),
        ({"tags": ["team"]}, "tags", "a mapping of strings to strings"),
        ({"settings": {"name": "gpu"}}, "settings", "GpuNodeGroupSettings"),
        ({"cluster": "gb200"}, "cluster", "Cluster or ClusterCoreData"),
        ({"cluster": None}, "cluster", "Cluster or ClusterCoreData"),
        ({"now": "2026-03-01"}, "now", "datetime"),
        ({"position": "0"}, "position", "a whole number"),
    ],
)
def test_a_wrong_argument_type_names_the_argument(changes: dict, key: str, allowed: str) -> None:
    """Never coerced: a string where a list of subnets belongs is refused, not 24 one-character subnets."""
    given = {"settings": settings(), "cluster": core(), "subnet_ids": ["subnet-0aaaaaaaaaaaaaaaa"], "now": BEFORE}
    with pytest.raises(ConfigError) as error:
        GpuNodeGroupArgs(**{**given, **changes})
    (problem,) = error.value.items
    assert problem.key == f"GpuNodeGroupArgs.{key}"
    assert allowed in problem.allowed


@pytest.mark.parametrize(
    ("old", "says"),
    [
        ("capacity_reservation_id", "capacity_reservation_ids=[<cr-...>]"),
        ("root_volume_size_gib", "settings=GpuNodeGroupSettings(...): write root_volume_size_gib="),
        ("instance_type", "the instance type follows settings' ultraserver_type"),
    ],
)
def test_an_earlier_programs_argument_says_where_it_went(old: str, says: str) -> None:
    with pytest.raises(ConfigError) as error:
        GpuNodeGroupArgs(cluster=core(), subnet_ids=[], **{old: "x"})  # type: ignore[call-arg]
    (problem,) = error.value.items
    assert problem.key == f"GpuNodeGroupArgs.{old}" and says in problem.fix


def test_a_missing_argument_is_named() -> None:
    with pytest.raises(ConfigError, match="missing a required argument: 'settings'"):
        GpuNodeGroupArgs(cluster=core(), subnet_ids=[])  # type: ignore[call-arg]


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
    overrides = group["nodeRepairConfig"].pop("nodeRepairConfigOverrides")
    assert group["nodeRepairConfig"] == {
        "enabled": True,
        "maxParallelNodesRepairedCount": 1,
        "maxUnhealthyNodeThresholdCount": 2,
    }
    actions = {o["nodeUnhealthyReason"]: o["repairAction"] for o in overrides}
    assert {o["nodeMonitoringCondition"] for o in overrides} == {"AcceleratedHardwareReady"}
    # The node monitoring agent's list (node-health-nma.adoc): EKS reboots 13..95; replaces the rest, which inside a
    # Capacity Block finds no free slot: GSP faults reboot instead, the others are left to a person.
    assert {actions[f"NvidiaXID{code}Error"] for code in (13, 31, 48, 63, 64, 94, 95, 119, 120)} == {"Reboot"}
    assert {actions[f"NvidiaXID{code}Error"] for code in (74, 79, 121, 140)} == {"NoAction"}
    assert actions["NvidiaNVLinkError"] == actions["NvidiaDoubleBitError"] == "NoAction"
    assert "Replace" not in actions.values() and {o["minRepairWaitTimeMins"] for o in overrides} == {10}


def test_the_repair_overrides_are_a_request_botocore_accepts() -> None:
    group = only(record(lambda: GpuNodeGroup("gpu", args(auto_repair=True))), NG)
    config = group["nodeRepairConfig"]
    eks, stub = stubbed("eks")
    request = {"clusterName": "c", "nodegroupName": "gpu", "nodeRepairConfig": config}
    stub.add_response("update_nodegroup_config", {"update": {"id": "u-1"}}, request)
    eks.update_nodegroup_config(**request)  # botocore validates the override shape and repairAction enum
