"""The EKS cluster's settings: its control plane, its managed add-ons and the CPU node group its controllers run on."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    StringConstraints,
    ValidationInfo,
    field_validator,
)

from ultraserver.config.argument_rules import CLUSTER_NAME
from ultraserver.config.fields import (
    AddonVersion,
    Cidr,
    Model,
    PrincipalArn,
    SecurityGroupId,
    Tags,
    kubernetes_version_check,
    pattern,
)
from ultraserver.facts.aws import control_plane, limits
from ultraserver.facts.hardware import instances
from ultraserver.facts.kubernetes import eks_versions

# A GitHub Actions runner label (letters, digits, . _ : -).
RUNNER_LABEL = r"^[A-Za-z0-9_.:-]+$"
LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")


class ClusterSettings(Model):
    """The EKS control plane."""

    name: Annotated[
        str,
        StringConstraints(strict=True, pattern=CLUSTER_NAME, max_length=limits.EKS_CLUSTER_NAME.maximum),
    ] = Field(description="EKS cluster name (letters, digits, - and _; starts with a letter).")
    kubernetes_version: Annotated[
        Annotated[str, pattern(r"[0-9]+\.[0-9]+", 'a Kubernetes minor version such as "1.33"')],
        AfterValidator(kubernetes_version_check),
    ] = Field(eks_versions.DEFAULT_TEXT, description="Kubernetes minor version; 1.33 or newer (GB200 needs DRA).")
    public_access_cidrs: tuple[Cidr, ...] = Field(
        (),
        alias="endpointPublicAccessCidrs",
        description="CIDRs allowed to reach a public API endpoint; empty keeps the endpoint private.",
    )
    allow_public_endpoint_from_anywhere: StrictBool = Field(
        False, description="Allow 0.0.0.0/0 (or ::/0) in endpointPublicAccessCidrs."
    )
    admin_principal_arns: tuple[PrincipalArn, ...] = Field(
        (), description="IAM roles or users granted cluster admin through access entries."
    )
    preview_principal_arns: tuple[PrincipalArn, ...] = Field(
        (), description="IAM roles or users granted read-only access (AmazonEKSViewPolicy), e.g. the PR preview role."
    )
    deletion_protection: StrictBool = Field(
        True, description="EKS deletion protection: the cluster cannot be deleted until it is turned off."
    )
    log_types: tuple[Literal[LOG_TYPES], ...] = Field(  # type: ignore[valid-type]
        ("api", "audit", "authenticator"), description="Control-plane log types sent to CloudWatch."
    )
    log_retention_days: Literal[limits.RETENTION_DAYS] = Field(  # type: ignore[valid-type]
        limits.DEFAULT_RETENTION_DAYS,
        description="Days CloudWatch keeps the control-plane logs (the stack creates their log group, KMS-encrypted).",
    )
    irsa: StrictBool = Field(
        False, description="Create the cluster's IAM OIDC provider for IRSA (the toolkit's roles use Pod Identity)."
    )
    tags: Tags = Field(default_factory=dict, description="Tags applied to every AWS resource of the stack.")
    deployer_access: Literal["public-endpoint", "in-vpc", ""] = Field(
        "",
        validate_default=True,
        description="How `pulumi up` reaches the API: public-endpoint (default with CIDRs) or in-vpc.",
    )
    deployer_cidrs: tuple[Cidr, ...] = Field(
        (),
        description="CIDRs in the VPC that `pulumi up` runs from; each gets HTTPS (443) on the cluster security group.",
    )
    deployer_security_group_ids: tuple[SecurityGroupId, ...] = Field(
        (),
        description="Security groups of the runner or bastion that runs `pulumi up`; each gets HTTPS (443) on the "
        "cluster security group.",
    )
    control_plane_tier: Literal[(control_plane.AUTO, *control_plane.TIERS)] = Field(  # type: ignore[valid-type]
        control_plane.AUTO,
        description="EKS Provisioned Control Plane tier; auto: standard below 1,000 GPU nodes, larger tiers above "
        "(docs/health.md).",
    )
    deployer_runner_labels: tuple[Annotated[StrictStr, StringConstraints(pattern=RUNNER_LABEL)], ...] = Field(
        ("ubuntu-latest",),
        min_length=1,
        description="CI runner labels of the deploy job (in-vpc: a self-hosted runner).",
    )

    @field_validator("deployer_access", mode="after")
    @classmethod
    def _default_deployer_access(cls, value: str, info: ValidationInfo) -> str:
        """Unset, a stack with public endpoint CIDRs is deployed over the public endpoint."""
        return value or ("public-endpoint" if info.data.get("public_access_cidrs") else "")


class SystemNodeGroupSettings(Model):
    """The CPU node group where controllers run (GPU nodes are tainted)."""

    instance_type: Annotated[
        str, pattern(r"[a-z][a-z0-9-]*[0-9][a-z0-9-]*\.[a-z0-9]+", "an EC2 instance type such as m7g.xlarge")
    ] = Field(
        instances.SYSTEM_INSTANCE_TYPE,
        description="Instance type (Graviton, like GB200, so images are arm64 everywhere).",
    )
    ami_type: Literal[tuple(instances.SYSTEM_AMI_TYPES)] = Field(  # type: ignore[valid-type]
        instances.SYSTEM_AMI_TYPE, description="EKS AMI type matching the instance architecture."
    )
    desired_size: StrictInt = Field(
        2, ge=1, le=limits.NODES_PER_MANAGED_NODE_GROUP.maximum, description="Nodes to run."
    )
    min_size: StrictInt = Field(2, ge=1, le=limits.NODES_PER_MANAGED_NODE_GROUP.maximum, description="Fewest nodes.")
    max_size: StrictInt = Field(4, ge=1, le=limits.NODES_PER_MANAGED_NODE_GROUP.maximum, description="Most nodes.")
    disk_size_gib: StrictInt = Field(
        instances.SYSTEM_ROOT_VOLUME_GIB, alias="diskSizeGiB", ge=20, le=16384, description="Root volume size (GiB)."
    )


class AddonSettings(Model):
    """Versions of the EKS managed add-ons; empty takes the toolkit's pin for the cluster's Kubernetes minor."""

    vpc_cni: AddonVersion = Field("", description="vpc-cni add-on version (v1.18.5 or newer for EFA-only).")
    coredns: AddonVersion = Field("", description="coredns add-on version.")
    kube_proxy: AddonVersion = Field("", description="kube-proxy add-on version.")
    pod_identity_agent: AddonVersion = Field("", description="eks-pod-identity-agent add-on version.")
