"""The compliant fixture stack written as a Pulumi program with the real SDK classes and project components.

Recording it (tests/recorder.py) shows that the hand-written fixtures have the shapes the engine records.
"""

from __future__ import annotations

import base64
import functools

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from policy_fixtures import RESERVATION_ZONE, gb200_interfaces
from recorder import record
from ultraserver.node_role import NodeRole, NodeRoleArgs
from ultraserver.policy import PlanResource

NVIDIA_SSM = "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/nvidia/recommended/image_id"
NGC = "https://helm.ngc.nvidia.com/nvidia"
RESERVATION_TARGET = aws.ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs


def root_volume() -> list[aws.ec2.LaunchTemplateBlockDeviceMappingArgs]:
    """An encrypted gp3 root volume."""
    return [aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
        device_name="/dev/xvda",
        ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(encrypted="true", volume_type="gp3", volume_size=200))]


def imdsv2() -> aws.ec2.LaunchTemplateMetadataOptionsArgs:
    """IMDSv2 only, reachable from pods."""
    return aws.ec2.LaunchTemplateMetadataOptionsArgs(http_tokens="required", http_endpoint="enabled",
                                                     http_put_response_hop_limit=2)


def program() -> None:
    """The compliant GB200 stack."""
    vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
    gpu_subnet = aws.ec2.Subnet("gpu-subnet", vpc_id=vpc.id, cidr_block="10.0.0.0/20",
                                availability_zone=RESERVATION_ZONE)
    sys_subnet = aws.ec2.Subnet("system-subnet", vpc_id=vpc.id, cidr_block="10.0.16.0/20",
                                availability_zone="us-east-1a")
    key = aws.kms.Key("secrets-key", enable_key_rotation=True)
    cluster = eks.Cluster(
        "gb200", version="1.33", authentication_mode=eks.AuthenticationMode.API, skip_default_node_group=True,
        vpc_id=vpc.id, subnet_ids=[sys_subnet.id],
        encryption_config_key_arn="arn:aws:kms:us-east-1:123456789012:key/offline",
        endpoint_public_access=True, endpoint_private_access=True, public_access_cidrs=["203.0.113.0/24"],
        create_oidc_provider=True, enabled_cluster_log_types=["api", "audit", "authenticator"],
        opts=pulumi.ResourceOptions(depends_on=[key]),
    )
    role = NodeRole("gpu-nodes", NodeRoleArgs())
    sg = aws.ec2.SecurityGroup("gpu-efa", vpc_id=vpc.id, description="EFA: all traffic to and from itself")
    aws.vpc.SecurityGroupIngressRule("gpu-efa-self-in", security_group_id=sg.id,
                                     referenced_security_group_id=sg.id, ip_protocol="-1")
    aws.vpc.SecurityGroupEgressRule("gpu-efa-self-out", security_group_id=sg.id,
                                    referenced_security_group_id=sg.id, ip_protocol="-1")
    image = aws.ssm.get_parameter_output(name=NVIDIA_SSM).value
    nics = [aws.ec2.LaunchTemplateNetworkInterfaceArgs(
        network_card_index=n["networkCardIndex"], device_index=n["deviceIndex"], interface_type=n["interfaceType"],
        security_groups=[sg.id], delete_on_termination="true") for n in gb200_interfaces("")]
    gpu_lt = aws.ec2.LaunchTemplate(
        "gpu", instance_type="p6e-gb200.36xlarge", image_id=image,
        instance_market_options=aws.ec2.LaunchTemplateInstanceMarketOptionsArgs(market_type="capacity-block"),
        capacity_reservation_specification=aws.ec2.LaunchTemplateCapacityReservationSpecificationArgs(
            capacity_reservation_preference="capacity-reservations-only",
            capacity_reservation_target=RESERVATION_TARGET(capacity_reservation_id="cr-0123456789abcdef0")),
        network_interfaces=nics, metadata_options=imdsv2(), block_device_mappings=root_volume(),
        user_data=base64.b64encode(b"MIME-Version: 1.0").decode(),
        tags={"ultraserver.io/ami-release": "v20251103", "ultraserver.io/ami-ssm-parameter": NVIDIA_SSM},
        opts=pulumi.ResourceOptions(depends_on=[cluster]),
    )
    aws.eks.NodeGroup(
        "gpu", cluster_name="gb200-offline-id", node_role_arn=role.role.arn, capacity_type="CAPACITY_BLOCK",
        launch_template=aws.eks.NodeGroupLaunchTemplateArgs(id=gpu_lt.id, version="1"),
        subnet_ids=[gpu_subnet.id],
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=18, min_size=0, max_size=18),
        labels={"ultraserver.io/role": "gpu"},
        taints=[aws.eks.NodeGroupTaintArgs(key="nvidia.com/gpu", value="present", effect="NO_SCHEDULE")],
        tags={"ultraserver.io/reservation-zone": RESERVATION_ZONE},
        opts=pulumi.ResourceOptions(depends_on=[cluster]),
    )
    sys_lt = aws.ec2.LaunchTemplate("system", metadata_options=imdsv2(), block_device_mappings=root_volume())
    aws.eks.NodeGroup(
        "system", cluster_name="gb200-offline-id", node_role_arn=role.role.arn, ami_type="AL2023_ARM_64_STANDARD",
        capacity_type="ON_DEMAND", instance_types=["m7g.xlarge"],
        launch_template=aws.eks.NodeGroupLaunchTemplateArgs(id=sys_lt.id, version="1"), subnet_ids=[sys_subnet.id],
        scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=2, min_size=2, max_size=4),
        opts=pulumi.ResourceOptions(depends_on=[cluster]),
    )
    after_cluster = pulumi.ResourceOptions(depends_on=[cluster])
    gpu_operator = k8s.helm.v3.Release(
        "gpu-operator", chart="gpu-operator", version="v25.3.4", namespace="gpu-operator",
        repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=NGC),
        values={"driver": {"enabled": False}, "toolkit": {"enabled": False}, "migManager": {"enabled": False},
                "devicePlugin": {"enabled": True}, "gfd": {"enabled": True}, "nfd": {"enabled": True}},
        opts=after_cluster,
    )
    dra = k8s.helm.v3.Release(
        "nvidia-dra-driver-gpu", chart="nvidia-dra-driver-gpu", version="25.8.0", namespace="nvidia-dra-driver-gpu",
        repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=NGC),
        values={"nvidiaDriverRoot": "/",
                "resources": {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}}},
        opts=pulumi.ResourceOptions(depends_on=[cluster, gpu_operator]),
    )
    k8s.helm.v3.Release(
        "aws-efa-k8s-device-plugin", chart="aws-efa-k8s-device-plugin", version="v0.5.14", namespace="kube-system",
        repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo="https://aws.github.io/eks-charts"),
        values={"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]},
        opts=after_cluster,
    )
    k8s.apiextensions.CustomResource(
        "imex", api_version="resource.nvidia.com/v1beta1", kind="ComputeDomain",
        spec={"numNodes": 0, "channel": {"resourceClaimTemplate": {"name": "imex-channel"}}},
        opts=pulumi.ResourceOptions(depends_on=[dra]),
    )


@functools.cache
def recorded_stack() -> tuple[PlanResource, ...]:
    """The program's resources as recorded under mocks (recorded once per test session)."""
    return tuple(record(program))
