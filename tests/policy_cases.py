"""Policy test cases: per rule, stacks that must pass and stacks that must fail, over either compliant base."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace

import pytest

from policy_fixtures import (
    DELETE, RESERVATION_ZONE, add, as_seen_by_preview, find, good_stack, patch, res, without,
)
from sdk_stack import recorded_stack
from ultraserver.policy import RULES, PlanResource

Stack = Callable[[list[PlanResource]], list[PlanResource]]
"""Builds a test stack from a compliant base stack."""


@dataclass(frozen=True)
class Case:
    """A stack and the rule under test; for failures, the resource blamed and a phrase of the message."""

    rule: str
    stack: Stack
    blamed: tuple[str, str] = ("", "")
    says: str = ""

    def __str__(self) -> str:
        return f"{self.rule}:{self.says or 'pass'}"


def lt(changes: dict) -> Stack:
    """The GPU launch template changed."""
    return lambda base: patch(base, "LaunchTemplate", "gpu", changes)


def gpu_ng(changes: dict) -> Stack:
    """The GPU node group changed."""
    return lambda base: patch(base, "NodeGroup", "gpu", changes)


def cluster(changes: dict) -> Stack:
    """The cluster changed."""
    return lambda base: patch(base, "Cluster", "gb200", changes)


def aws_cluster(changes: dict) -> Stack:
    """The stack as a real preview shows it, with pulumi-eks's aws:eks Cluster child changed."""
    return lambda base: patch(as_seen_by_preview(base), "Cluster", "gb200-eksCluster", changes)


def release(name: str, changes: dict) -> Stack:
    """A Helm release changed."""
    return lambda base: patch(base, "Release", name, changes)


def many_node_groups(count: int) -> Stack:
    """The stack plus extra managed node groups on the same cluster."""
    def build(base: list[PlanResource]) -> list[PlanResource]:
        stack = base
        eks = find(stack, "Cluster", "gb200")
        extra = [res("aws:eks/nodeGroup:NodeGroup", f"extra-{i}", {"capacityType": "ON_DEMAND"}, [eks])
                 for i in range(count)]
        return add(stack, *extra)
    return build


def efa_sg_without_egress(base: list[PlanResource]) -> list[PlanResource]:
    """The EFA SG loses its self-referencing egress rule."""
    return without(base, "SecurityGroupEgressRule", "gpu-efa-self-out")


def efa_sg_referencing_other_group(base: list[PlanResource]) -> list[PlanResource]:
    """The ingress rule references a different SG (recorded per-property dependencies tell them apart)."""
    stack = base
    other = res("aws:ec2/securityGroup:SecurityGroup", "other", {"vpcId": "vpc-offline-id"})
    sg = find(stack, "SecurityGroup", "gpu-efa")
    stack = [r for r in stack if r.name != "gpu-efa-self-in"]
    ingress = res("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule", "gpu-efa-self-in",
                  {"securityGroupId": "gpu-efa-offline-id", "referencedSecurityGroupId": "other-offline-id",
                   "ipProtocol": "-1"}, [sg, other])
    return add(stack, other, ingress)


def sg_rules_by_property(base: list[PlanResource], referenced: str) -> list[PlanResource]:
    """The ingress rule's inputs look self-referencing, but per-property dependencies say which SG each names."""
    stack = base
    other = res("aws:ec2/securityGroup:SecurityGroup", "other", {"vpcId": "vpc-offline-id"})
    sg = find(stack, "SecurityGroup", "gpu-efa")
    ingress = find(stack, "SecurityGroupIngressRule", "gpu-efa-self-in")
    target = other if referenced == "other" else sg
    rewired = replace(ingress, dependencies=[sg.urn, other.urn], property_dependencies={
        "securityGroupId": [sg.urn], "referencedSecurityGroupId": [target.urn]})
    return add([rewired if r is ingress else r for r in stack], other)


