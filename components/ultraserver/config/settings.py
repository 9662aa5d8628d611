"""The stack settings model: every stack setting, typed, validated before any resource is declared.

Settings live in the stack file under the project's namespace (``ultraserver-eks:<section>``) plus
``aws:region``. ``parse_settings`` turns that raw config into typed dataclasses or raises one
``ConfigError`` that lists every problem; ``load_settings`` reads it from the running Pulumi program.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ultraserver.config.reader import Reader, problem
from ultraserver.facts import ami, charts, efa
from ultraserver.facts import capacity_blocks as capacity_block
from ultraserver.problems import ConfigError

PROJECT = "ultraserver-eks"
MIN_KUBERNETES = (1, 33)
MIN_VPC_CNI = (1, 18, 5)
GB200_INSTANCE_TYPE = "p6e-gb200.36xlarge"
LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")
SECTIONS = (
    "cluster",
    "network",
    "systemNodeGroup",
    "gpuNodeGroups",
    "addons",
    "kubernetes",
    "imexCheck",
    "efaCheck",
    "health",
    "autoDeploy",
)

_NAME = r"[a-z][a-z0-9-]{0,37}[a-z0-9]"
_ZONE = r"[a-z]{2}(-[a-z]+)+-\d[a-z]?(-[a-z]+-\d+[a-z])?"
# How the deployer reaches the API server, and where the Kubernetes layer is declared (README "Reachability").
DEPLOYER_ACCESS = ("public-endpoint", "in-vpc")
KUBERNETES_LAYERS = ("same-stack", "separate-stack")
# GitHub-hosted runners run outside every customer VPC; only a self-hosted runner can sit inside one.
SELF_HOSTED_LABEL = "self-hosted"
_RUNNER_LABEL_PROBLEM = "allowed: a GitHub runner label (letters, digits, . _ : -); fix: correct the label"
_ARN_PRINCIPAL = r"arn:aws[a-z-]*:iam::\d{12}:(role|user)/[\w+=,.@/-]+"
_SUBNET_ID = r"subnet-[0-9a-f]{8}([0-9a-f]{9})?"
_VPC_ID = r"vpc-[0-9a-f]{8}([0-9a-f]{9})?"


@dataclass
class ReleaseSettings:
    """User-tunable settings shared by every chart release."""

    version: str | None = None
    """Chart version; None keeps the toolkit's pinned version (recommended)."""
    values: dict[str, Any] = field(default_factory=dict)
    """Values deep-merged over the toolkit's values (maps merge, lists replace)."""
    namespace: str | None = None
    """Namespace of the release; None uses the chart's usual namespace."""
    timeout_seconds: int = 900
    """How long Helm waits for the release's resources to become ready."""
    atomic: bool = True
    """Roll back a failed install or upgrade instead of leaving it half done."""
    settings_key: str | None = None
    """Settings key named in error messages about `values` (defaults to '<chart> values')."""


@dataclass(frozen=True)
class ClusterSettings:
    """The EKS control plane."""

    name: str
    """EKS cluster name."""
    kubernetes_version: str = "1.33"
    """Kubernetes minor version; at least 1.33 because GB200 needs DRA."""
    public_access_cidrs: tuple[str, ...] = ()
    """CIDRs allowed to reach a public API endpoint; empty keeps the endpoint private."""
    admin_principal_arns: tuple[str, ...] = ()
    """IAM roles or users granted cluster admin through access entries."""
    log_types: tuple[str, ...] = ("api", "audit", "authenticator")
    """Control-plane log types sent to CloudWatch."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """Tags applied to every AWS resource of the stack."""
    deployer_access: str = ""
    """How `pulumi up` reaches the API server: public-endpoint (within public_access_cidrs) or in-vpc; "" unset."""
    deployer_runner_labels: tuple[str, ...] = ("ubuntu-latest",)
    """GitHub runner labels of the deployer that reaches the API server (e.g. self-hosted, gb200-vpc for in-vpc)."""


@dataclass(frozen=True)
class NetworkSettings:
    """A new VPC (``vpc_id`` empty) or an existing one."""

    vpc_cidr: str = "10.0.0.0/16"
    """CIDR of a new VPC."""
    availability_zones: tuple[str, ...] = ()
    """Regional zones for the control plane and system nodes (at least two)."""
    single_nat_gateway: bool = True
    """One NAT gateway for the VPC (cheaper) instead of one per regional zone."""
    pods_per_node: int = 110
    """Planned pods per system node, used to size subnets."""
    gpu_pods_per_node: int = 32
    """Planned pods per GPU node (training pods are few and large), used to size GPU subnets."""
    vpc_id: str = ""
    """An existing VPC to use instead of creating one."""
    private_subnet_ids: tuple[str, ...] = ()
    """Existing private subnets (regional) for the control plane and system nodes."""
    public_subnet_ids: tuple[str, ...] = ()
    """Existing public subnets (regional) for load balancers."""
    gpu_subnet_ids: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Existing GPU subnets by zone, e.g. {us-east-1-dfw-2a: [subnet-...]}."""

    @property
    def existing(self) -> bool:
        """Whether the stack uses an existing VPC."""
        return bool(self.vpc_id)


