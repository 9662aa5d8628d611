"""Recorded-resource fixtures for the policy tests: one compliant GB200 stack, and ways to break it.

The shapes follow what the engine records for the project's components (camelCase inputs, dependency URNs).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ultraserver.facts.pins import charts
from ultraserver.policy import PlanResource
from ultraserver.resources.node_role import NODE_POLICY_ARNS, assume_role_policy

STACK = "urn:pulumi:dev::ultraserver::"
DELETE = object()
"""Patch value that removes the key."""

RESERVATION_ZONE = "us-east-1-dfw-2a"
NODE_ROLE_ARN = "arn:aws:offline::123456789012:gpu-nodes"
"""The node role's ARN as the offline mocks answer it."""
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}


def urn(type_: str, name: str, parent_type: str | None = None) -> str:
    """A URN as the engine writes it (parent type chained before the resource's own)."""
    chain = f"{parent_type}${type_}" if parent_type else type_
    return f"{STACK}{chain}::{name}"


def res(
    type_: str,
    name: str,
    inputs: Mapping[str, Any],
    deps: Sequence[PlanResource] = (),
    parent: PlanResource | None = None,
) -> PlanResource:
    """A recorded resource depending on the given resources."""
    return PlanResource(
        urn=urn(type_, name, parent.type if parent else None),
        type=type_,
        name=name,
        parent=parent.urn if parent else "",
        inputs=copy.deepcopy(dict(inputs)),
        dependencies=[d.urn for d in deps],
    )


def gb200_interfaces(sg_id: str) -> list[dict[str, Any]]:
    """AWS layout (b): ENA primary on card 0, EFA-only on each odd card (8 EFA devices)."""
    primary = {
        "networkCardIndex": 0,
        "deviceIndex": 0,
        "interfaceType": "interface",
        "securityGroups": [sg_id],
        "deleteOnTermination": "true",
    }
    efa = [
        {
            "networkCardIndex": card,
            "deviceIndex": 0,
            "interfaceType": "efa-only",
            "securityGroups": [sg_id],
            "deleteOnTermination": "true",
        }
        for card in range(1, 17, 2)
    ]
    return [primary, *efa]


def root_volume() -> list[dict[str, Any]]:
    """An encrypted gp3 root volume."""
    return [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "true", "volumeType": "gp3", "volumeSize": 200}}]