def legacy_sg_rules(base: list[PlanResource]) -> list[PlanResource]:
    """The EFA SG's self rules as aws.ec2.SecurityGroupRule resources."""
    stack = without(without(base, "SecurityGroupEgressRule", "gpu-efa-self-out"),
                    "SecurityGroupIngressRule", "gpu-efa-self-in")
    sg = find(stack, "SecurityGroup", "gpu-efa")
    return add(stack, *[
        res("aws:ec2/securityGroupRule:SecurityGroupRule", f"gpu-efa-{kind}",
            {"type": kind, "protocol": "-1", "fromPort": 0, "toPort": 0, "self": True,
             "securityGroupId": "gpu-efa-offline-id"}, [sg])
        for kind in ("ingress", "egress")
    ])


def inline_self_sg(base: list[PlanResource]) -> list[PlanResource]:
    """The EFA SG's self rules written inline on the group instead of as rule resources."""
    stack = without(without(base, "SecurityGroupEgressRule", "gpu-efa-self-out"),
                    "SecurityGroupIngressRule", "gpu-efa-self-in")
    return patch(stack, "SecurityGroup", "gpu-efa", {
        "ingress": [{"protocol": "-1", "fromPort": 0, "toPort": 0, "self": True}],
        "egress": [{"protocol": "-1", "fromPort": 0, "toPort": 0, "cidrBlocks": ["0.0.0.0/0"]}],
    })


def extra_attachment(arn: str) -> Stack:
    """The GPU node role gets one more managed policy."""
    def build(base: list[PlanResource]) -> list[PlanResource]:
        stack = base
        role = find(stack, "Role", "gpu-nodes")
        return add(stack, res("aws:iam/rolePolicyAttachment:RolePolicyAttachment", "gpu-nodes-extra",
                              {"role": "gpu-nodes", "policyArn": arn}, [role]))
    return build


def role_policy(actions: list[str]) -> Stack:
    """The GPU node role gets an inline policy."""
    def build(base: list[PlanResource]) -> list[PlanResource]:
        stack = base
        role = find(stack, "Role", "gpu-nodes")
        document = {"Version": "2012-10-17",
                    "Statement": [{"Effect": "Allow", "Action": actions, "Resource": "*"}]}
        return add(stack, res("aws:iam/rolePolicy:RolePolicy", "gpu-nodes-extra",
                              {"role": "gpu-nodes", "policy": json.dumps(document)}, [role]))
    return build


def wrong_zone_subnet(base: list[PlanResource]) -> list[PlanResource]:
    """The GPU node group also gets a subnet in another zone."""
    stack = base
    other = find(stack, "Subnet", "system-subnet")
    group = find(stack, "NodeGroup", "gpu")
    return [replace(r, dependencies=[*r.dependencies, other.urn]) if r is group else r for r in stack]


def auto_mode(base: list[PlanResource]) -> list[PlanResource]:
    """Auto Mode on the GB200 cluster."""
    return patch(base, "Cluster", "gb200", {"autoMode": {"enabled": True}})


def auto_mode_without_gb200(base: list[PlanResource]) -> list[PlanResource]:
    """Auto Mode on a cluster without GB200 groups is not this rule's concern."""
    return without(auto_mode(base), "NodeGroup", "gpu")


def without_efa_plugin(base: list[PlanResource]) -> list[PlanResource]:
    """No EFA device plugin release."""
    return without(base, "Release", "aws-efa-k8s-device-plugin")


def without_efa_anywhere(base: list[PlanResource]) -> list[PlanResource]:
    """No EFA interfaces and no EFA device plugin."""
    stack = without_efa_plugin(base)
    return patch(stack, "LaunchTemplate", "gpu", {"networkInterfaces": [
        {"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface",
         "securityGroups": ["gpu-efa-offline-id"]}]})