@dataclass(frozen=True)
class SystemNodeGroupSettings:
    """The CPU node group where controllers run (GPU nodes are tainted)."""

    instance_type: str = "m7g.xlarge"
    """Instance type (Graviton, like the GB200 nodes, so images are arm64 everywhere)."""
    ami_type: str = "AL2023_ARM_64_STANDARD"
    """EKS AMI type matching the instance architecture."""
    desired_size: int = 2
    """Nodes to run."""
    min_size: int = 2
    """Fewest nodes."""
    max_size: int = 4
    """Most nodes."""
    disk_size_gib: int = 50
    """Root volume size."""


@dataclass(frozen=True)
class GpuNodeGroupSettings:
    """GB200 capacity-block node groups for one or more UltraServers."""

    name: str
    """Group name; with several reservations each UltraServer's group is <name>-<n>."""
    availability_zone: str
    """Zone of the capacity reservation (for P6e-GB200 a Local Zone such as us-east-1-dfw-2a)."""
    ultraserver_type: str = "u-p6e-gb200x72"
    """UltraServer type: u-p6e-gb200x36 (9 instances) or u-p6e-gb200x72 (18)."""
    capacity_reservation_ids: tuple[str, ...] = ()
    """One capacity reservation (cr-...) per UltraServer; one node group each."""
    capacity_reservation_resource_group_arn: str = ""
    """Grouped mode (self-managed groups only): one node group over a capacity-reservation resource group."""
    ultraserver_count: int = 1
    """UltraServers in the resource group (grouped mode)."""
    mode: str = "managed"
    """managed (EKS managed node group) or self-managed (Auto Scaling group)."""
    instance_type: str = GB200_INSTANCE_TYPE
    """Instance type."""
    efa_layout: str = "one-per-nci-group"
    """EFA preset, or 'custom' with efa_interfaces."""
    efa_interfaces: tuple[efa.EfaInterface, ...] = ()
    """The resolved network interface layout (card 0 ENA primary included)."""
    desired_size: int | None = None
    """Nodes per group; defaults to every instance of the UltraServer(s)."""
    release_version: str = ""
    """EKS AMI release version (AL2023_ARM_64_NVIDIA) like 1.33.5-20251103; the facts/ami.py default when unset."""
    ami_release: str = ""
    """Release of the custom AMI in ami_id (e.g. v20251103), so its driver version can be checked."""
    ami_id: str = ""
    """Custom AMI id (needs ami_release so the driver version can be checked)."""
    imds_hop_limit: int = 1
    """IMDSv2 hop limit of the nodes: 1, or 2 when a pod must reach the instance metadata."""
    root_volume_size_gib: int = 200
    """Encrypted gp3 root volume size."""
    local_storage: str = "RAID0"
    """nodeadm instance-store strategy: RAID0, RAID10 or Mount."""
    labels: Mapping[str, str] = field(default_factory=dict)
    """Extra Kubernetes node labels."""
    reservation_window: capacity_block.ReservationWindow | None = None
    """Capacity block window for scheduled scaling; none keeps the size fixed."""
    scale_to_zero_for_upgrade: bool = False
    """Hold the group at 0 nodes (required before a version or AMI upgrade)."""
    auto_repair: bool = False
    """EKS node auto repair (managed groups only; off by default, see docs/health.md)."""

    @property
    def grouped(self) -> bool:
        """Whether the group targets a capacity-reservation resource group."""
        return bool(self.capacity_reservation_resource_group_arn)

    @property
    def instances_per_ultraserver(self) -> int:
        """Instances in one UltraServer of this type."""
        return capacity_block.ULTRASERVER_INSTANCES[self.ultraserver_type]

    @property
    def ultraservers(self) -> int:
        """UltraServers this entry covers."""
        return self.ultraserver_count if self.grouped else len(self.capacity_reservation_ids)

    @property
    def node_groups(self) -> int:
        """Node groups this entry creates: one per UltraServer, or one in grouped mode."""
        return 1 if self.grouped else len(self.capacity_reservation_ids)

    @property
    def nodes_per_group(self) -> int:
        """Desired nodes in each node group this entry creates."""
        full = self.instances_per_ultraserver * (self.ultraserver_count if self.grouped else 1)
        return full if self.desired_size is None else self.desired_size


@dataclass(frozen=True)
class AddonSettings:
    """Versions of the EKS managed add-ons; empty means the EKS default for the cluster version."""

    vpc_cni: str = ""
    """vpc-cni add-on version (>= v1.18.5 for EFA-only interfaces)."""
    coredns: str = ""
    """coredns add-on version."""
    kube_proxy: str = ""
    """kube-proxy add-on version."""
    pod_identity_agent: str = ""
    """eks-pod-identity-agent add-on version."""