def good_stack() -> list[PlanResource]:
    """A compliant stack: cluster, GB200 capacity-block group with its EFA template and SG, system group, charts."""
    vpc = res("aws:ec2/vpc:Vpc", "vpc", {"cidrBlock": "10.0.0.0/16"})
    gpu_subnet = res(
        "aws:ec2/subnet:Subnet",
        "gpu-subnet",
        {"vpcId": "vpc-offline-id", "cidrBlock": "10.0.0.0/20", "availabilityZone": RESERVATION_ZONE},
        [vpc],
    )
    sys_subnet = res(
        "aws:ec2/subnet:Subnet",
        "system-subnet",
        {"vpcId": "vpc-offline-id", "cidrBlock": "10.0.16.0/20", "availabilityZone": "us-east-1a"},
        [vpc],
    )
    key = res("aws:kms/key:Key", "secrets-key", {"enableKeyRotation": True})
    cluster = res(
        "eks:index:Cluster",
        "gb200",
        {
            "version": "1.33",
            "authenticationMode": "API",
            "skipDefaultNodeGroup": True,
            "encryptionConfigKeyArn": "arn:aws:kms:us-east-1:123456789012:key/offline",
            "endpointPublicAccess": True,
            "endpointPrivateAccess": True,
            "publicAccessCidrs": ["203.0.113.0/24"],
            "createOidcProvider": True,
            "enabledClusterLogTypes": ["api", "audit", "authenticator"],
        },
        [vpc, key, sys_subnet],
    )
    role = res("aws:iam/role:Role", "gpu-nodes", {"assumeRolePolicy": json.dumps(assume_role_policy())})
    attachments = [
        res(
            "aws:iam/rolePolicyAttachment:RolePolicyAttachment",
            f"gpu-nodes-{arn.rsplit('/', 1)[-1]}",
            {"role": "gpu-nodes", "policyArn": arn},
            [role],
            parent=None,
        )
        for arn in NODE_POLICY_ARNS
    ]
    sg = res(
        "aws:ec2/securityGroup:SecurityGroup",
        "gpu-efa",
        {"vpcId": "vpc-offline-id", "description": "EFA: all traffic to and from itself"},
        [vpc],
    )
    ingress = res(
        "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule",
        "gpu-efa-self-in",
        {
            "securityGroupId": "gpu-efa-offline-id",
            "referencedSecurityGroupId": "gpu-efa-offline-id",
            "ipProtocol": "-1",
        },
        [sg],
    )
    egress = res(
        "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule",
        "gpu-efa-self-out",
        {
            "securityGroupId": "gpu-efa-offline-id",
            "referencedSecurityGroupId": "gpu-efa-offline-id",
            "ipProtocol": "-1",
        },
        [sg],
    )
    gpu_lt = res(
        "aws:ec2/launchTemplate:LaunchTemplate",
        "gpu",
        {
            "instanceType": "p6e-gb200.36xlarge",
            "imageId": "ami-offline",
            "instanceMarketOptions": {"marketType": "capacity-block"},
            "capacityReservationSpecification": {
                "capacityReservationPreference": "capacity-reservations-only",
                "capacityReservationTarget": {"capacityReservationId": "cr-0123456789abcdef0"},
            },
            "networkInterfaces": gb200_interfaces("gpu-efa-offline-id"),
            "metadataOptions": {"httpTokens": "required", "httpEndpoint": "enabled", "httpPutResponseHopLimit": 2},
            "blockDeviceMappings": root_volume(),
            "userData": "TUlNRS1WZXJzaW9uOiAxLjA=",
            "tags": {
                "ultraserver.io/ami-release": "v20251103",
                "ultraserver.io/ami-ssm-parameter": (
                    "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/nvidia/recommended/image_id"
                ),
            },
        },
        [sg, cluster],
    )
    gpu_ng = res(
        "aws:eks/nodeGroup:NodeGroup",
        "gpu",
        {
            "clusterName": "gb200-offline-id",
            "nodeRoleArn": NODE_ROLE_ARN,
            "capacityType": "CAPACITY_BLOCK",
            "launchTemplate": {"id": "gpu-offline-id", "version": "1"},
            "subnetIds": ["gpu-subnet-offline-id"],
            "scalingConfig": {"desiredSize": 18, "minSize": 0, "maxSize": 18},
            "labels": {"ultraserver.io/role": "gpu"},
            "taints": [GPU_TAINT],
            "tags": {"ultraserver.io/reservation-zone": RESERVATION_ZONE},
        },
        [cluster, gpu_lt, gpu_subnet, role],
    )
    sys_lt = res(
        "aws:ec2/launchTemplate:LaunchTemplate",
        "system",
        {
            "metadataOptions": {"httpTokens": "required", "httpEndpoint": "enabled", "httpPutResponseHopLimit": 2},
            "blockDeviceMappings": root_volume(),
        },
    )
    sys_ng = res(
        "aws:eks/nodeGroup:NodeGroup",
        "system",
        {
            "clusterName": "gb200-offline-id",
            "nodeRoleArn": NODE_ROLE_ARN,
            "amiType": "AL2023_ARM_64_STANDARD",
            "capacityType": "ON_DEMAND",
            "instanceTypes": ["m7g.xlarge"],
            "launchTemplate": {"id": "system-offline-id", "version": "1"},
            "subnetIds": ["system-subnet-offline-id"],
            "scalingConfig": {"desiredSize": 2, "minSize": 2, "maxSize": 4},
        },
        [cluster, sys_lt, sys_subnet, role],
    )
    gpu_operator = res(
        "kubernetes:helm.sh/v3:Release",
        "gpu-operator",
        {
            "chart": "gpu-operator",
            "skipAwait": True,
            "atomic": False,
            # The pin: the policy's minimum follows NVIDIA's support lines, so a hand-written old release would fail.
            "version": charts.pinned(charts.GPU_OPERATOR).version,
            "namespace": "gpu-operator",
            "repositoryOpts": {"repo": "https://helm.ngc.nvidia.com/nvidia"},
            "values": {
                "driver": {"enabled": False},
                "toolkit": {"enabled": False},
                "migManager": {"enabled": False},
                "devicePlugin": {"enabled": True},
                "gfd": {"enabled": True},
                "nfd": {"enabled": True},
            },
        },
        [cluster],
    )
    dra = res(
        "kubernetes:helm.sh/v3:Release",
        "nvidia-dra-driver-gpu",
        {
            "chart": "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu",
            "skipAwait": True,
            "atomic": False,
            "version": "0.4.1",
            "namespace": "nvidia-dra-driver-gpu",
            "values": {
                "nameOverride": "nvidia-dra-driver-gpu",
                "nvidiaDriverRoot": "/",
                "resources": {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}},
            },
        },
        [cluster],
    )
    efa_plugin = res(
        "kubernetes:helm.sh/v3:Release",
        "aws-efa-k8s-device-plugin",
        {
            "chart": "aws-efa-k8s-device-plugin",
            "skipAwait": True,
            "atomic": False,
            "version": "v0.5.14",
            "namespace": "kube-system",
            "repositoryOpts": {"repo": "https://aws.github.io/eks-charts"},
            "values": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]},
        },
        [cluster],
    )
    domain = res(
        "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain",
        "imex",
        {
            "apiVersion": "resource.nvidia.com/v1beta1",
            "kind": "ComputeDomain",
            "spec": {"numNodes": 0, "channel": {"resourceClaimTemplate": {"name": "imex-channel"}}},
        },
        [dra],
    )
    return [
        vpc,
        gpu_subnet,
        sys_subnet,
        key,
        cluster,
        role,
        *attachments,
        sg,
        ingress,
        egress,
        gpu_lt,
        gpu_ng,
        sys_lt,
        sys_ng,
        gpu_operator,
        dra,
        efa_plugin,
        domain,
    ]


