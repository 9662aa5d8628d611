"""Where `pulumi up` runs and how it reaches the cluster's API server: the platform, and a separate Kubernetes layer."""

from __future__ import annotations

import ipaddress
from datetime import date

from ultraserver.config.model import Settings, key
from ultraserver.problems import WARNING, Problem

SELF_HOSTED_LABEL = "self-hosted"


def deployer_reach(s: Settings, today: date) -> list[Problem]:
    """Where `pulumi up` runs must reach the API server for the Kubernetes layer."""
    c = s.cluster
    if c.deployer_access == "public-endpoint" and not c.public_access_cidrs:
        return [
            Problem(
                key(s, "cluster.deployerAccess"),
                c.deployer_access,
                "public-endpoint only with endpointPublicAccessCidrs",
                "list the deployer's CIDRs in endpointPublicAccessCidrs, or set deployerAccess: in-vpc",
            )
        ]
    if c.public_access_cidrs:
        return _in_vpc_without_vpc(s) + _hosted_runner_outside(s)
    found = _private_endpoint_reach(s) if s.kubernetes.layer == "same-stack" else _layer_runner_reach(s)
    # GitHub-hosted runners run outside every customer VPC; only a self-hosted runner can sit inside one.
    if s.auto_deploy and SELF_HOSTED_LABEL not in c.deployer_runner_labels:
        found.append(
            Problem(
                key(s, "cluster.deployerRunnerLabels"),
                list(c.deployer_runner_labels),
                f"with a private-only endpoint and autoDeploy, a '{SELF_HOSTED_LABEL}' runner inside the VPC "
                "(GitHub-hosted runners cannot reach a private endpoint)",
                "name your in-VPC runner, e.g. deployerRunnerLabels: [self-hosted, gb200-vpc]",
            )
        )
    return found


def _in_vpc_without_vpc(s: Settings) -> list[Problem]:
    """deployerAccess: in-vpc says `pulumi up` runs inside the VPC; a VPC the stack creates has no runner in it yet,
    whatever public CIDRs are also listed."""
    if s.cluster.deployer_access != "in-vpc" or s.network.existing:
        return []
    return [
        Problem(
            key(s, "cluster.deployerAccess"),
            "in-vpc",
            "in-vpc only in an existing VPC (network.vpcId): no runner is inside the VPC this stack creates",
            "with endpointPublicAccessCidrs listing the deployer, set deployerAccess: public-endpoint (or remove "
            "it); or set network.vpcId (and its subnets) to the VPC your runner is in",
        )
    ]


def _hosted_runner_outside(s: Settings) -> list[Problem]:
    """autoDeploy on a GitHub-hosted runner to a public endpoint limited to CIDRs: those runners' addresses change
    and are in none of them (docs/deploy.md, Reachability), so the deploy job cannot reach the API."""
    c = s.cluster
    hosted = SELF_HOSTED_LABEL not in c.deployer_runner_labels
    if not (s.auto_deploy and hosted) or any(
        ipaddress.ip_network(cidr).prefixlen == 0 for cidr in c.public_access_cidrs
    ):
        return []
    return [
        Problem(
            key(s, "cluster.deployerRunnerLabels"),
            list(c.deployer_runner_labels),
            "with autoDeploy and endpointPublicAccessCidrs, a runner inside those CIDRs: GitHub-hosted runners' "
            "addresses change and are in none of them",
            "run the deploy on a self-hosted runner whose egress is in endpointPublicAccessCidrs, e.g. "
            "deployerRunnerLabels: [self-hosted, gb200-deploy]; or deploy by hand and leave autoDeploy off",
            WARNING,
        )
    ]


def _layer_runner_reach(s: Settings) -> list[Problem]:
    """kubernetes.layer: separate-stack with a private-only endpoint: the runner of the kubernetes-layer/ project
    reaches the API only through the cluster security group, which admits the deployer's sources alone."""
    c = s.cluster
    if c.deployer_cidrs or c.deployer_security_group_ids:
        return []
    return [
        Problem(
            key(s, "cluster.deployerSecurityGroupIds"),
            [],
            "with a private-only endpoint and kubernetes.layer: separate-stack, the source of the runner that "
            "deploys kubernetes-layer/: cluster.deployerSecurityGroupIds or cluster.deployerCidrs (the cluster "
            "security group admits HTTPS only from them)",
            "list the in-VPC runner's security group, e.g. deployerSecurityGroupIds: [sg-0123456789abcdef0], or its "
            "subnet CIDRs in deployerCidrs",
        )
    ]


def _private_endpoint_reach(s: Settings) -> list[Problem]:
    """A private-only endpoint answers HTTPS only from what the cluster security group admits (EKS user guide,
    cluster-endpoint: "private access only"; sec-group-reqs), and no runner is inside a VPC the stack creates."""
    c = s.cluster
    if c.deployer_access == "in-vpc" and not s.network.existing:
        return [
            Problem(
                key(s, "cluster.deployerAccess"),
                c.deployer_access,
                "in-vpc only in an existing VPC (network.vpcId): no runner is inside the VPC this stack creates "
                "at the first pulumi up",
                "set network.vpcId (and its subnets) to the VPC your runner is in; or, for the first deploy, set "
                "cluster.endpointPublicAccessCidrs to the deployer's CIDRs (remove them afterwards); or set "
                "kubernetes.layer: separate-stack and deploy the kubernetes-layer/ project from inside the VPC "
                "afterwards (docs/deploy.md, First deploy, in order)",
            )
        ]
    if c.deployer_access == "in-vpc" and not (c.deployer_cidrs or c.deployer_security_group_ids):
        return [
            Problem(
                key(s, "cluster.deployerAccess"),
                c.deployer_access,
                "in-vpc with the deployer's source: cluster.deployerCidrs or cluster.deployerSecurityGroupIds "
                "(the cluster security group admits HTTPS only from them)",
                "list the runner's security group, e.g. deployerSecurityGroupIds: [sg-0123456789abcdef0], or its "
                "subnet CIDRs in deployerCidrs",
            )
        ]
    if c.deployer_access != "in-vpc":
        return [
            Problem(
                key(s, "kubernetes.layer"),
                s.kubernetes.layer,
                "with a private-only endpoint (no cluster.endpointPublicAccessCidrs), a deployer that reaches it",
                "either list the deployer's CIDRs in cluster.endpointPublicAccessCidrs, or run pulumi up inside an "
                "existing VPC (network.vpcId) with cluster.deployerAccess: in-vpc and the runner's "
                "cluster.deployerSecurityGroupIds or deployerCidrs, or set kubernetes.layer: separate-stack and "
                "deploy the kubernetes-layer/ project from inside the VPC",
            )
        ]
    return []