@dataclass(frozen=True)
class KubernetesSettings:
    """The Kubernetes layer: GPU Operator, DRA driver, EFA device plugin, MPI operator."""

    gpu_operator: ReleaseSettings = field(default_factory=ReleaseSettings)
    """NVIDIA GPU Operator chart."""
    dra_driver: ReleaseSettings = field(default_factory=ReleaseSettings)
    """NVIDIA DRA driver chart (ComputeDomains)."""
    efa_device_plugin: ReleaseSettings = field(default_factory=ReleaseSettings)
    """AWS EFA Kubernetes device plugin chart."""
    layer: str = "same-stack"
    """same-stack (this program installs the releases) or separate-stack (the kubernetes-layer/ project does)."""
    node_termination_handler: ReleaseSettings = field(default_factory=ReleaseSettings)
    """AWS Node Termination Handler chart (queue mode), installed when any GPU group is self-managed."""
    prometheus_stack: ReleaseSettings = field(default_factory=ReleaseSettings)
    """kube-prometheus-stack chart (installed only when prometheus_stack_enabled)."""
    prometheus_stack_enabled: bool = False
    """Install kube-prometheus-stack and the GPU Operator's dcgm-exporter ServiceMonitor."""


@dataclass(frozen=True)
class ImexCheckSettings:
    """The nvbandwidth MPIJob that proves multi-node NVLink inside each UltraServer."""

    enabled: bool = True
    """Deploy the check."""
    nodes: int | None = 2
    """Nodes of each UltraServer the check spans (2 up to all of them); None (stack value "all") spans every node."""
    threshold_gbps: float = 700.0
    """Minimum GB/s for every cross-node GPU pair."""


@dataclass(frozen=True)
class EfaCheckSettings:
    """The nccl-tests all_reduce MPIJob that proves EFA carries traffic between UltraServers."""

    enabled: bool | None = None
    """Deploy the check; None turns it on when two or more UltraServers share one EFA layout."""
    ultraservers: int = 2
    """UltraServers the job spreads over (at least 2: EFA is only used between them)."""
    nodes_per_ultraserver: int = 1
    """Workers (whole nodes) per UltraServer."""
    min_bus_bandwidth_gbps: float | None = None
    """Large-message bus bandwidth to reach in Gbit/s; None derives it from the EFA layout."""


@dataclass(frozen=True)
class HealthSettings:
    """Continuous node health: the EKS node monitoring agent and the drift CronJob."""

    node_monitoring_agent: bool = True
    """Install the eks-node-monitoring-agent add-on."""
    drift_check_enabled: bool = True
    """Run the cheap node-facts check on a schedule and report drift (e.g. a node that lost EFA devices)."""
    drift_check_schedule: str = "*/30 * * * *"
    """Cron schedule of the drift check."""


@dataclass(frozen=True)
class Settings:
    """Everything a stack declares."""

    project: str
    """Pulumi project name."""
    stack: str
    """Pulumi stack name."""
    region: str
    """AWS region."""
    cluster: ClusterSettings
    """The EKS control plane."""
    network: NetworkSettings
    """The VPC and subnets."""
    system_node_group: SystemNodeGroupSettings
    """The CPU node group for controllers."""
    gpu_node_groups: tuple[GpuNodeGroupSettings, ...]
    """GB200 node groups."""
    addons: AddonSettings
    """EKS managed add-on versions."""
    kubernetes: KubernetesSettings
    """Helm releases."""
    imex_check: ImexCheckSettings
    """The IMEX bandwidth check."""
    auto_deploy: bool = False
    """Deploy this stack automatically on pushes to main (CI)."""
    efa_check: EfaCheckSettings = field(default_factory=EfaCheckSettings)
    """The cross-UltraServer EFA check."""
    health: HealthSettings = field(default_factory=HealthSettings)
    """Node monitoring agent and drift check."""


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text))


def _cidr_problem(value: str) -> str | None:
    try:
        ipaddress.ip_network(value)
    except ValueError:
        return "allowed: an IPv4 CIDR such as 203.0.113.0/24; fix: correct the CIDR"
    return None


def _principal_problem(value: str) -> str | None:
    if re.fullmatch(_ARN_PRINCIPAL, value):
        return None
    return "allowed: an IAM role or user ARN (arn:aws:iam::<account>:role/<name>); fix: copy the ARN from IAM"


def _read_cluster(r: Reader, allow_anywhere: bool) -> ClusterSettings:
    version = r.string("kubernetesVersion", "1.33", pattern=r"\d+\.\d+", allowed="a version like 1.33")
    if version and _version_tuple(version) < MIN_KUBERNETES:
        r.problems.append(
            problem(
                r.path("kubernetesVersion"), version, "1.33 or newer (GB200 needs DRA)", 'set kubernetesVersion: "1.33"'
            )
        )
    cidrs = r.string_list("endpointPublicAccessCidrs", [], check=_cidr_problem)
    if "0.0.0.0/0" in cidrs and not allow_anywhere:
        r.problems.append(
            problem(
                r.path("endpointPublicAccessCidrs"),
                "0.0.0.0/0",
                "specific CIDRs (the API endpoint must not be open to the internet)",
                "list your office/VPN CIDRs, or set allowPublicEndpointFromAnywhere: true if you really mean it",
            )
        )
    access = r.string("deployerAccess", "public-endpoint" if cidrs else "", choices=DEPLOYER_ACCESS)
    if access == "public-endpoint" and not cidrs:
        r.problems.append(
            problem(
                r.path("deployerAccess"),
                access,
                "public-endpoint only with endpointPublicAccessCidrs (the endpoint is private-only without them)",
                "list the deployer's CIDRs in endpointPublicAccessCidrs, or set deployerAccess: in-vpc",
            )
        )
    labels = r.string_list(
        "deployerRunnerLabels",
        ["ubuntu-latest"],
        check=lambda v: None if re.fullmatch(r"[A-Za-z0-9_.:-]+", v) else _RUNNER_LABEL_PROBLEM,
    )
    if not labels:
        r.problems.append(
            problem(r.path("deployerRunnerLabels"), labels, "at least one runner label", "remove the key or name one")
        )
    logs = r.string_list(
        "logTypes",
        list(LOG_TYPES[:3]),
        check=lambda v: None if v in LOG_TYPES else f"allowed: {', '.join(LOG_TYPES)}; fix: remove it",
    )
    return ClusterSettings(
        name=r.string(
            "name",
            pattern=r"[A-Za-z][A-Za-z0-9_-]{0,99}",
            allowed="letters, digits, - and _, starting with a letter, up to 100 characters",
        ),
        kubernetes_version=version,
        public_access_cidrs=tuple(cidrs),
        admin_principal_arns=tuple(r.string_list("adminPrincipalArns", [], check=_principal_problem)),
        log_types=tuple(logs),
        tags=r.string_map("tags", {}),
        deployer_access=access or "",
        deployer_runner_labels=tuple(labels) or ("ubuntu-latest",),
    )


