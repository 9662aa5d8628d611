"""The stack settings model: every setting once, with its type, default, bounds or pattern and a one-line doc.

Attribute names are what the program reads (``settings.gpu_node_groups[0].availability_zone``); aliases are
the stack keys as written (``ultraserver-eks:gpuNodeGroups[0].availabilityZone``). Rules that span several
fields live in ``config.rules``; turning raw Pulumi config into ``Settings`` lives in ``config.load``.
The JSON Schema of stack files (stacks/stack.schema.json) and the README settings table come from here.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from datetime import datetime, timezone
from functools import cached_property
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    StringConstraints,
    ValidationInfo,
    WithJsonSchema,
    model_validator,
)
from pydantic.alias_generators import to_camel
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from ultraserver.facts import ami, capacity_blocks, efa, instances, kubernetes, limits
from ultraserver.facts import charts as chart_facts

PROJECT = "ultraserver-eks"
LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")

PATTERNS: dict[str, str] = {}
"""Regex -> what it allows, in words; error messages show the words, the JSON Schema the regex."""


def pattern(regex: str, allowed: str, *, empty: bool = False) -> StringConstraints:
    """Strict string constraints matching ``regex`` (or empty when ``empty``), described as ``allowed`` in errors.

    Use as ``Annotated[str, pattern(...)]``.
    """
    full = f"^(?:{regex})?$" if empty else f"^(?:{regex})$"
    PATTERNS[full] = allowed + (" (or empty)" if empty else "")
    return StringConstraints(strict=True, pattern=full)


def problem_error(allowed: str, fix: str) -> PydanticCustomError:
    """A validation error that carries its own 'allowed' and 'fix' text."""
    return PydanticCustomError("ultraserver", "{allowed}", {"allowed": allowed, "fix": fix})


def check(test: Callable[[Any], str | None], fix: str = "") -> AfterValidator:
    """An after-validator: ``test`` returns what is allowed when the value is bad, else None."""

    def run(value: Any) -> Any:
        allowed = test(value)
        if allowed:
            raise problem_error(allowed, fix or "correct the value")
        return value

    return AfterValidator(run)


def _cidr_problem(value: str) -> str | None:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError as err:
        if "host bits set" in str(err):
            return f"a network address without host bits (here {ipaddress.ip_network(value, strict=False)})"
        return "a CIDR such as 203.0.113.0/24"
    return None


def _to_text(value: Any) -> Any:
    """Tag and label values YAML read as numbers or booleans, as the text the user wrote."""
    if isinstance(value, dict):
        return {
            k: (str(v).lower() if isinstance(v, bool) else str(v)) if isinstance(v, (int, float)) else v
            for k, v in value.items()
        }
    return value


def _parse_time(value: str) -> datetime:
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise problem_error(
            "an ISO 8601 time such as 2026-12-01T11:30:00Z", "copy the time from describe-capacity-blocks"
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _kubernetes_version(version: str, info: ValidationInfo) -> str:
    """A minor at the GB200 floor that EKS offers today and the toolkit pins an AMI release for."""
    today = (info.context or {}).get("today") or datetime.now(timezone.utc).date()
    usable = kubernetes.supported(tuple(ami.RELEASE_VERSIONS), today)
    if version in usable:
        return version
    why = "" if kubernetes.offered(version, today) else "; EKS does not offer it"
    if kubernetes.version_tuple(version) < kubernetes.FLOOR:
        why = f"; {kubernetes.FLOOR_TEXT} or newer: GB200 needs DRA"
    raise problem_error(
        f"{kubernetes.FLOOR_TEXT} or newer, one of {', '.join(usable) or 'none today (update the toolkit)'}{why}",
        f'set kubernetesVersion: "{usable[0] if usable else kubernetes.FLOOR_TEXT}"',
    )


def _all_nodes(value: Any) -> Any:
    return None if value == "all" else value


Cidr = Annotated[StrictStr, check(_cidr_problem, "write the network address, e.g. 10.0.0.0/16")]
Zone = Annotated[
    str,
    pattern(r"[a-z]{2}(-[a-z]+)+-\d[a-z]?(-[a-z]+-\d+[a-z])?", "a zone name such as us-east-1a or us-east-1-dfw-2a"),
]
SubnetId = Annotated[str, pattern(r"subnet-[0-9a-f]{8}([0-9a-f]{9})?", "a subnet id like subnet-0123456789abcdef0")]
PrincipalArn = Annotated[
    str,
    pattern(
        r"arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+",
        "an IAM role or user ARN (arn:aws:iam::<account>:role/<name>)",
    ),
]
AddonVersion = Annotated[
    str, pattern(r"v\d+\.\d+\.\d+-eksbuild\.\d+", "an EKS add-on version such as v1.20.4-eksbuild.1", empty=True)
]
Tags = Annotated[dict[StrictStr, StrictStr], BeforeValidator(_to_text)]
Time = Annotated[StrictStr, AfterValidator(_parse_time), WithJsonSchema({"type": "string", "format": "date-time"})]
InstanceType = Annotated[
    StrictStr,
    check(
        lambda v: None if v in efa.supported_instance_types() else "one of " + ", ".join(efa.supported_instance_types())
    ),
    WithJsonSchema({"type": "string", "enum": efa.supported_instance_types()}),
]
EFA_LAYOUT_SCHEMA = {
    "oneOf": [
        {"type": "string", "enum": list(efa.PRESETS)},
        {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "networkCardIndex": {"type": "integer", "minimum": 0},
                    "deviceIndex": {"type": "integer", "minimum": 0},
                    "interfaceType": {"type": "string", "enum": list(efa.INTERFACE_TYPES)},
                },
                "required": list(efa.CUSTOM_KEYS),
                "additionalProperties": False,
            },
        },
    ]
}


def _efa_layout_shape(value: Any) -> str | None:
    if isinstance(value, str):
        return None if value in efa.PRESETS else "one of " + ", ".join(efa.PRESETS) + ", or a list of interfaces"
    if isinstance(value, list):
        return None
    return "a preset name or a list of {networkCardIndex, deviceIndex, interfaceType}"


class Model(BaseModel):
    """Frozen, no unknown keys, camelCase stack keys."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        arbitrary_types_allowed=True,
    )


