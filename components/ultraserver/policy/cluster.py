"""Rules for the EKS cluster: version, access, Auto Mode, secrets encryption, public endpoint."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ultraserver.facts.aws.aws_ids import PUBLIC_ENDPOINT_FROM_ANYWHERE
from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.pins.charts import version_at_least
from ultraserver.offline.order import deadlocks
from ultraserver.policy.model import (
    AWS_EKS_CLUSTER,
    CLUSTER_TYPES,
    EKS_CLUSTER,
    PlanResource,
    Rule,
    StackIndex,
    as_bool,
    as_list,
    get_path,
    is_unknown,
)
from ultraserver.problems import Described, Problem

OPEN_CIDRS = ("0.0.0.0/0", "::/0")


@dataclass(frozen=True)
class ClusterView:
    """The settings the rules check, read from either pulumi-eks's component or the aws:eks Cluster."""

    version: Any
    authentication_mode: Any
    auto_mode: bool
    secrets_key_arn: Any
    public_endpoint: bool
    public_cidrs: list[Any]
    open_endpoint_allowed: bool = False
    """The stack opted in to an endpoint open to the internet (allowPublicEndpointFromAnywhere)."""


def cluster_view(resource_type: str, props: Mapping[str, Any]) -> ClusterView | None:
    """Normalise the two cluster shapes (their defaults: public endpoint on, Auto Mode off).

    None for a pulumi-eks component without recorded props: under `pulumi preview` components reach policies
    empty (pulumi/pulumi-policy#140), and its aws:eks/cluster:Cluster child carries the settings instead.
    """
    if resource_type == EKS_CLUSTER and not props:
        return None
    if resource_type == AWS_EKS_CLUSTER:
        resources = as_list(get_path(props, "encryptionConfig", "resources"))
        key = get_path(props, "encryptionConfig", "provider", "keyArn") if "secrets" in resources else None
        return ClusterView(
            version=props.get("version"),
            authentication_mode=get_path(props, "accessConfig", "authenticationMode"),
            auto_mode=as_bool(get_path(props, "computeConfig", "enabled")) is True,
            secrets_key_arn=key,
            public_endpoint=as_bool(get_path(props, "vpcConfig", "endpointPublicAccess")) is not False,
            public_cidrs=as_list(get_path(props, "vpcConfig", "publicAccessCidrs")),
            open_endpoint_allowed=_opted_in(props),
        )
    return ClusterView(
        version=props.get("version"),
        authentication_mode=props.get("authenticationMode"),
        auto_mode=as_bool(get_path(props, "autoMode", "enabled")) is True,
        secrets_key_arn=props.get("encryptionConfigKeyArn"),
        public_endpoint=as_bool(props.get("endpointPublicAccess")) is not False,
        public_cidrs=as_list(props.get("publicAccessCidrs")),
        open_endpoint_allowed=_opted_in(props),
    )


def _opted_in(props: Mapping[str, Any]) -> bool:
    """Whether the cluster carries the stack's allowPublicEndpointFromAnywhere opt-in (facts/aws/aws_ids.py)."""
    tags = props.get("tags")
    return isinstance(tags, Mapping) and tags.get(PUBLIC_ENDPOINT_FROM_ANYWHERE) == "true"