def _read_network(r: Reader, region: str) -> NetworkSettings:
    vpc_id = r.string("vpcId", "", pattern=_VPC_ID, allowed="a VPC id like vpc-0123456789abcdef0")
    subnet_check = lambda v: (  # noqa: E731
        None
        if re.fullmatch(_SUBNET_ID, v)
        else "allowed: a subnet id like subnet-0123456789abcdef0; fix: copy it from the VPC console"
    )  # noqa: E731
    zone_check = lambda v: (  # noqa: E731
        None
        if re.fullmatch(_ZONE, v) and v.startswith(region)
        else f"allowed: a zone of {region} such as {region}a; fix: correct the zone"
    )  # noqa: E731
    gpu_raw = r.raw_value("gpuSubnetIds") or {}
    gpu_subnets: dict[str, tuple[str, ...]] = {}
    if not isinstance(gpu_raw, Mapping):
        r.problems.append(
            problem(
                r.path("gpuSubnetIds"),
                gpu_raw,
                "a mapping of zone to subnet ids",
                "write gpuSubnetIds: {us-east-1-dfw-2a: [subnet-...]}",
            )
        )
    else:
        for zone, ids in gpu_raw.items():
            if not isinstance(ids, list) or not all(isinstance(i, str) and re.fullmatch(_SUBNET_ID, i) for i in ids):
                r.problems.append(
                    problem(
                        f"{r.path('gpuSubnetIds')}.{zone}",
                        ids,
                        "a list of subnet ids",
                        "list the subnet ids in that zone",
                    )
                )
                continue
            gpu_subnets[str(zone)] = tuple(ids)
    settings = NetworkSettings(
        vpc_cidr=r.string(
            "vpcCidr",
            "10.0.0.0/16",
            pattern=r"\d+\.\d+\.\d+\.\d+/(1[6-9]|2[0-4])",
            allowed="an IPv4 CIDR from /16 to /24",
        ),
        availability_zones=tuple(r.string_list("availabilityZones", [], check=zone_check)),
        single_nat_gateway=r.boolean("singleNatGateway", True),
        pods_per_node=r.integer("podsPerNode", 110, minimum=8, maximum=737),
        gpu_pods_per_node=r.integer("gpuPodsPerNode", 32, minimum=8, maximum=737),
        vpc_id=vpc_id,
        private_subnet_ids=tuple(r.string_list("privateSubnetIds", [], check=subnet_check)),
        public_subnet_ids=tuple(r.string_list("publicSubnetIds", [], check=subnet_check)),
        gpu_subnet_ids=gpu_subnets,
    )
    if settings.existing:
        if len(settings.private_subnet_ids) < 2:
            r.problems.append(
                problem(
                    r.path("privateSubnetIds"),
                    list(settings.private_subnet_ids),
                    "at least two subnets in different zones (EKS requires two)",
                    "list two or more private subnets",
                )
            )
    else:
        if len(settings.availability_zones) < 2:
            r.problems.append(
                problem(
                    r.path("availabilityZones"),
                    list(settings.availability_zones),
                    f"at least two regional zones of {region}",
                    f"set availabilityZones: [{region}a, {region}b]",
                )
            )
        for key in ("privateSubnetIds", "publicSubnetIds"):
            if r.has(key):
                r.problems.append(
                    problem(
                        r.path(key),
                        r.raw[key],
                        "subnet ids only together with vpcId",
                        "set vpcId too, or remove the subnet ids",
                    )
                )
        if gpu_subnets:
            r.problems.append(
                problem(
                    r.path("gpuSubnetIds"),
                    gpu_raw,
                    "subnet ids only together with vpcId",
                    "set vpcId too, or remove gpuSubnetIds",
                )
            )
    return settings