def find(resources: Sequence[PlanResource], type_suffix: str, name: str) -> PlanResource:
    """The resource with this name whose type token is, or ends with :<suffix> (e.g. "LaunchTemplate")."""
    matches = [r for r in resources if r.name == name and (r.type == type_suffix or r.type.endswith(f":{type_suffix}"))]
    assert len(matches) == 1, f"{type_suffix} {name}: {len(matches)} matches"
    return matches[0]


def patch(
    resources: Sequence[PlanResource], type_suffix: str, name: str, changes: Mapping[str | tuple[str, ...], Any]
) -> list[PlanResource]:
    """A copy of the stack with one resource's inputs changed at paths: "a.0.b", or a tuple when keys hold dots.

    DELETE as the value removes the key.
    """
    target = find(resources, type_suffix, name)
    inputs = copy.deepcopy(dict(target.inputs))
    for path, value in changes.items():
        *parents, last = path if isinstance(path, tuple) else path.split(".")
        node: Any = inputs
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
        if isinstance(node, list):
            node[int(last)] = value
        elif value is DELETE:
            node.pop(last, None)
        else:
            node[last] = value
    return [replace(r, inputs=inputs) if r is target else r for r in resources]


def without(resources: Sequence[PlanResource], type_suffix: str, name: str) -> list[PlanResource]:
    """A copy of the stack without one resource."""
    target = find(resources, type_suffix, name)
    return [r for r in resources if r is not target]


def add(resources: Sequence[PlanResource], *extra: PlanResource) -> list[PlanResource]:
    """A copy of the stack with more resources."""
    return [*resources, *extra]


def as_seen_by_preview(resources: Sequence[PlanResource], cluster: str = "gb200") -> list[PlanResource]:
    """The stack as `pulumi preview` shows it to a policy pack: the pulumi-eks component arrives without props,
    and its aws:eks/cluster:Cluster child carries the settings."""
    component = find(resources, "eks:index:Cluster", cluster)
    props = component.inputs
    vpc_config = {
        "endpointPublicAccess": props["endpointPublicAccess"],
        "endpointPrivateAccess": props["endpointPrivateAccess"],
        "subnetIds": props.get("privateSubnetIds", ["system-subnet-offline-id"]),
    }
    if "publicAccessCidrs" in props:
        vpc_config["publicAccessCidrs"] = props["publicAccessCidrs"]
    child = res(
        "aws:eks/cluster:Cluster",
        f"{cluster}-eksCluster",
        {
            "version": props["version"],
            "accessConfig": {
                "authenticationMode": props["authenticationMode"],
                "bootstrapClusterCreatorAdminPermissions": True,
            },
            "encryptionConfig": {"provider": {"keyArn": props["encryptionConfigKeyArn"]}, "resources": ["secrets"]},
            "vpcConfig": vpc_config,
            "enabledClusterLogTypes": props["enabledClusterLogTypes"],
        },
        parent=component,
    )
    emptied = replace(component, inputs={})
    return [emptied if r is component else r for r in resources] + [child]