class ReleaseSettings(Model):
    """User-tunable settings shared by every chart release."""

    version: Annotated[str, pattern(r"v?\d+\.\d+\.\d+", "a chart version such as 25.3.4")] | None = Field(
        None, description="Chart version; empty keeps the toolkit's pinned version (recommended)."
    )
    values: dict[StrictStr, Any] = Field(
        default_factory=dict, description="Values deep-merged over the toolkit's values (maps merge, lists replace)."
    )
    namespace: Annotated[str, pattern(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", "a namespace name")] | None = Field(
        None, description="Namespace of the release; empty uses the chart's usual namespace."
    )
    timeout_seconds: StrictInt = Field(
        900, ge=60, le=7200, description="How long Helm waits for the release's resources to become ready."
    )
    atomic: StrictBool = Field(
        True, description="Roll back a failed install or upgrade instead of leaving it half done."
    )
    settings_key: SkipJsonSchema[str | None] = Field(None, alias="__settingsKey", exclude=True)
    """Settings key named in error messages about `values` (set by the loader; defaults to '<chart> values')."""


class PrometheusStackSettings(ReleaseSettings):
    """kube-prometheus-stack, off unless enabled."""

    enabled: StrictBool = Field(False, description="Install kube-prometheus-stack.")


class ClusterSettings(Model):
    """The EKS control plane."""

    name: Annotated[
        str,
        StringConstraints(strict=True, pattern=r"^[A-Za-z][A-Za-z0-9_-]*$", max_length=limits.EKS_CLUSTER_NAME.maximum),
    ] = Field(description="EKS cluster name (letters, digits, - and _; starts with a letter).")
    kubernetes_version: Annotated[
        Annotated[str, pattern(r"\d+\.\d+", 'a Kubernetes minor version such as "1.33"')],
        AfterValidator(_kubernetes_version),
    ] = Field(kubernetes.FLOOR_TEXT, description="Kubernetes minor version; 1.33 or newer (GB200 needs DRA).")
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
    log_types: tuple[Literal[LOG_TYPES], ...] = Field(  # type: ignore[valid-type]
        ("api", "audit", "authenticator"), description="Control-plane log types sent to CloudWatch."
    )
    tags: Tags = Field(default_factory=dict, description="Tags applied to every AWS resource of the stack.")
    deployer_access: Literal["public-endpoint", "in-vpc", ""] = Field(
        "",
        description="How `pulumi up` reaches the API: public-endpoint (default with CIDRs) or in-vpc.",
    )
    deployer_runner_labels: tuple[StrictStr, ...] = Field(
        ("ubuntu-latest",),
        min_length=1,
        description="CI runner labels of the deploy job (in-vpc: a self-hosted runner).",
    )

    @model_validator(mode="after")
    def _default_deployer_access(self) -> ClusterSettings:
        if not self.deployer_access and self.public_access_cidrs:
            object.__setattr__(self, "deployer_access", "public-endpoint")
        return self


class NetworkSettings(Model):
    """A new VPC (``vpcId`` empty) or an existing one."""

    vpc_cidr: Cidr = Field("10.0.0.0/16", description="CIDR of a new VPC (/16 to /28, private ranges).")
    availability_zones: tuple[Zone, ...] = Field(
        (), description="Regional zones for the control plane and system nodes (at least two)."
    )
    single_nat_gateway: StrictBool = Field(True, description="One NAT gateway (cheaper) instead of one per zone.")
    pods_per_node: StrictInt = Field(110, ge=8, le=737, description="Planned pods per system node (subnet sizing).")
    gpu_pods_per_node: StrictInt = Field(32, ge=8, le=737, description="Planned pods per GPU node (subnet sizing).")
    vpc_id: Annotated[
        str, pattern(r"vpc-[0-9a-f]{8}([0-9a-f]{9})?", "a VPC id like vpc-0123456789abcdef0", empty=True)
    ] = Field("", description="An existing VPC to use instead of creating one.")
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
        str, pattern(r"[a-z][a-z0-9-]*\d[a-z0-9-]*\.[a-z0-9]+", "an EC2 instance type such as m7g.xlarge")
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


class ReservationWindowSettings(Model):
    """When a Capacity Block runs (from describe-capacity-blocks)."""

    start: Time = Field(description="Block start, ISO 8601 (quote it in YAML).")
    end: Time = Field(description="Block end, ISO 8601 (quote it in YAML).")
    scale_down_lead_minutes: StrictInt = Field(
        60,
        ge=capacity_blocks.EC2_TERMINATION_LEAD_MINUTES,
        le=1440,
        description="Scale to 0 this long before the end (EC2 terminates 30 minutes before).",
    )


class GpuNodeGroupSettings(Model):
    """GB200 capacity-block node groups for one or more UltraServers."""

    name: Annotated[
        str, pattern(r"[a-z][a-z0-9-]{0,37}[a-z0-9]", "lowercase letters, digits and -, 2-39 characters")
    ] = Field(description="Group name; with several reservations each UltraServer's group is <name>-<n>.")
    availability_zone: Zone = Field(
        description="Zone of the capacity reservation (for P6e-GB200 a Local Zone such as us-east-1-dfw-2a)."
    )
    ultraserver_type: Literal[tuple(capacity_blocks.ULTRASERVER_INSTANCES)] = Field(  # type: ignore[valid-type]
        "u-p6e-gb200x72", description="u-p6e-gb200x36 (9 instances) or u-p6e-gb200x72 (18)."
    )
    capacity_reservation_ids: tuple[
        Annotated[str, pattern(r"cr-[0-9a-f]{17}", "'cr-' and 17 lowercase hex digits (e.g. cr-0123456789abcdef0)")],
        ...,
    ] = Field((), description="One capacity reservation (cr-...) per UltraServer; one node group each.")
    capacity_reservation_resource_group_arn: Annotated[
        str,
        pattern(
            r"arn:aws(-cn|-us-gov|-iso|-iso-b|-iso-e|-iso-f|-eusc)?:resource-groups:[a-z]{2}(-[a-z]+)+-\d:\d{12}:group/"
            r"[A-Za-z0-9_.-]{1,300}",
            "a resource group ARN arn:aws:resource-groups:<region>:<account>:group/<name>",
            empty=True,
        ),
    ] = Field("", description="Self-managed only: one group over a capacity-reservation resource group.")
    ultraserver_count: StrictInt = Field(1, ge=1, le=1000, description="UltraServers in the resource group.")
    mode: Literal["managed", "self-managed"] = Field(
        "managed", description="managed (EKS managed node group) or self-managed (Auto Scaling group)."
    )
    instance_type: InstanceType = Field(instances.GB200_INSTANCE_TYPE, description="Instance type.")
    efa_layout_setting: Annotated[Any, WithJsonSchema(EFA_LAYOUT_SCHEMA), check(_efa_layout_shape)] = Field(
        "one-per-nci-group",
        alias="efaLayout",
        description="EFA preset (one-per-nci-group, all-odd-cards, maximum) or a list of interfaces.",
    )
    desired_size: StrictInt | None = Field(
        None, ge=0, description="Nodes per group; defaults to every instance of the UltraServer(s)."
    )
    release_version: Annotated[
        str, pattern(r"1\.\d+\.\d+-\d{8}", "an EKS AMI release version such as 1.33.5-20251103", empty=True)
    ] = Field(
        "",
        description="EKS AMI release (AL2023_ARM_64_NVIDIA); default: the toolkit's pin for the cluster version.",
    )
    ami_release: StrictStr = Field("", description="Custom AMI: pinned release (v20251103 or later) read from SSM.")
    ami_id: Annotated[
        str, pattern(r"ami-[0-9a-f]{8}([0-9a-f]{9})?", "an AMI id like ami-0123456789abcdef0", empty=True)
    ] = Field("", description="Custom AMI id (needs amiRelease so the driver can be checked).")
    root_volume_size_gib: StrictInt = Field(
        instances.GPU_ROOT_VOLUME_GIB,
        alias="rootVolumeSizeGiB",
        ge=50,
        le=16384,
        description="Encrypted gp3 root volume size (GiB).",
    )
    local_storage: Literal[instances.LOCAL_STORAGE] = Field(  # type: ignore[valid-type]
        "RAID0", description="nodeadm instance-store strategy: RAID0, RAID10 (4+ disks) or Mount."
    )
    labels: Tags = Field(default_factory=dict, description="Extra Kubernetes node labels.")
    window: ReservationWindowSettings | None = Field(
        None, alias="reservationWindow", description="Capacity block window for scheduled scaling."
    )
    scale_to_zero_for_upgrade: StrictBool = Field(
        False, description="Hold the group at 0 nodes (required before a version or AMI upgrade)."
    )
    imds_hop_limit: StrictInt = Field(1, ge=1, le=2, description="IMDSv2 hop limit: 1 (pods cannot reach IMDS) or 2.")
    auto_repair: StrictBool = Field(False, description="EKS node auto repair (managed groups only).")

    @property
    def efa_layout(self) -> str:
        """The EFA preset name, or 'custom'."""
        return self.efa_layout_setting if isinstance(self.efa_layout_setting, str) else "custom"

    @cached_property
    def efa_interfaces(self) -> tuple[efa.EfaInterface, ...]:
        """The resolved network interface layout (card 0 ENA primary included)."""
        custom = self.efa_layout_setting if isinstance(self.efa_layout_setting, list) else None
        return tuple(efa.layout_for(self.instance_type, None if custom else self.efa_layout, custom, key="efaLayout"))

    @property
    def reservation_window(self) -> capacity_blocks.ReservationWindow | None:
        """Capacity block window for scheduled scaling; None keeps the size fixed."""
        w = self.window
        return None if w is None else capacity_blocks.ReservationWindow(w.start, w.end, w.scale_down_lead_minutes)  # type: ignore[arg-type]

    @property
    def grouped(self) -> bool:
        """Whether the group targets a capacity-reservation resource group."""
        return bool(self.capacity_reservation_resource_group_arn)

    @property
    def instances_per_ultraserver(self) -> int:
        """Instances in one UltraServer of this type."""
        return capacity_blocks.ULTRASERVER_INSTANCES[self.ultraserver_type]

    @property
    def ultraservers(self) -> int:
        """UltraServers this entry covers."""
        return self.ultraserver_count if self.grouped else len(self.capacity_reservation_ids)

    @property
    def node_groups(self) -> int:
        """Node groups this entry creates: one per UltraServer, or one in grouped mode."""
        return 1 if self.grouped else len(self.capacity_reservation_ids)

    @property
    def node_group_names(self) -> list[str]:
        """Names of the node groups this entry creates: <name>, or <name>-<n> for several UltraServers."""
        if self.node_groups == 1:
            return [self.name]
        return [f"{self.name}-{index}" for index in range(1, self.node_groups + 1)]

    @property
    def full_size(self) -> int:
        """Instances in each node group this entry creates."""
        return self.instances_per_ultraserver * (self.ultraserver_count if self.grouped else 1)

    @property
    def nodes_per_group(self) -> int:
        """Desired nodes in each node group this entry creates."""
        return self.full_size if self.desired_size is None else self.desired_size


class AddonSettings(Model):
    """Versions of the EKS managed add-ons; empty means the EKS default for the cluster version."""

    vpc_cni: AddonVersion = Field("", description="vpc-cni add-on version (v1.18.5 or newer for EFA-only).")
    coredns: AddonVersion = Field("", description="coredns add-on version.")
    kube_proxy: AddonVersion = Field("", description="kube-proxy add-on version.")
    pod_identity_agent: AddonVersion = Field("", description="eks-pod-identity-agent add-on version.")


RELEASE_KEYS = {
    "gpu_operator": chart_facts.GPU_OPERATOR,
    "dra_driver": chart_facts.DRA_DRIVER,
    "efa_device_plugin": chart_facts.EFA_DEVICE_PLUGIN,
    "node_termination_handler": "aws-node-termination-handler",
    "prometheus_stack": "kube-prometheus-stack",
}
"""Release field -> chart name."""


class KubernetesSettings(Model):
    """The Kubernetes layer: GPU Operator, DRA driver, EFA device plugin, NTH, Prometheus, MPI operator."""

    gpu_operator: ReleaseSettings = Field(default_factory=ReleaseSettings, description="NVIDIA GPU Operator chart.")
    dra_driver: ReleaseSettings = Field(default_factory=ReleaseSettings, description="NVIDIA DRA driver chart.")
    efa_device_plugin: ReleaseSettings = Field(
        default_factory=ReleaseSettings, description="AWS EFA Kubernetes device plugin chart."
    )
    node_termination_handler: ReleaseSettings = Field(
        default_factory=ReleaseSettings,
        description="AWS Node Termination Handler (on when any GPU group is self-managed).",
    )
    prometheus_stack: PrometheusStackSettings = Field(
        default_factory=PrometheusStackSettings, description="kube-prometheus-stack (enabled: true to install)."
    )
    layer: Literal["same-stack", "separate-stack"] = Field(
        "same-stack", description="Deploy the Kubernetes layer in this stack or in a separate stack."
    )

    @property
    def prometheus_stack_enabled(self) -> bool:
        """Whether kube-prometheus-stack is installed."""
        return self.prometheus_stack.enabled

    @model_validator(mode="after")
    def _name_release_keys(self, info: ValidationInfo) -> KubernetesSettings:
        project = (info.context or {}).get("project", PROJECT)
        for field in RELEASE_KEYS:
            release = getattr(self, field)
            if release.settings_key is None:
                object.__setattr__(release, "settings_key", f"{project}:kubernetes.{to_camel(field)}")
        return self


class ImexCheckSettings(Model):
    """The nvbandwidth MPIJob that proves multi-node NVLink inside each UltraServer."""

    enabled: StrictBool = Field(True, description="Deploy the check.")
    nodes: Annotated[
        StrictInt | None,
        BeforeValidator(_all_nodes),
        WithJsonSchema({"anyOf": [{"type": "integer", "minimum": 2, "maximum": 18}, {"const": "all"}]}),
    ] = Field(2, ge=2, le=18, description='Nodes of each UltraServer the check spans (2 to 18, or "all").')
    threshold_gbps: StrictFloat = Field(700.0, ge=1.0, description="Minimum GB/s for every cross-node GPU pair.")


class DriftCheckSettings(Model):
    """The scheduled check that the deployed fabric still matches the stack."""

    enabled: StrictBool = Field(True, description="Run the drift check on a schedule.")
    schedule: Annotated[str, pattern(r"(\S+\s+){4}\S+", "a cron schedule with five fields such as */30 * * * *")] = (
        Field("*/30 * * * *", description="Cron schedule of the drift check.")
    )


class HealthSettings(Model):
    """Node health: the EKS node monitoring agent and the drift check."""

    node_monitoring_agent: StrictBool = Field(True, description="Install the EKS node monitoring agent add-on.")
    drift_check: DriftCheckSettings = Field(default_factory=DriftCheckSettings, description="Scheduled drift check.")

    @property
    def drift_check_enabled(self) -> bool:
        """Whether the drift check runs."""
        return self.drift_check.enabled

    @property
    def drift_check_schedule(self) -> str:
        """Cron schedule of the drift check."""
        return str(self.drift_check.schedule)


class EfaCheckSettings(Model):
    """The EFA bandwidth check across UltraServers."""

    enabled: StrictBool | None = Field(None, description="Deploy the check; default: on with 2 or more UltraServers.")
    ultraservers: StrictInt = Field(2, ge=2, description="UltraServers the check spans.")
    nodes_per_ultraserver: StrictInt = Field(1, ge=1, description="Nodes of each UltraServer in the check.")
    min_bus_bandwidth_gbps: StrictFloat | None = Field(
        None, gt=0, description="Minimum bus bandwidth (Gbps); default: derived from the EFA layout."
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
    "autoDeploy",
)


class Settings(Model):
    """Everything a stack declares."""

    project: SkipJsonSchema[str] = Field(PROJECT, alias="__project", description="Pulumi project name.")
    stack: SkipJsonSchema[str] = Field("dev", alias="__stack", description="Pulumi stack name.")
    region: Annotated[str, pattern(r"[a-z]{2}(-[a-z]+)+-\d", "an AWS region such as us-east-1")] = Field(
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
    auto_deploy: StrictBool = Field(False, description="Deploy this stack automatically on pushes to main (CI).")

    @model_validator(mode="after")
    def _default_release_versions(self) -> Settings:
        """Managed EKS AMIs follow the toolkit's pinned release of the cluster's Kubernetes minor."""
        pin = ami.default_release_version(self.cluster.kubernetes_version)
        groups = tuple(
            g.model_copy(update={"release_version": pin}) if not (g.release_version or g.ami_id or g.ami_release) else g
            for g in self.gpu_node_groups
        )
        object.__setattr__(self, "gpu_node_groups", groups)
        return self


def is_section(name: str) -> bool:
    """Whether a stack key (after the project namespace) is a settings section."""
    return name in SECTIONS


def known_keys(model: type[BaseModel]) -> list[str]:
    """The stack keys a model accepts."""
    return sorted(
        str(f.alias or name) for name, f in model.model_fields.items() if not str(f.alias or "").startswith("__")
    )