def _parse_time(r: Reader, name: str) -> datetime | None:
    text = r.string(name)
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        r.problems.append(
            problem(
                r.path(name),
                text,
                "an ISO 8601 time such as 2026-12-01T11:30:00Z",
                "copy the time from describe-capacity-blocks",
            )
        )
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def _read_window(r: Reader) -> capacity_block.ReservationWindow | None:
    if not r.raw:
        return None
    start, end = _parse_time(r, "start"), _parse_time(r, "end")
    lead = r.integer("scaleDownLeadMinutes", 60, minimum=30, maximum=1440)
    r.finish()
    if start is None or end is None:
        return None
    if end <= start:
        r.problems.append(
            problem(
                r.path("end"), end.isoformat(), "a time after start", "copy start and end from describe-capacity-blocks"
            )
        )
        return None
    return capacity_block.ReservationWindow(start=start, end=end, scale_down_lead_minutes=lead)


def _read_ami(r: Reader, kubernetes_version: str) -> tuple[str, str, str]:
    """(amiRelease, amiId, releaseVersion): a custom AMI with its release, or the pinned EKS AMI release version."""
    release = r.string("amiRelease", "")
    if release:
        why = ami.release_problem(release)
        if why:
            r.problems.append(f"{r.path('amiRelease')}: got {release!r}; {why}")
    ami_id = r.string(
        "amiId", "", pattern=r"ami-[0-9a-f]{8}([0-9a-f]{9})?", allowed="an AMI id like ami-0123456789abcdef0"
    )
    if ami_id and not release:
        r.problems.append(
            problem(
                r.path("amiId"),
                ami_id,
                "a custom AMI together with amiRelease",
                "set amiRelease to the AMI's release (v20251103 or later) so the NVIDIA driver can be checked",
            )
        )
    if release and not ami_id:
        r.problems.append(
            problem(
                r.path("amiRelease"),
                release,
                "amiRelease only with amiId (a custom AMI)",
                f"pin the EKS AMI with releaseVersion (e.g. {ami.DEFAULT_RELEASE_VERSIONS.get(kubernetes_version, '')})"
                " and remove amiRelease",
            )
        )
    version = r.string("releaseVersion", "")
    today = datetime.now(timezone.utc).strftime("%Y%m%d")
    if version:
        why = ami.release_version_problem(version, kubernetes_version, today)
        if why:
            r.problems.append(
                problem(r.path("releaseVersion"), version, f"an EKS AMI release version; {why}", "fix releaseVersion")
            )
    elif not ami_id:
        if kubernetes_version in ami.DEFAULT_RELEASE_VERSIONS:
            version = ami.DEFAULT_RELEASE_VERSIONS[kubernetes_version]
        else:
            r.problems.append(
                problem(
                    r.path("releaseVersion"),
                    None,
                    f"a release version for Kubernetes {kubernetes_version} (no default for it)",
                    "set releaseVersion to the value of SSM "
                    f"{ami.SSM_ROOT}/{kubernetes_version}/{ami.VARIANT}/recommended/release_version",
                )
            )
    return release, ami_id, version