def self_managed(base: list[PlanResource]) -> list[PlanResource]:
    """The stack plus a self-managed GB200 capacity-block group: an autoscaling group on its own template."""
    template = find(base, "LaunchTemplate", "gpu")
    subnet = find(base, "Subnet", "gpu-subnet")
    sg = find(base, "SecurityGroup", "gpu-efa")
    own = res(template.type, "gpu-self", template.inputs, [sg])
    group = res("aws:autoscaling/group:Group", "gpu-self", {
        "launchTemplate": {"id": "gpu-self-offline-id", "version": "1"}, "desiredCapacity": 9, "minSize": 0,
        "maxSize": 9, "vpcZoneIdentifiers": ["gpu-subnet-offline-id"],
        "tags": [{"key": "ultraserver.io/reservation-zone", "value": RESERVATION_ZONE, "propagateAtLaunch": True}],
    }, [own, subnet])
    return add(base, own, group)


def self_managed_with(resource: str, changes: dict) -> Stack:
    """The self-managed group (resource "Group") or its template ("LaunchTemplate") changed."""
    return lambda base: patch(self_managed(base), resource, "gpu-self", changes)


def with_pulumi_eks_group(base: list[PlanResource]) -> list[PlanResource]:
    """The stack plus a pulumi-eks ManagedNodeGroup and the aws:eks NodeGroup it creates (one group, not two)."""
    eks = find(base, "Cluster", "gb200")
    component = res("eks:index:ManagedNodeGroup", "extra", {"capacityType": "ON_DEMAND"}, [eks])
    child = res("aws:eks/nodeGroup:NodeGroup", "extra", {"capacityType": "ON_DEMAND"}, [eks], parent=component)
    return add(base, component, child)


def deployed(**before: str) -> dict:
    """Upgrade rule config with the GPU group's deployed settings."""
    return {"capacity-block-upgrade-at-zero": {"deployed": {"gpu": before}}}


PASSING: list[tuple[Case, dict | None]] = [
    *[(Case(rule.name, lambda base: base), None) for rule in RULES],
    (Case("eks-authentication-mode", cluster({"authenticationMode": "API_AND_CONFIG_MAP"})), None),
    (Case("eks-public-endpoint-cidrs", cluster({"endpointPublicAccess": False, "publicAccessCidrs": DELETE})), None),
    (Case("eks-public-endpoint-cidrs", cluster({"publicAccessCidrs": ["0.0.0.0/0"]})),
     {"eks-public-endpoint-cidrs": "disabled"}),
    (Case("eks-no-auto-mode-with-gb200", auto_mode_without_gb200), None),
    (Case("eks-kubernetes-version", cluster({"version": "1.34"})), None),
    *[(Case(rule.name, as_seen_by_preview), None) for rule in RULES],
    *[(Case(rule.name, self_managed), None) for rule in RULES],
    (Case("eks-managed-node-group-quota", with_pulumi_eks_group), {"eks-managed-node-group-quota": {"quota": 3}}),
    (Case("eks-public-endpoint-cidrs", aws_cluster({"vpcConfig.endpointPublicAccess": False,
                                                    "vpcConfig.publicAccessCidrs": DELETE})), None),
    (Case("gb200-ami-release", lt({("tags", "ultraserver.io/ami-release"): "recommended"})), None),
    (Case("gb200-ami-release", gpu_ng({"amiType": "AL2023_ARM_64_NVIDIA", "releaseVersion": "1.33.5-20251120"})),
     None),
    (Case("gb200-ami-variant", lambda base: patch(lt({"imageId": DELETE})(base), "NodeGroup", "gpu",
                                             {"amiType": "AL2023_ARM_64_NVIDIA"})), None),
    (Case("efa-security-group-self-referencing", inline_self_sg), None),
    (Case("efa-security-group-self-referencing", legacy_sg_rules), None),
    (Case("efa-security-group-self-referencing", lambda base: sg_rules_by_property(base, "self")), None),
    (Case("efa-device-plugin-present", without_efa_anywhere), None),
    (Case("capacity-block-upgrade-at-zero", gpu_ng({"scalingConfig.desiredSize": 0})),
     deployed(version="1.32")),
    (Case("capacity-block-upgrade-at-zero", gpu_ng({"version": "1.33"})), deployed(version="1.33")),
    (Case("dra-driver-gpu-allocation-disabled", release("nvidia-dra-driver-gpu", {
        "values.resources.gpus.enabled": True, "values.gpuResourcesEnabledOverride": True})), None),
    (Case("dra-driver-version", lambda base: without(release("nvidia-dra-driver-gpu", {"version": "25.3.2"})(base),
                                                "ComputeDomain", "imex")), None),
    (Case("eks-managed-node-group-quota", many_node_groups(28)), None),
    (Case("node-role-managed-policies", extra_attachment("arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore")),
     {"node-role-managed-policies": {"allowedPolicyArns": [
         "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
         "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
         "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
         "arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"]}}),
    (Case("iam-no-wildcard-actions", role_policy(["ec2:DescribeInstances", "ec2:Describe*"])), None),
    (Case("launch-template-encrypted-root-volume", lt({"blockDeviceMappings": [
        {"deviceName": "/dev/xvda", "ebs": {"encrypted": True, "volumeSize": 200}}]})), None),
]

