"""Labelled offline stand-ins for what AWS would return: resource outputs and data-source answers.

Every value says it is a placeholder, so nobody mistakes an offline plan for a deployed stack.
"""

from __future__ import annotations

import base64
import json
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pulumi import _types

from ultraserver.offline import sdk_schema

ACCOUNT = "000000000000"
# The organization the DIY backends (S3, local) report; StackReference names start with it.
ORGANIZATION = "organization"
AMI = "ami-offline-placeholder"
CLUSTER_ENDPOINT = "https://offline-placeholder.eks.amazonaws.com"
CLUSTER_SECURITY_GROUP = "sg-offline-cluster"
SERVICE_CIDR = "172.20.0.0/16"


def resource_id(name: str) -> str:
    """The physical id a resource gets offline."""
    return f"{name}-offline-id"


def arn(region: str, resource_type: str, name: str) -> str:
    """A placeholder ARN for a resource."""
    return f"arn:aws:offline:{region}:{ACCOUNT}:{resource_type.split(':')[-1].lower()}/{name}"


def eks_cluster_state(name: str, region: str) -> dict[str, Any]:
    """What aws.eks.Cluster would report after creation."""
    return {
        "name": name,
        "arn": arn(region, "eks:cluster", name),
        "endpoint": CLUSTER_ENDPOINT,
        "certificateAuthority": {"data": base64.b64encode(b"offline-placeholder-ca").decode()},
        "vpcConfig": {"clusterSecurityGroupId": CLUSTER_SECURITY_GROUP},
        "kubernetesNetworkConfig": {"serviceIpv4Cidr": SERVICE_CIDR},
        "identities": [{"oidcs": [{"issuer": "https://oidc.offline-placeholder"}]}],
    }


def kubeconfig(
    cluster_name: str, region: str = "us-east-1", profile: str | None = None, role_arn: str | None = None
) -> dict[str, Any]:
    """A kubeconfig in the shape pulumi-eks writes (v4.3.0 nodejs/eks/cluster/cluster.ts:203-276, generateKubeconfig):
    the user runs `aws eks get-token`, with `--role` and `--profile` when given, at the placeholder endpoint."""
    token = ["--region", region, "eks", "get-token", "--cluster-name", cluster_name, "--output", "json"]
    token += ["--role", role_arn] if role_arn else []
    token += ["--profile", profile] if profile else []
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kubernetes", "cluster": {"server": CLUSTER_ENDPOINT}}],
        "contexts": [{"name": "aws", "context": {"cluster": "kubernetes", "user": "aws"}}],
        "current-context": "aws",
        "users": [
            {
                "name": "aws",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "aws",
                        "args": token,
                        "env": [
                            {
                                "name": "KUBERNETES_EXEC_INFO",
                                "value": '{"apiVersion": "client.authentication.k8s.io/v1beta1"}',
                            }
                        ],
                    }
                },
            }
        ],
    }


def _get_kubeconfig(args: dict[str, Any], region: str) -> dict[str, Any]:
    """pulumi-eks's Cluster.getKubeconfig (cluster.ts:2324-2335): the receiver's name and the options given."""
    cluster = args.get("__self__") or {}
    config = kubeconfig(str(cluster.get("name", "cluster")), region, args.get("profileName"), args.get("roleArn"))
    return {"result": json.dumps(config)}


def _value(hint: Any, label: str, depth: int = 0) -> Any:
    """A placeholder of an SDK output type: labelled text, zero, false, empty, or an object of its required fields."""
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return typing.get_args(hint)[0]
    if hint is str:
        return f"{label}-offline-placeholder"
    if hint in (int, float, bool):
        return hint()
    if origin in (list, Sequence):
        return []
    if origin in (dict, Mapping):
        return {}
    if isinstance(hint, type) and _types.is_output_type(hint) and depth < 4:
        fields = {
            p.name: _value(p.type, f"{label}-{p.name}", depth + 1) for p in _known(sdk_schema.output_properties(hint))
        }
        return {k: v for k, v in fields.items() if v is not None}
    return None  # a resource reference or an untyped value: nothing generic stands in for it


def _known(properties: tuple[sdk_schema.OutputProperty, ...]) -> list[sdk_schema.OutputProperty]:
    """The properties a placeholder stands in for: all text (ids, names, certificate data), and whatever else the
    SDK says always has a value."""
    return [p for p in properties if p.type is str or not p.optional]