def _read_gpu_group(  # noqa: C901 -- replaced by the declarative settings model
    r: Reader, network: NetworkSettings, region: str, kubernetes_version: str
) -> GpuNodeGroupSettings | None:
    errors_before = len(r.problems)
    name = r.string("name", pattern=_NAME, allowed="lowercase letters, digits and -, 2-39 characters")
    zone = r.string("availabilityZone", pattern=_ZONE, allowed=f"a zone of {region}, e.g. {region}-dfw-2a")
    if zone and not zone.startswith(region):
        r.problems.append(
            problem(
                r.path("availabilityZone"),
                zone,
                f"a zone of the stack's region {region}",
                "use the zone of the capacity reservation",
            )
        )
    us_type = r.string("ultraserverType", "u-p6e-gb200x72", choices=tuple(capacity_block.ULTRASERVER_INSTANCES))
    ids = r.string_list("capacityReservationIds", [], check=capacity_block.reservation_id_problem)
    group_arn = r.string("capacityReservationResourceGroupArn", "")
    if group_arn:
        why = capacity_block.resource_group_arn_problem(group_arn)
        if why:
            r.problems.append(f"{r.path('capacityReservationResourceGroupArn')}: got {group_arn!r}; {why}")
    count = r.integer("ultraserverCount", 1, minimum=1, maximum=1000)
    if bool(ids) == bool(group_arn):
        r.problems.append(
            problem(
                r.path("capacityReservationIds"),
                ids,
                "either capacityReservationIds (one per UltraServer) or "
                "capacityReservationResourceGroupArn, not both and not neither",
                "list the cr-... id of each UltraServer's capacity reservation",
            )
        )
    if ids and r.has("ultraserverCount"):
        r.problems.append(
            problem(
                r.path("ultraserverCount"),
                count,
                "ultraserverCount only with capacityReservationResourceGroupArn",
                "remove it: each reservation id is one UltraServer",
            )
        )
    if len(set(ids)) != len(ids):
        r.problems.append(
            problem(r.path("capacityReservationIds"), ids, "each reservation once", "remove the duplicate id")
        )
    mode = r.string("mode", "managed", choices=("managed", "self-managed"))
    instance_type = r.string("instanceType", GB200_INSTANCE_TYPE, choices=tuple(efa.supported_instance_types()))
    layout = r.raw_value("efaLayout")
    layout = "one-per-nci-group" if layout is None else layout
    interfaces: tuple[efa.EfaInterface, ...] = ()
    if isinstance(layout, str) or isinstance(layout, list):
        preset = layout if isinstance(layout, str) else None
        custom = layout if isinstance(layout, list) else None
        if preset is not None and preset not in efa.PRESETS:
            r.problems.append(
                problem(
                    r.path("efaLayout"),
                    preset,
                    "one of "
                    + ", ".join(efa.PRESETS)
                    + ", or a list of {networkCardIndex, deviceIndex, interfaceType}",
                    "pick a preset",
                )
            )
        elif instance_type:
            try:
                interfaces = tuple(efa.layout_for(instance_type, preset, custom))
            except ConfigError as err:
                r.problems.extend(f"{r.path('efaLayout')}: {p}" for p in err.problems)
            else:
                r.problems.extend(
                    f"{r.path('efaLayout')}: {p}" for p in efa.validate_layout(instance_type, list(interfaces))
                )
    else:
        r.problems.append(
            problem(
                r.path("efaLayout"),
                layout,
                "a preset name or a list of interfaces",
                "write efaLayout: one-per-nci-group",
            )
        )
    desired = r.integer("desiredSize", None, minimum=0)
    release, ami_id, release_version = _read_ami(r, kubernetes_version)
    if group_arn and mode != "self-managed":
        r.problems.append(
            problem(
                r.path("capacityReservationResourceGroupArn"),
                group_arn,
                "a resource group only with mode: self-managed (EKS documents managed capacity-block groups "
                "with one CapacityReservationId each)",
                "set mode: self-managed, or list each UltraServer's cr-... id in capacityReservationIds "
                "(one managed group each)",
            )
        )
    window = _read_window(r.child("reservationWindow"))
    group = GpuNodeGroupSettings(
        name=name,
        availability_zone=zone,
        ultraserver_type=us_type or "u-p6e-gb200x72",
        capacity_reservation_ids=tuple(ids),
        capacity_reservation_resource_group_arn=group_arn,
        ultraserver_count=count,
        mode=mode,
        instance_type=instance_type,
        efa_layout=layout if isinstance(layout, str) else "custom",
        efa_interfaces=interfaces,
        desired_size=desired,
        release_version=release_version,
        ami_release=release,
        ami_id=ami_id,
        imds_hop_limit=r.integer("imdsHopLimit", 1, minimum=1, maximum=2),
        root_volume_size_gib=r.integer("rootVolumeSizeGiB", 200, minimum=50, maximum=16384),
        local_storage=r.string("localStorage", "RAID0", choices=("RAID0", "RAID10", "Mount")),
        labels=r.string_map("labels", {}),
        reservation_window=window,
        scale_to_zero_for_upgrade=r.boolean("scaleToZeroForUpgrade", False),
        auto_repair=r.boolean("autoRepair", False),
    )
    r.finish()
    full = group.instances_per_ultraserver * (count if group_arn else 1)
    if full > capacity_block.NODES_PER_GROUP_MAX:
        r.problems.append(
            problem(
                r.path("ultraserverCount"),
                count,
                f"at most {capacity_block.NODES_PER_GROUP_MAX} nodes per node group "
                f"({capacity_block.NODES_PER_GROUP_MAX // group.instances_per_ultraserver} x {group.ultraserver_type})",
                "split the UltraServers over several groups",
            )
        )
    if group.auto_repair and mode == "self-managed":
        r.problems.append(
            problem(
                r.path("autoRepair"),
                True,
                "autoRepair only with mode: managed (EKS auto repair works with managed node groups and Karpenter)",
                "remove autoRepair, or use mode: managed",
            )
        )
    if us_type and desired is not None:
        if desired > full:
            r.problems.append(
                problem(
                    r.path("desiredSize"),
                    desired,
                    f"0 to {full} (the instances in the group's UltraServer capacity)",
                    f"set desiredSize: {full} or remove it",
                )
            )
    if zone and network.existing and zone not in network.gpu_subnet_ids:
        r.problems.append(
            problem(
                r.path("availabilityZone"),
                zone,
                "a zone listed in network.gpuSubnetIds (GPU subnets must sit in the reservation's zone)",
                f"add gpuSubnetIds: {{{zone}: [subnet-...]}} to the network settings",
            )
        )
    return group if len(r.problems) == errors_before else None


def _read_chart(r: Reader, chart: str) -> ReleaseSettings:
    values = r.any_map("values")
    for path in charts.unknown_value_paths(chart, values):
        r.problems.append(
            problem(
                r.path(f"values.{path}"),
                path,
                f"a value key of the pinned {chart} chart",
                "fix the key or remove it (see the chart's values.yaml)",
            )
        )
    settings = ReleaseSettings(
        version=r.string("version", None, pattern=r"v?\d+\.\d+\.\d+", allowed="a chart version such as 25.3.4"),
        values=values,
        namespace=r.string(
            "namespace", None, pattern=r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", allowed="a namespace name"
        ),
        timeout_seconds=r.integer("timeoutSeconds", 900, minimum=60, maximum=7200),
        atomic=r.boolean("atomic", True),
        settings_key=r.key,
    )
    r.finish()
    return settings