NG = ("NodeGroup", "gpu")
AWS_EKS = ("Cluster", "gb200-eksCluster")
LT = ("LaunchTemplate", "gpu")
EKS = ("Cluster", "gb200")

FAILING: list[tuple[Case, dict | None]] = [
    (Case("eks-kubernetes-version", cluster({"version": "1.32"}), EKS, ">= 1.33"), None),
    (Case("eks-kubernetes-version", cluster({"version": DELETE}), EKS, "None"), None),
    (Case("eks-authentication-mode", cluster({"authenticationMode": "CONFIG_MAP"}), EKS, "CONFIG_MAP"), None),
    (Case("eks-no-auto-mode-with-gb200", auto_mode, EKS, "Auto Mode"), None),
    (Case("eks-secrets-encryption", cluster({"encryptionConfigKeyArn": DELETE}), EKS, "KMS key"), None),
    (Case("eks-public-endpoint-cidrs", cluster({"publicAccessCidrs": DELETE}), EKS, "without publicAccessCidrs"),
     None),
    (Case("eks-public-endpoint-cidrs", cluster({"publicAccessCidrs": ["0.0.0.0/0"]}), EKS, "0.0.0.0/0"), None),
    (Case("eks-kubernetes-version", aws_cluster({"version": "1.31"}), AWS_EKS, ">= 1.33"), None),
    (Case("eks-authentication-mode", aws_cluster({"accessConfig.authenticationMode": "CONFIG_MAP"}), AWS_EKS,
          "CONFIG_MAP"), None),
    (Case("eks-no-auto-mode-with-gb200", aws_cluster({"computeConfig": {"enabled": True}}), AWS_EKS, "Auto Mode"),
     None),
    (Case("eks-secrets-encryption", aws_cluster({"encryptionConfig.resources": []}), AWS_EKS, "KMS key"), None),
    (Case("eks-public-endpoint-cidrs", aws_cluster({"vpcConfig.publicAccessCidrs": ["::/0"]}), AWS_EKS, "::/0"),
     None),
    (Case("capacity-block-node-group", gpu_ng({"launchTemplate": DELETE}), NG, "custom launch template"), None),
    (Case("capacity-block-node-group", gpu_ng({"capacityType": "ON_DEMAND"}), NG, "CAPACITY_BLOCK"), None),
    (Case("capacity-block-node-group", gpu_ng({"instanceTypes": ["p6e-gb200.36xlarge"]}), NG, "instanceTypes"),
     None),
    (Case("capacity-block-launch-template", lt({"instanceMarketOptions": DELETE}), LT, "marketType"), None),
    (Case("capacity-block-launch-template", lt({"capacityReservationSpecification": DELETE}), LT,
          "reservation target"), None),
    (Case("capacity-block-upgrade-at-zero", gpu_ng({"version": "1.33"}), NG, "version changes"),
     deployed(version="1.32")),
    (Case("capacity-block-upgrade-at-zero", lt({("tags", "ultraserver.io/ami-release"): "v20251201"}), NG,
          "amiRelease changes"), deployed(amiRelease="v20251103")),
    (Case("capacity-block-upgrade-at-zero", gpu_ng({("tags", "ultraserver.io/upgrade-safe"): "true"}), NG,
          "upgrade-safe"), None),
    (Case("eks-managed-node-group-quota", many_node_groups(29), EKS, "quota of 30"), None),
    (Case("eks-managed-node-group-quota", many_node_groups(1), EKS, "quota of 2"),
     {"eks-managed-node-group-quota": {"quota": 2}}),
    (Case("gpu-subnets-in-reservation-zone", wrong_zone_subnet, NG, "system-subnet"), None),
    (Case("gpu-subnets-in-reservation-zone", self_managed_with("Group", {"tags.0.value": "us-east-1b"}),
          ("Group", "gpu-self"), "us-east-1b"), None),
    (Case("eks-managed-node-group-quota", with_pulumi_eks_group, EKS, "quota of 2"),
     {"eks-managed-node-group-quota": {"quota": 2}}),
    (Case("gb200-ami-variant", self_managed_with("LaunchTemplate", {"imageId": DELETE}), ("Group", "gpu-self"),
          "no imageId"), None),
    (Case("capacity-block-launch-template", self_managed_with("LaunchTemplate", {
        "capacityReservationSpecification": DELETE}), ("LaunchTemplate", "gpu-self"), "reservation target"), None),
    (Case("capacity-block-upgrade-at-zero", self_managed_with("Group", {"tags": [
        {"key": "ultraserver.io/upgrade-safe", "value": "true", "propagateAtLaunch": True}]}),
        ("Group", "gpu-self"), "desired size is 9"), None),
    (Case("gb200-ena-primary", lt({"networkInterfaces.0.interfaceType": "efa"}), LT, "'efa' interface"), None),
    (Case("gb200-ena-primary", lt({"networkInterfaces.0.networkCardIndex": 2}), LT, "no interface"), None),
    (Case("gb200-no-efa-only-primary", lt({"networkInterfaces.0.interfaceType": "efa-only"}), LT, "efa-only"),
     None),
    (Case("gb200-network-card-range", lt({"networkInterfaces.1.networkCardIndex": 17}), LT, "[17]"), None),
    (Case("gb200-network-card-range", lt({"networkInterfaces.2.networkCardIndex": 1}), LT, "used twice"), None),
    (Case("gb200-odd-cards-efa-only", lt({"networkInterfaces.3.interfaceType": "efa"}), LT, "[5]"), None),
    (Case("efa-security-group-self-referencing", efa_sg_without_egress, LT, "gpu-efa"), None),
    (Case("efa-security-group-self-referencing", efa_sg_referencing_other_group, LT, "gpu-efa"), None),
    (Case("efa-security-group-self-referencing", lambda base: sg_rules_by_property(base, "other"), LT,
          "gpu-efa"), None),
    (Case("efa-security-group-self-referencing", lt({"networkInterfaces.1.securityGroups": []}), LT,
          "no security groups"), None),
    (Case("launch-template-imdsv2", lt({"metadataOptions.httpTokens": "optional"}), LT, "IMDSv1"), None),
    (Case("launch-template-imdsv2", lambda base: patch(base, "LaunchTemplate", "system",
                                                  {"metadataOptions": DELETE}), ("LaunchTemplate", "system"),
          "None"), None),
    (Case("launch-template-encrypted-root-volume", lt({"blockDeviceMappings": DELETE}), LT, "root device"), None),
    (Case("launch-template-encrypted-root-volume", lt({"blockDeviceMappings.0": {
        "deviceName": "/dev/xvda", "ebs": {"encrypted": "false"}}}), LT, "not encrypted"), None),
    (Case("gb200-ami-variant", lt({("tags", "ultraserver.io/ami-ssm-parameter"):
                                   "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/nvidia/"
                                   "recommended/image_id"}), LT, "not an AL2023 ARM64 NVIDIA path"), None),
    (Case("gb200-ami-variant", lambda base: patch(lt({"imageId": DELETE})(base), "NodeGroup", "gpu",
                                             {"amiType": "AL2023_ARM_64_STANDARD"}), NG, "AL2023_ARM_64_STANDARD"),
     None),
    (Case("gb200-ami-variant", gpu_ng({"amiType": "AL2023_ARM_64_NVIDIA"}), NG, "sets imageId"), None),
    (Case("gb200-ami-release", lt({("tags", "ultraserver.io/ami-release"): "v20250519"}), LT, "v20250519"), None),
    (Case("gb200-ami-release", gpu_ng({"amiType": "AL2023_ARM_64_NVIDIA", "releaseVersion": "1.33.0-20250519"}),
          NG, "releaseVersion"), None),
    (Case("gpu-operator-version", release("gpu-operator", {"version": "v25.3.1"}), ("Release", "gpu-operator"),
          "v25.3.1"), None),
    (Case("gpu-operator-version", release("gpu-operator", {"version": DELETE}), ("Release", "gpu-operator"),
          "None"), None),
    (Case("gpu-operator-host-driver", release("gpu-operator", {"values.driver": DELETE}),
          ("Release", "gpu-operator"), "driver.enabled=false"), None),
    (Case("gpu-operator-host-driver", release("gpu-operator", {"values.toolkit.enabled": True}),
          ("Release", "gpu-operator"), "toolkit.enabled=false"), None),
    (Case("gpu-operator-mig-manager-disabled", release("gpu-operator", {"values.migManager": DELETE}),
          ("Release", "gpu-operator"), "migManager.enabled=false"), None),
    (Case("dra-driver-version", release("nvidia-dra-driver-gpu", {"version": "25.3.2"}),
          ("Release", "nvidia-dra-driver-gpu"), "numNodes 0"), None),
    (Case("dra-driver-version", release("nvidia-dra-driver-gpu", {"version": DELETE}),
          ("Release", "nvidia-dra-driver-gpu"), "Pin an exact version"), None),
    (Case("dra-driver-compute-domains-enabled", release("nvidia-dra-driver-gpu", {
        "values.resources.computeDomains.enabled": False}), ("Release", "nvidia-dra-driver-gpu"),
        "computeDomains.enabled=true"), None),
    (Case("dra-driver-gpu-allocation-disabled", release("nvidia-dra-driver-gpu", {
        "values.resources.gpus": DELETE}), ("Release", "nvidia-dra-driver-gpu"), "gpus.enabled=false"), None),
    (Case("efa-device-plugin-present", without_efa_plugin, LT, "aws-efa-k8s-device-plugin"), None),
    (Case("efa-device-plugin-tolerates-gpu", release("aws-efa-k8s-device-plugin", {"values.tolerations": []}),
          ("Release", "aws-efa-k8s-device-plugin"), "nvidia.com/gpu"), None),
    (Case("efa-device-plugin-tolerates-gpu", release("aws-efa-k8s-device-plugin", {"values.tolerations": [
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}]}),
        ("Release", "aws-efa-k8s-device-plugin"), "nvidia.com/gpu"), None),
    (Case("iam-no-wildcard-actions", role_policy(["s3:*"]), ("RolePolicy", "gpu-nodes-extra"), "s3:*"), None),
    (Case("iam-no-wildcard-actions", role_policy(["*"]), ("RolePolicy", "gpu-nodes-extra"), "['*']"), None),
    (Case("node-role-managed-policies", extra_attachment("arn:aws:iam::aws:policy/AdministratorAccess"),
          ("RolePolicyAttachment", "gpu-nodes-extra"), "AdministratorAccess"), None),
]


SOURCES = {"fixture": good_stack, "recorded": lambda: list(recorded_stack())}


@pytest.fixture(params=sorted(SOURCES))
def base(request: pytest.FixtureRequest) -> list[PlanResource]:
    """The compliant stack, hand-written and as recorded from the SDK program (tests/sdk_stack.py)."""
    return SOURCES[request.param]()