def generated_outputs(resource_type: str, name: str, inputs: dict[str, Any], region: str) -> dict[str, Any]:
    """A labelled value for every output the SDK declares that the inputs do not give: each text output, and every
    other output the SDK says always has a value (not Optional: lists, numbers, nested objects).

    These are what a real deploy knows after creation: ids, ARNs, generated names, endpoints. Without them Pulumi
    serializes an input read from such an output as None and drops it, with its dependency edge.
    """
    cls = sdk_schema.resource_class(resource_type)
    outputs: dict[str, Any] = {}
    for prop in _known(sdk_schema.output_properties(cls)) if cls else ():
        if prop.name not in inputs:
            outputs[prop.name] = region if prop.name == "region" else _value(prop.type, f"{name}-{prop.name}")
    return {k: v for k, v in outputs.items() if v is not None}


def resource_outputs(resource_type: str, name: str, inputs: dict[str, Any], region: str) -> dict[str, Any]:
    """Outputs a resource would have beyond its inputs: the ones with known shapes, then the generated ones."""
    outputs: dict[str, Any] = {"arn": arn(region, resource_type, name)}
    if inputs.get("namePrefix") and not inputs.get("name"):
        # AWS names it prefix + a unique suffix.
        outputs["name"] = f"{inputs['namePrefix']}offline-placeholder"
    if resource_type == "aws:ec2/launchTemplate:LaunchTemplate":
        outputs.update(latestVersion=1, defaultVersion=1)
    elif resource_type == "aws:eks/nodeGroup:NodeGroup":
        outputs.update(
            nodeGroupName=inputs.get("nodeGroupName", name),
            status="ACTIVE",
            resources=[{"autoscalingGroups": [{"name": f"{name}-offline-asg"}]}],
        )
    elif resource_type in (
        "aws:iam/role:Role",
        "aws:iam/instanceProfile:InstanceProfile",
        "aws:autoscaling/group:Group",
    ):
        outputs.setdefault("name", inputs.get("name", f"{name}-offline"))
    elif resource_type == "aws:sqs/queue:Queue":
        outputs["url"] = f"https://sqs.{region}.amazonaws.com/{ACCOUNT}/{name}-offline-placeholder"
    elif resource_type == "aws:kms/key:Key":
        outputs["keyId"] = resource_id(name)
    elif resource_type == "pulumi:pulumi:StackReference":
        # Another stack's exports are unknown offline; a kubeconfig placeholder lets consumers wire a provider.
        outputs["outputs"] = {
            "kubeconfig": kubeconfig(str(inputs.get("name", name)).rsplit("/", 1)[-1], region),
            "clusterName": "offline-placeholder-cluster",
            "nodeTerminationQueueUrl": "https://sqs.offline-placeholder.amazonaws.com/000000000000/queue",
            "reclaimWarningQueueUrl": "https://sqs.offline-placeholder.amazonaws.com/000000000000/warnings",
            "alertTopicArn": f"arn:aws:sns:{region}:{ACCOUNT}:offline-placeholder-alerts",
        }
        outputs["secretOutputNames"] = []
    elif resource_type == "kubernetes:helm.sh/v3:Release":
        outputs["status"] = {"status": "offline-placeholder", "name": inputs.get("name", name)}
    for key, value in generated_outputs(resource_type, name, inputs, region).items():
        outputs.setdefault(key, value)
    return outputs


def _ssm_parameter(args: dict[str, Any]) -> dict[str, Any]:
    name = args.get("name", "")
    value = AMI if name.endswith("image_id") else "offline-placeholder"
    return {
        "name": name,
        "value": value,
        "insecureValue": value,
        "type": "String",
        "version": 1,
        "arn": f"arn:aws:ssm:offline::parameter{name}",
    }


CALLS: dict[str, Callable[[dict[str, Any], str], dict[str, Any]]] = {
    "aws:ssm/getParameter:getParameter": lambda a, region: _ssm_parameter(a),
    "aws:index/getCallerIdentity:getCallerIdentity": lambda a, region: {
        "accountId": ACCOUNT,
        "arn": f"arn:aws:iam::{ACCOUNT}:user/offline",
        "userId": "offline",
    },
    "aws:index/getPartition:getPartition": lambda a, region: {"partition": "aws", "dnsSuffix": "amazonaws.com"},
    # The stack's own aws:region: a real deploy answers with the provider's region.
    "aws:index/getRegion:getRegion": lambda a, region: {"name": region, "region": region, "id": region},
    "eks:index:Cluster/getKubeconfig": _get_kubeconfig,
}


def call_result(token: str, args: dict[str, Any], region: str) -> dict[str, Any] | None:
    """The placeholder answer to a data-source call in the stack's region, or None when there is none."""
    handler = CALLS.get(token)
    return handler(args, region) if handler else None