def reachability_problems(
    project: str, cluster: ClusterSettings, kubernetes: KubernetesSettings, auto_deploy: bool
) -> list[str]:
    """Stacks whose deployer could not reach the API server: refused here instead of a Helm timeout at deploy."""
    if cluster.public_access_cidrs:
        return []
    problems = []
    if kubernetes.layer == "same-stack" and cluster.deployer_access != "in-vpc":
        problems.append(
            problem(
                f"{project}:kubernetes.layer",
                kubernetes.layer,
                "with a private-only endpoint (no cluster.endpointPublicAccessCidrs), a deployer that reaches it",
                "either list the deployer's CIDRs in cluster.endpointPublicAccessCidrs, or run pulumi up inside the "
                "VPC and say so with cluster.deployerAccess: in-vpc (and cluster.deployerRunnerLabels naming the "
                "self-hosted runner), or set kubernetes.layer: separate-stack and deploy the kubernetes-layer/ project "
                "from inside the VPC",
            )
        )
    if auto_deploy and SELF_HOSTED_LABEL not in cluster.deployer_runner_labels:
        problems.append(
            problem(
                f"{project}:cluster.deployerRunnerLabels",
                list(cluster.deployer_runner_labels),
                f"with a private-only endpoint and autoDeploy, a '{SELF_HOSTED_LABEL}' runner inside the VPC "
                "(GitHub-hosted runners cannot reach a private endpoint)",
                "name your in-VPC runner, e.g. deployerRunnerLabels: [self-hosted, gb200-vpc]",
            )
        )
    return problems


