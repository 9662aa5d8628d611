"""The stack settings model: every setting once, with its type, default, bounds or pattern and a one-line doc.

Attribute names are what the program reads (``settings.gpu_node_groups[0].availability_zone``); aliases are
the stack keys as written (``ultraserver-eks:gpuNodeGroups[0].availabilityZone``). Rules that span several
fields live in ``config.rules``; turning raw Pulumi config into ``Settings`` lives in ``config.load``.
The JSON Schema of stack files (stacks/stack.schema.json) and the settings reference (docs/settings.md) come from here.
Field types live in ``config.fields``, the GPU node group model in ``config.gpu_model``, a chart release's in
``config.release_model``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    StringConstraints,
    ValidationInfo,
    field_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.json_schema import SkipJsonSchema

from ultraserver.config.aws_identity import AwsIdentitySettings
from ultraserver.config.check_model import (
    EfaCheckSettings,
    HealthSettings,
    ImexCheckSettings,
    NcclCheckSettings,
)
from ultraserver.config.fields import (
    AddonVersion,
    ChartMirror,
    Cidr,
    EmailAddress,
    ImageMirror,
    ManifestMirror,
    Model,
    PrincipalArn,
    SecurityGroupId,
    SnsTopicArn,
    SubnetId,
    Tags,
    Zone,
    kubernetes_version_check,
    pattern,
)
from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.release_model import KueueSettings, PrometheusStackSettings, ReleaseSettings
from ultraserver.facts.aws import aws_ids, limits
from ultraserver.facts.aws import network as network_facts
from ultraserver.facts.hardware import devices as device_facts
from ultraserver.facts.hardware import instances
from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.pins import ami
from ultraserver.facts.pins import charts as chart_facts

PROJECT = "ultraserver-eks"
# A GitHub Actions runner label (letters, digits, . _ : -).
RUNNER_LABEL = r"^[A-Za-z0-9_.:-]+$"
LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")


class ClusterSettings(Model):
    """The EKS control plane."""

    name: Annotated[
        str,
        StringConstraints(strict=True, pattern=r"^[A-Za-z][A-Za-z0-9_-]*$", max_length=limits.EKS_CLUSTER_NAME.maximum),
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


class NetworkSettings(Model):
    """A new VPC (``vpcId`` empty) or an existing one."""

    vpc_cidr: Cidr = Field(
        "10.0.0.0/16", description="CIDR of a new VPC (/16 to /28; RFC 1918, 100.64.0.0/10 or 198.19.0.0/16)."
    )
    secondary_vpc_cidrs: tuple[Cidr, ...] = Field(
        (),
        description="More CIDR blocks of a new VPC, for GPU subnets beyond one /16 (e.g. [100.64.0.0/16]).",
    )
    availability_zones: tuple[Zone, ...] = Field(
        (), description="Regional zones for the control plane and system nodes (at least two)."
    )
    nat_gateways: Literal[network_facts.NAT_GATEWAY_MODES] = Field(  # type: ignore[valid-type]
        "single",
        description="single (one NAT gateway, cheaper) or per-zone (one per regional zone); docs/deploy.md, "
        "GPU subnets' egress.",
    )
    local_zone_nat_gateways: tuple[Zone, ...] = Field(
        (),
        description="GPU Local Zones that get their own NAT gateway; only zones the AWS Local Zones features page "
        "lists with NAT gateways (docs/deploy.md, GPU subnets' egress).",
    )
    pods_per_node: StrictInt = Field(110, ge=8, le=737, description="Planned pods per system node (subnet sizing).")
    gpu_pods_per_node: StrictInt = Field(32, ge=8, le=737, description="Planned pods per GPU node (subnet sizing).")
    vpc_id: Annotated[str, pattern(aws_ids.VPC_ID, "a VPC id like vpc-0123456789abcdef0", empty=True)] = Field(
        "", description="An existing VPC to use instead of creating one."
    )
    private_subnet_ids: tuple[SubnetId, ...] = Field(
        (), description="Existing private subnets (regional) for the control plane and system nodes."
    )
    public_subnet_ids: tuple[SubnetId, ...] = Field((), description="Existing public subnets for load balancers.")
    gpu_subnet_ids: dict[Zone, tuple[SubnetId, ...]] = Field(
        default_factory=dict, description="Existing GPU subnets by zone, e.g. {us-east-1-dfw-2a: [subnet-...]}."
    )

    @property
    def existing(self) -> bool:
        """Whether the stack uses an existing VPC."""
        return bool(self.vpc_id)


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


RELEASE_KEYS = {
    "gpu_operator": chart_facts.GPU_OPERATOR,
    "dra_driver": chart_facts.DRA_DRIVER,
    "efa_device_plugin": chart_facts.EFA_DEVICE_PLUGIN,
    "node_termination_handler": chart_facts.NODE_TERMINATION_HANDLER,
    "prometheus_stack": chart_facts.KUBE_PROMETHEUS_STACK,
    "kueue": chart_facts.KUEUE,
    "dranet": chart_facts.DRANET,
}
"""Release field -> chart name."""


def _keyed(field: str) -> AfterValidator:
    """Gives a release its stack key (``<project>:kubernetes.<field>``, for errors about its values) and the layer's
    chart mirror (a field before the releases) on a copy, as settings are frozen; the field is named here, not from
    the validation info, which older pydantic-core leaves without it for a default (pydantic/pydantic-core#1826)."""

    def name(release: ReleaseSettings, info: ValidationInfo) -> ReleaseSettings:
        project = (info.context or {}).get("project", PROJECT)
        key = release.settings_key or f"{project}:kubernetes.{to_camel(field)}"
        update = {"chart_mirror": info.data.get("chart_mirror", ""), "settings_key": key}
        changed = any(getattr(release, k) != v for k, v in update.items())
        return release.model_copy(update=update) if changed else release

    return AfterValidator(name)


class KubernetesSettings(Model):
    """The Kubernetes layer: GPU Operator, DRA driver, EFA device plugin or DRANET, NTH, Prometheus, MPI operator."""

    # Defaults are validated too, so each default release gets its stack key (_keyed).
    model_config = ConfigDict(validate_default=True)

    devices: Literal[device_facts.MODES] = Field(  # type: ignore[valid-type]
        device_facts.DEFAULT_MODE,
        description="How pods get GPUs and EFA: device plugins, or DRA drivers (1.35+; docs/device-modes.md).",
    )
    chart_mirror: ChartMirror = Field(
        "",
        description="Pull every chart here instead of its own repository: an https:// Helm repository holding each "
        "chart under its name, or an oci:// registry path holding each at <path>/<chart>, at the pinned versions "
        "(`pulumi up` and `plan --render` alike; docs/deploy.md).",
    )

    gpu_operator: Annotated[ReleaseSettings, _keyed("gpu_operator")] = Field(
        default_factory=ReleaseSettings, description="NVIDIA GPU Operator chart."
    )
    dra_driver: Annotated[ReleaseSettings, _keyed("dra_driver")] = Field(
        default_factory=ReleaseSettings, description="NVIDIA DRA driver chart."
    )
    efa_device_plugin: Annotated[ReleaseSettings, _keyed("efa_device_plugin")] = Field(
        default_factory=ReleaseSettings, description="AWS EFA Kubernetes device plugin chart."
    )
    dranet: Annotated[ReleaseSettings, _keyed("dranet")] = Field(
        default_factory=ReleaseSettings, description="DRANET chart (EFA in DRA mode)."
    )
    node_termination_handler: Annotated[ReleaseSettings, _keyed("node_termination_handler")] = Field(
        default_factory=ReleaseSettings,
        description="AWS Node Termination Handler (on when any GPU group is self-managed).",
    )
    prometheus_stack: Annotated[PrometheusStackSettings, _keyed("prometheus_stack")] = Field(
        default_factory=PrometheusStackSettings,
        description="kube-prometheus-stack (enabled: true to install).",
    )
    kueue: Annotated[KueueSettings, _keyed("kueue")] = Field(
        default_factory=KueueSettings,
        description="Kueue (on by default when the stack has GPU groups).",
    )
    layer: Literal["same-stack", "separate-stack"] = Field(
        "same-stack", description="Deploy the Kubernetes layer in this stack or in a separate stack."
    )
    image_mirror: ImageMirror = Field(
        "",
        description="Pull the toolkit's own job images (reclaim drain, drift check) from this registry path instead "
        "of their own registries: it holds each under its repository path at the pinned digest, as an ECR "
        "pull-through cache does (docs/deploy.md). A private cluster that cannot reach public.ecr.aws needs it, or "
        "its drain never starts.",
    )
    manifest_mirror: ManifestMirror = Field(
        "",
        description="Read the pinned manifests (DRA driver CRDs, MPI operator) here instead of GitHub: an https:// "
        "URL prefix or a local directory holding each file under its pinned name; its sha256 is checked all the same.",
    )

    @property
    def prometheus_stack_enabled(self) -> bool:
        """Whether kube-prometheus-stack is installed."""
        return self.prometheus_stack.enabled


class AlertSettings(Model):
    """Capacity Block alerts: EventBridge rules about the stack's reservations, sent to an SNS topic."""

    enabled: StrictBool | None = Field(
        None, description="Declare the alerts; default: on when the stack has GPU node groups."
    )
    sns_topic_arn: SnsTopicArn = Field(
        "", description="Existing SNS topic (it must let EventBridge publish); empty creates an encrypted one."
    )
    email_subscriptions: tuple[EmailAddress, ...] = Field(
        (), description="E-mail addresses subscribed to the topic (each confirms from the mail AWS sends)."
    )


SECTIONS = (
    "cluster",
    "network",
    "systemNodeGroup",
    "gpuNodeGroups",
    "addons",
    "kubernetes",
    "imexCheck",
    "health",
    "efaCheck",
    "ncclCheck",
    "alerts",
    "autoDeploy",
    "acceptUntestedVersions",
)


class Settings(AwsIdentitySettings):
    """Everything a stack declares."""

    project: SkipJsonSchema[str] = Field(PROJECT, alias="__project", description="Pulumi project name.")
    stack: SkipJsonSchema[str] = Field("dev", alias="__stack", description="Pulumi stack name.")
    region: Annotated[str, pattern(aws_ids.REGION, "an AWS region such as us-east-1")] = Field(
        alias="aws:region", description="AWS region."
    )
    cluster: ClusterSettings = Field(description="The EKS control plane.")
    network: NetworkSettings = Field(default_factory=NetworkSettings, description="The VPC and subnets.")
    system_node_group: SystemNodeGroupSettings = Field(
        default_factory=SystemNodeGroupSettings, description="The CPU node group for controllers."
    )
    gpu_node_groups: tuple[GpuNodeGroupSettings, ...] = Field((), description="GB200 node groups.")
    addons: AddonSettings = Field(default_factory=AddonSettings, description="EKS managed add-on versions.")
    kubernetes: KubernetesSettings = Field(default_factory=KubernetesSettings, description="Helm releases.")
    imex_check: ImexCheckSettings = Field(default_factory=ImexCheckSettings, description="The IMEX bandwidth check.")
    health: HealthSettings = Field(default_factory=HealthSettings, description="Node health.")
    efa_check: EfaCheckSettings = Field(default_factory=EfaCheckSettings, description="The EFA bandwidth check.")
    nccl_check: NcclCheckSettings = Field(
        default_factory=NcclCheckSettings, description="NCCL all-reduce over one UltraServer's ComputeDomain and EFA."
    )
    alerts: AlertSettings = Field(
        default_factory=AlertSettings, description="Capacity Block alerts (EventBridge rules to an SNS topic)."
    )
    auto_deploy: StrictBool = Field(False, description="Deploy this stack automatically on pushes to main (CI).")
    accept_untested_versions: StrictBool = Field(
        False, description="Allow chart and add-on versions outside the tested set (a warning instead of an error)."
    )

    @property
    def alerts_enabled(self) -> bool:
        """Whether the stack declares the Capacity Block alerts (on by default with GPU node groups)."""
        return bool(self.gpu_node_groups) if self.alerts.enabled is None else self.alerts.enabled

    @property
    def alert_reservation_ids(self) -> tuple[str, ...]:
        """Reservations the alerts match; empty (every reservation) when a group targets a resource group."""
        if any(g.grouped for g in self.gpu_node_groups):
            return ()
        return tuple(rid for g in self.gpu_node_groups for rid in g.all_reservation_ids)

    @field_validator("gpu_node_groups", mode="after")
    @classmethod
    def _default_release_versions(
        cls, groups: tuple[GpuNodeGroupSettings, ...], info: ValidationInfo
    ) -> tuple[GpuNodeGroupSettings, ...]:
        """Managed EKS AMIs follow the toolkit's pinned release of the cluster's Kubernetes minor."""
        cluster = info.data.get("cluster")
        if cluster is None:  # the cluster section is invalid: its own error says why
            return groups
        pin = ami.default_release_version(cluster.kubernetes_version)
        return tuple(
            g.model_copy(update={"release_version": pin}) if not (g.release_version or g.ami_id or g.ami_release) else g
            for g in groups
        )


def known_keys(model: type[BaseModel]) -> list[str]:
    """The stack keys a model accepts."""
    return sorted(
        str(f.alias or name) for name, f in model.model_fields.items() if not str(f.alias or "").startswith("__")
    )


def key(s: Settings, path: str) -> str:
    """The stack key of a path inside the project namespace."""
    return f"{s.project}:{path}"