def check_version(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """Kubernetes version at least the minimum (DRA needs 1.33)."""
    view = cluster_view(resource_type, props)
    if view is None or is_unknown(view.version) or version_at_least(view.version, opts["minVersion"]):
        return []
    return [
        Problem(
            "version",
            view.version,
            f">= {opts['minVersion']}: GB200 needs DRA",
            f'set the cluster version to "{opts["minVersion"]}" or later',
        )
    ]


def check_authentication_mode(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """Access entries (API mode) rather than the aws-auth ConfigMap alone."""
    view = cluster_view(resource_type, props)
    allowed = list(opts["allowed"])
    if view is None or is_unknown(view.authentication_mode) or view.authentication_mode in allowed:
        return []
    return [
        Problem(
            "authenticationMode",
            view.authentication_mode,
            ", ".join(allowed),
            'set authentication_mode="API" and grant node and admin access through access entries',
        )
    ]


def check_secrets_encryption(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """Kubernetes secrets encrypted with a KMS key."""
    view = cluster_view(resource_type, props)
    if (
        view is None
        or is_unknown(view.secrets_key_arn)
        or (isinstance(view.secrets_key_arn, str) and view.secrets_key_arn)
    ):
        return []
    return [
        Problem(
            "secrets encryption",
            Described("off"),
            "secrets encrypted with a KMS key",
            "set encryption_config_key_arn to a KMS key ARN (create an aws.kms.Key with rotation enabled)",
        )
    ]


def check_public_endpoint(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """A public API endpoint only with explicit, non-open CIDRs."""
    view = cluster_view(resource_type, props)
    if view is None or not view.public_endpoint:
        return []
    if not view.public_cidrs:
        return [
            Problem(
                "publicAccessCidrs",
                Described("none with the public API endpoint on, so it is open to 0.0.0.0/0"),
                "your admin networks",
                "set public_access_cidrs to your admin networks, or endpoint_public_access=False with "
                "endpoint_private_access=True",
            )
        ]
    open_cidrs = [c for c in view.public_cidrs if c in OPEN_CIDRS]
    if open_cidrs and not view.open_endpoint_allowed:
        return [
            Problem(
                "publicAccessCidrs",
                open_cidrs,
                "only your admin networks, or an open endpoint the stack opted in to",
                "list only your admin networks, or set allowPublicEndpointFromAnywhere: true in the stack if an "
                "open endpoint is intended",
            )
        ]
    return []


def check_no_auto_mode_with_gb200(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """No Auto Mode on a cluster that runs GB200 groups. EKS now ships the NVIDIA DRA driver and DRANET in Auto Mode
    nodes from 1.36 ("Requires Kubernetes version 1.36 or later", EKS device-management page), but no source shows Auto
    Mode launching into a P6e-GB200 Capacity Block with ComputeDomains (docs/health.md, "EKS Auto Mode")."""
    index = StackIndex(resources)
    gb200_clusters = {index.cluster_of(group) for group in index.gpu_groups()}
    out: list[Problem] = []
    for cluster in index.of_type(*CLUSTER_TYPES):
        view = cluster_view(cluster.type, cluster.inputs)
        if index.cluster_key(cluster) in gb200_clusters and view is not None and view.auto_mode:
            out.append(
                Problem(
                    cluster.urn,
                    Described("EKS Auto Mode on, with GB200 node groups"),
                    "Auto Mode off: its nodes do not take the GB200 capacity-block node groups' launch template, and "
                    "no EKS source shows its DRA driver (1.36+) running ComputeDomains on P6e-GB200 Capacity Blocks",
                    "turn Auto Mode off and run GB200 on managed or self-managed node groups",
                )
            )
    return out


def check_node_group_order(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """No node group waits, directly or through a component, for something that needs running nodes."""
    by_urn = {r.urn: r for r in resources}
    first: dict[str, Any] = {}
    for found in deadlocks(resources):
        first.setdefault(found.node_group, found)
    out = []
    for urn, found in first.items():
        path = " -> ".join(by_urn[u].name if u in by_urn else u for u in found.path)
        out.append(
            Problem(
                urn,
                Described(f"this node group waits for {by_urn[found.blocker].name} ({found.reason}), through {path}"),
                "no wait on what needs running nodes: neither would ever become ready (a deadlock that times out "
                "after 20 minutes or more)",
                "make the add-on or release wait for the node group instead; for CoreDNS set "
                "corednsAddonOptions.enabled=false on pulumi-eks and declare the coredns add-on after the system "
                "node group",
            )
        )
    return out


RULES: tuple[Rule, ...] = (
    Rule(
        name="eks-kubernetes-version",
        description="EKS clusters run Kubernetes 1.33 or later (DRA for GB200).",
        fix="Set the cluster version to 1.33 or later.",
        resource_types=CLUSTER_TYPES,
        check_resource=check_version,
        config_schema={"minVersion": {"type": "string", "description": "Lowest allowed Kubernetes version."}},
        defaults={"minVersion": eks_versions.FLOOR_TEXT},
    ),
    Rule(
        name="eks-authentication-mode",
        description="EKS clusters use access entries: authentication mode API or API_AND_CONFIG_MAP.",
        fix='Set authentication_mode="API" and use access entries.',
        resource_types=CLUSTER_TYPES,
        check_resource=check_authentication_mode,
        config_schema={"allowed": {"type": "array", "items": {"type": "string"}, "description": "Allowed modes."}},
        defaults={"allowed": ["API", "API_AND_CONFIG_MAP"]},
    ),
    Rule(
        name="eks-no-auto-mode-with-gb200",
        description="A cluster with GB200 node groups does not use EKS Auto Mode (its nodes are not the GB200 "
        "capacity-block groups; ComputeDomains on Auto Mode's DRA driver are undocumented).",
        fix="Disable Auto Mode; run GB200 on managed or self-managed node groups.",
        check_stack=check_no_auto_mode_with_gb200,
    ),
    Rule(
        name="eks-secrets-encryption",
        description="EKS clusters encrypt Kubernetes secrets with a KMS key.",
        fix="Set encryption_config_key_arn to a KMS key ARN.",
        resource_types=CLUSTER_TYPES,
        check_resource=check_secrets_encryption,
    ),
    Rule(
        name="eks-public-endpoint-cidrs",
        description="A public EKS API endpoint is reachable only from explicit CIDRs, never 0.0.0.0/0.",
        fix="Set public_access_cidrs to admin networks, or make the endpoint private.",
        resource_types=CLUSTER_TYPES,
        check_resource=check_public_endpoint,
    ),
    Rule(
        name="node-groups-before-node-workloads",
        description="No node group waits (directly, transitively or through a component) for what needs running "
        "nodes: the CoreDNS add-on (pulumi-eks's included), Helm releases that wait, Kubernetes workloads and "
        "custom resources.",
        fix="Make the add-on or release depend on the node group; turn off pulumi-eks's CoreDNS and declare the "
        "coredns add-on after the system node group.",
        check_stack=check_node_group_order,
    ),
)