def parse_settings(config: Mapping[str, Any], project: str = PROJECT, stack: str = "dev") -> Settings:  # noqa: C901 -- replaced by the declarative settings model
    """Validate raw stack config (keys like ``ultraserver-eks:cluster`` and ``aws:region``) into Settings.

    Values may be parsed YAML or the JSON strings Pulumi passes to programs. Raises ConfigError
    listing every problem; returns only when the whole stack is valid.
    """
    problems: list[str] = []
    values: dict[str, Any] = {}
    for key, value in config.items():
        if isinstance(value, str) and value[:1] in "{[":
            try:
                value = json.loads(value)
            except json.JSONDecodeError:
                pass
        values[key] = value
    for key in values:
        namespace, _, name = key.partition(":")
        if namespace == project and name not in SECTIONS:
            problems.append(problem(key, values[key], "sections " + ", ".join(SECTIONS), "rename or remove it"))

    region = values.get("aws:region")
    if not isinstance(region, str) or not re.fullmatch(r"[a-z]{2}(-[a-z]+)+-\d", region):
        problems.append(
            problem("aws:region", region, "an AWS region such as us-east-1", "pulumi config set aws:region us-east-1")
        )
        region = "us-east-1"

    def section(name: str) -> Reader:
        return Reader(f"{project}:{name}", values.get(f"{project}:{name}"), problems)

    cluster_reader = section("cluster")
    allow_anywhere = cluster_reader.boolean("allowPublicEndpointFromAnywhere", False)
    cluster = _read_cluster(cluster_reader, allow_anywhere)
    cluster_reader.finish()
    network_reader = section("network")
    network = _read_network(network_reader, region)
    network_reader.finish()

    sys_reader = section("systemNodeGroup")
    system = SystemNodeGroupSettings(
        instance_type=sys_reader.string(
            "instanceType", "m7g.xlarge", pattern=r"[a-z0-9-]+\.[a-z0-9]+", allowed="an EC2 instance type"
        ),
        ami_type=sys_reader.string(
            "amiType", "AL2023_ARM_64_STANDARD", choices=("AL2023_ARM_64_STANDARD", "AL2023_x86_64_STANDARD")
        ),
        desired_size=sys_reader.integer("desiredSize", 2, minimum=1, maximum=100),
        min_size=sys_reader.integer("minSize", 2, minimum=1, maximum=100),
        max_size=sys_reader.integer("maxSize", 4, minimum=1, maximum=100),
        disk_size_gib=sys_reader.integer("diskSizeGiB", 50, minimum=20, maximum=16384),
    )
    sys_reader.finish()
    if not (system.min_size <= system.desired_size <= system.max_size):
        problems.append(
            problem(
                f"{project}:systemNodeGroup",
                f"min {system.min_size}, desired {system.desired_size}, max {system.max_size}",
                "minSize <= desiredSize <= maxSize",
                "adjust the sizes",
            )
        )

    gpu_list = values.get(f"{project}:gpuNodeGroups")
    groups: list[GpuNodeGroupSettings] = []
    if gpu_list is not None and not isinstance(gpu_list, list):
        problems.append(
            problem(f"{project}:gpuNodeGroups", gpu_list, "a list of node groups", "write gpuNodeGroups as a YAML list")
        )
    for index, raw in enumerate(gpu_list or []):
        group = _read_gpu_group(
            Reader(f"{project}:gpuNodeGroups[{index}]", raw, problems), network, region, cluster.kubernetes_version
        )
        if group:
            groups.append(group)
    names = [g.name for g in groups]
    for name in {n for n in names if names.count(n) > 1}:
        problems.append(
            problem(f"{project}:gpuNodeGroups", name, "unique group names", f"rename one of the groups called {name}")
        )
    reservation_ids = [i for g in groups for i in g.capacity_reservation_ids]
    for rid in {i for i in reservation_ids if reservation_ids.count(i) > 1}:
        problems.append(
            problem(
                f"{project}:gpuNodeGroups",
                rid,
                "each capacity reservation in one group only",
                f"remove {rid} from all but one group",
            )
        )

    addon_reader = section("addons")
    version_pattern = r"v\d+\.\d+\.\d+-eksbuild\.\d+"
    addon_allowed = "an EKS add-on version such as v1.20.4-eksbuild.1"
    addons = AddonSettings(
        vpc_cni=addon_reader.string("vpcCni", "", pattern=version_pattern, allowed=addon_allowed),
        coredns=addon_reader.string("coredns", "", pattern=version_pattern, allowed=addon_allowed),
        kube_proxy=addon_reader.string("kubeProxy", "", pattern=version_pattern, allowed=addon_allowed),
        pod_identity_agent=addon_reader.string("podIdentityAgent", "", pattern=version_pattern, allowed=addon_allowed),
    )
    addon_reader.finish()
    if addons.vpc_cni and _version_tuple(addons.vpc_cni)[:3] < MIN_VPC_CNI:
        problems.append(
            problem(
                f"{project}:addons.vpcCni",
                addons.vpc_cni,
                "v1.18.5 or newer (EFA-only interfaces need it)",
                "remove vpcCni to take the EKS default, or pin a newer version",
            )
        )

    k8s_reader = section("kubernetes")
    prometheus_reader = k8s_reader.child("prometheusStack")
    kubernetes = KubernetesSettings(
        gpu_operator=_read_chart(k8s_reader.child("gpuOperator"), charts.GPU_OPERATOR),
        dra_driver=_read_chart(k8s_reader.child("draDriver"), charts.DRA_DRIVER),
        efa_device_plugin=_read_chart(k8s_reader.child("efaDevicePlugin"), charts.EFA_DEVICE_PLUGIN),
        layer=k8s_reader.string("layer", "same-stack", choices=KUBERNETES_LAYERS) or "same-stack",
        node_termination_handler=_read_chart(
            k8s_reader.child("nodeTerminationHandler"), charts.NODE_TERMINATION_HANDLER
        ),
        prometheus_stack_enabled=prometheus_reader.boolean("enabled", False),
        prometheus_stack=_read_chart(prometheus_reader, charts.KUBE_PROMETHEUS_STACK),
    )
    k8s_reader.finish()

    imex_reader = section("imexCheck")
    raw_nodes = imex_reader.raw_value("nodes")
    if isinstance(raw_nodes, str) and raw_nodes != "all":
        problems.append(
            problem(
                f"{project}:imexCheck.nodes", raw_nodes, 'an integer 2 to 18, or "all"', "write nodes: all or nodes: 4"
            )
        )
    imex = ImexCheckSettings(
        enabled=imex_reader.boolean("enabled", True),
        nodes=None if isinstance(raw_nodes, str) else imex_reader.integer("nodes", 2, minimum=2, maximum=18),
        threshold_gbps=imex_reader.number("thresholdGbps", 700.0, minimum=1.0),
    )
    imex_reader.finish()
    for group in groups:
        # A grouped fleet runs one job per UltraServer: compare with the nodes of one of its UltraServers.
        per_ultraserver = group.nodes_per_group // max(1, group.ultraservers // group.node_groups)
        if imex.enabled and imex.nodes is not None and imex.nodes > per_ultraserver > 0:
            problems.append(
                problem(
                    f"{project}:imexCheck.nodes",
                    imex.nodes,
                    f"at most the {per_ultraserver} nodes of one UltraServer of group {group.name}",
                    "lower nodes or disable the check",
                )
            )
            break

    efa_reader = section("efaCheck")
    efa_check = EfaCheckSettings(
        enabled=efa_reader.boolean("enabled", None),
        ultraservers=efa_reader.integer("ultraservers", 2, minimum=2, maximum=1000),
        nodes_per_ultraserver=efa_reader.integer("nodesPerUltraserver", 1, minimum=1, maximum=18),
        min_bus_bandwidth_gbps=efa_reader.number("minBusBandwidthGbps", None, minimum=1.0),
    )
    efa_reader.finish()

    health_reader = section("health")
    drift_reader = health_reader.child("driftCheck")
    health = HealthSettings(
        node_monitoring_agent=health_reader.boolean("nodeMonitoringAgent", True),
        drift_check_enabled=drift_reader.boolean("enabled", True),
        drift_check_schedule=drift_reader.string(
            "schedule",
            "*/30 * * * *",
            pattern=r"(\S+\s+){4}\S+",
            allowed="a five-field cron schedule such as '*/30 * * * *'",
        ),
    )
    drift_reader.finish()
    health_reader.finish()

    auto_deploy = values.get(f"{project}:autoDeploy", False)
    if not isinstance(auto_deploy, bool):
        problems.append(
            problem(f"{project}:autoDeploy", auto_deploy, "true or false", "write autoDeploy: true or false")
        )
        auto_deploy = False

    problems.extend(reachability_problems(project, cluster, kubernetes, auto_deploy))
    if problems:
        raise ConfigError(problems)
    return Settings(
        project=project,
        stack=stack,
        region=region,
        cluster=cluster,
        network=network,
        system_node_group=system,
        gpu_node_groups=tuple(groups),
        addons=addons,
        kubernetes=kubernetes,
        imex_check=imex,
        auto_deploy=auto_deploy,
        efa_check=efa_check,
        health=health,
    )
