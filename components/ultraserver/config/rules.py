"""Cross-field rules of the stack settings: plain functions of valid-shaped Settings that return Problems.

Each rule names the stack key as written, the bad value, what is allowed and the fix. ``RULES`` lists them all;
``config.load`` runs them after the model accepted every field's type and bounds. Rules for GPU node groups live in
``config.gpu_rules``, for derived AWS names in ``config.names``, for versions outside the set in ``version_rules``.
"""

from __future__ import annotations

import hashlib
import ipaddress
from collections.abc import Callable
from datetime import date
from pathlib import Path

from ultraserver.config.argument_rules import tag_problems
from ultraserver.config.aws_identity import kubeconfig_identity
from ultraserver.config.chart_rules import chart_values, release_waits, unread_chart_values
from ultraserver.config.check_model import NcclCheckSettings
from ultraserver.config.device_rules import device_mode
from ultraserver.config.gpu_rules import GPU_RULES
from ultraserver.config.kueue_rules import kueue_settings
from ultraserver.config.model import Settings, key
from ultraserver.config.names import name_problems
from ultraserver.config.network_rules import local_zone_nats, network_problems
from ultraserver.config.reachability import deployer_reach
from ultraserver.config.version_rules import (
    chart_kubernetes_versions,
    dra_driver_forward_only,
    dra_driver_prerequisites,
    support_window,
    untested_versions,
)
from ultraserver.facts.aws import aws_ids, limits, network
from ultraserver.facts.hardware import efa, instances, ultraservers
from ultraserver.facts.pins import manifests
from ultraserver.facts.pins.charts import version_at_least
from ultraserver.problems import Problem

Rule = Callable[[Settings, date], list[Problem]]

MIN_VPC_CNI = "1.18.5"
"""EFA-only interfaces need VPC CNI v1.18.5 or later (EKS UltraServer guide)."""
_INTERNET = (ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0"))


def _covers_internet(cidrs: tuple[str, ...]) -> bool:
    networks = [ipaddress.ip_network(c) for c in cidrs]
    for everything in _INTERNET:
        same = [n for n in networks if n.version == everything.version]
        if any(everything == c for c in ipaddress.collapse_addresses(same)):  # type: ignore[type-var]
            return True
    return False


def public_endpoint(s: Settings, today: date) -> list[Problem]:
    """Public CIDRs: at most 40, and the whole internet only when asked for."""
    c, at = s.cluster, key(s, "cluster.endpointPublicAccessCidrs")
    found = []
    if limits.over(limits.PUBLIC_ACCESS_CIDRS, len(c.public_access_cidrs)):
        found.append(
            Problem(
                at,
                f"{len(c.public_access_cidrs)} CIDRs",
                f"at most {limits.PUBLIC_ACCESS_CIDRS.maximum} ({limits.PUBLIC_ACCESS_CIDRS.source})",
                "merge ranges into larger CIDRs",
            )
        )
    for index, cidr in enumerate(c.public_access_cidrs):
        if hidden := network.not_on_the_internet(cidr):
            found.append(
                Problem(
                    f"{at}[{index}]",
                    cidr,
                    f"public addresses: {cidr} lies in {hidden}, which the internet never carries, and a public "
                    "endpoint sees the deployer's public (NAT) address, so this range admits nobody",
                    "list the public address your office, VPN or runner egresses from (e.g. `curl "
                    "https://checkip.amazonaws.com`); to reach the API from inside the VPC, set "
                    "cluster.deployerAccess: in-vpc with deployerCidrs instead",
                )
            )
    if c.public_access_cidrs and _covers_internet(c.public_access_cidrs) and not c.allow_public_endpoint_from_anywhere:
        whole = [x for x in c.public_access_cidrs if ipaddress.ip_network(x).prefixlen == 0]
        found.append(
            Problem(
                at,
                whole[0] if whole else list(c.public_access_cidrs),
                "specific CIDRs (these cover the whole internet, like 0.0.0.0/0; the API must not be open to it)",
                "list your office/VPN CIDRs, or set allowPublicEndpointFromAnywhere: true if you really mean it",
            )
        )
    return found


def admin_principals(s: Settings, today: date) -> list[Problem]:
    """Each principal once across the admin and preview lists, whatever its path: one access entry each (EKS refuses
    a second entry for a principal with a 409), named after the principal."""
    seen: dict[tuple[str, ...], str] = {}
    found = []
    lists = (
        ("adminPrincipalArns", s.cluster.admin_principal_arns),
        ("previewPrincipalArns", s.cluster.preview_principal_arns),
    )
    for field, arns in lists:
        for index, arn in enumerate(arns):
            where = f"cluster.{field}[{index}]"
            identity = aws_ids.principal_parts(arn) or (arn,)
            partition = aws_ids.partition_of(s.region)
            if partition and identity[0] != partition:
                found.append(
                    Problem(
                        key(s, where),
                        arn,
                        f"an ARN of the {partition} partition, the partition of {s.region} (EKS refuses an access "
                        "entry for a principal of another partition)",
                        f"write arn:{partition}:iam::... for a principal of this partition's account",
                    )
                )
            if identity in seen:
                found.append(
                    Problem(
                        key(s, where), arn, f"each principal once (it is {seen[identity]} too)", "remove the duplicate"
                    )
                )
            seen.setdefault(identity, where)
    return found


def stack_tags(s: Settings, today: date) -> list[Problem]:
    """Tags AWS accepts (argument_rules.tag_problems), and the count with the toolkit's own tags."""
    at, found = key(s, "cluster.tags"), tag_problems(s.cluster.tags, key(s, "cluster.tags"))
    room = limits.TAGS_PER_RESOURCE.maximum - len(aws_ids.TOOLKIT_TAG_KEYS)
    if len(s.cluster.tags) > room:
        found.append(
            Problem(
                at,
                f"{len(s.cluster.tags)} tags",
                f"at most {room}: AWS allows {limits.TAGS_PER_RESOURCE.maximum} per resource and the toolkit adds "
                f"up to {len(aws_ids.TOOLKIT_TAG_KEYS)}",
                "drop some tags",
            )
        )
    return found


def _zone_allowed(zone: str, region: str) -> str | None:
    if zone == region:
        return f"a zone of {region} such as {region}a, not the region itself"
    if not zone.startswith(f"{region}"):
        return f"a zone of {region} (the stack's region)"
    return None


def _zones_of_other_regions(s: Settings) -> list[Problem]:
    """Each control-plane zone not of the stack's region."""
    at = key(s, "network.availabilityZones")
    return [
        Problem(f"{at}[{index}]", zone, why, "correct the zone")
        for index, zone in enumerate(s.network.availability_zones)
        if (why := _zone_allowed(zone, s.region))
    ]


def network_zones(s: Settings, today: date) -> list[Problem]:
    """Control-plane zones of the stack's region, at least two of them for a new VPC."""
    n, found = s.network, _zones_of_other_regions(s)
    if not n.existing and len(set(n.availability_zones)) < 2:
        found.append(
            Problem(
                key(s, "network.availabilityZones"),
                list(n.availability_zones),
                f"at least two regional zones of {s.region}",
                f"set availabilityZones: [{s.region}a, {s.region}b]",
            )
        )
    return found


def network_vpc(s: Settings, today: date) -> list[Problem]:
    """The network's own rules (a program's Network runs them too), less a zone of another region (refused once, by
    network_zones); an existing VPC's GPU zones in the stack's region.

    Rules that need more than the network settings stay here: zones judged against the stack's region
    (availabilityZones, gpuSubnetIds), two zones named after it, and localZoneNatGateways against the GPU groups'
    zones (network_rules.local_zone_nats)."""
    other_regions = {p.key for p in _zones_of_other_regions(s)}
    found = [p for p in network_problems(s.network, key(s, "network")) if p.key not in other_regions]
    for zone in s.network.gpu_subnet_ids if s.network.existing else ():
        why = _zone_allowed(zone, s.region)
        if why:
            found.append(Problem(key(s, f"network.gpuSubnetIds.{zone}"), zone, why, "use the reservation's zone"))
    return found


def system_nodes(s: Settings, today: date) -> list[Problem]:
    """Sizes in order, a CPU instance type, and an instance architecture matching the AMI type."""
    g, found = s.system_node_group, []
    if not g.min_size <= g.desired_size <= g.max_size:
        found.append(
            Problem(
                key(s, "systemNodeGroup"),
                f"min {g.min_size}, desired {g.desired_size}, max {g.max_size}",
                "minSize <= desiredSize <= maxSize",
                "adjust the sizes",
            )
        )
    if instances.accelerated(g.instance_type):
        # A GPU (or other accelerator) system node idles its accelerators, and the GB200 AMI checks catch it only
        # later, under a policy named for the AMI.
        found.append(
            Problem(
                key(s, "systemNodeGroup.instanceType"),
                g.instance_type,
                "a CPU instance type: system nodes run the controllers, GPU jobs run on gpuNodeGroups",
                f"set instanceType: {instances.SYSTEM_INSTANCE_TYPE} (the default), or another Graviton CPU type",
                suggestion=instances.SYSTEM_INSTANCE_TYPE,
            )
        )
        return found
    arch, wanted = instances.architecture(g.instance_type), instances.SYSTEM_AMI_TYPES[g.ami_type]
    if arch and arch != wanted:
        other = next(t for t, a in instances.SYSTEM_AMI_TYPES.items() if a == arch)
        found.append(
            Problem(
                key(s, "systemNodeGroup.instanceType"),
                g.instance_type,
                f"an {wanted} instance type for amiType {g.ami_type}",
                f"set amiType: {other}, or pick an {wanted} type (e.g. m7g.xlarge)",
            )
        )
    return found


def addons(s: Settings, today: date) -> list[Problem]:
    """VPC CNI new enough for EFA-only interfaces."""
    version = s.addons.vpc_cni
    if version and not version_at_least(version.partition("-")[0], MIN_VPC_CNI):
        return [
            Problem(
                key(s, "addons.vpcCni"),
                version,
                f"v{MIN_VPC_CNI} or newer (EFA-only interfaces need it)",
                "remove vpcCni to take the toolkit's pin, or pin a newer version",
            )
        ]
    return []


def checks(s: Settings, today: date) -> list[Problem]:
    """The IMEX and EFA checks fit the UltraServers the stack has."""
    found = []
    # Spares are no job's: the checks fit the active nodes of an UltraServer.
    smallest = min((g.active_nodes_per_ultraserver for g in s.gpu_node_groups), default=0)
    nodes = s.imex_check.nodes
    for group in s.gpu_node_groups:
        # A grouped fleet runs one job per UltraServer: compare with the active nodes of one of its UltraServers.
        per_ultraserver = group.active_nodes_per_ultraserver
        if s.imex_check.enabled and nodes is not None and nodes > per_ultraserver > 0:
            found.append(
                Problem(
                    key(s, "imexCheck.nodes"),
                    nodes,
                    f"at most the {per_ultraserver} nodes of one UltraServer of group {group.name}",
                    'lower nodes, use nodes: "all", or disable the check',
                )
            )
            break
    total = sum(g.ultraservers for g in s.gpu_node_groups)
    e = s.efa_check
    if e.enabled and e.ultraservers > total:
        found.append(
            Problem(
                key(s, "efaCheck.ultraservers"), e.ultraservers, f"at most the stack's {total} UltraServers", "lower it"
            )
        )
    if (e.enabled or (e.enabled is None and total >= 2)) and smallest and e.nodes_per_ultraserver > smallest:
        found.append(
            Problem(key(s, "efaCheck.nodesPerUltraserver"), e.nodes_per_ultraserver, f"at most {smallest}", "lower it")
        )
    return found + _unreachable_floors(s)


def _unreachable_floors(s: Settings) -> list[Problem]:
    """Check floors no run can reach: above NVLink's per-GPU bandwidth each way (nvbandwidth and NCCL, GB/s), or
    above a node's EFA bandwidth (the EFA check, Gbps, which the layout caps)."""
    nvlink, per_gpu = ultraservers.NVLINK_GPU_GBYTES_PER_DIRECTION, "GB/s: NVLink 5's 1.8 TB/s per GPU is 900 each way"
    nccl_default = NcclCheckSettings.model_fields["min_bus_bandwidth_gbytes"].default
    floors = [
        ("imexCheck.thresholdGbps", s.imex_check.threshold_gbps, nvlink, per_gpu, ultraservers.NVLINK_THRESHOLD_GBPS),
        ("ncclCheck.minBusBandwidthGbytes", s.nccl_check.min_bus_bandwidth_gbytes, nvlink, per_gpu, nccl_default),
    ]
    layouts = [efa.summarize_layout(g.instance_type, list(g.efa_interfaces)) for g in s.gpu_node_groups]
    efa_gbps = max((layout.efa_bandwidth_gbps for layout in layouts), default=0)
    if s.efa_check.min_bus_bandwidth_gbps is not None and efa_gbps:
        why = "Gbps: a node's EFA bandwidth in the stack's best layout"
        floors.append(("efaCheck.minBusBandwidthGbps", s.efa_check.min_bus_bandwidth_gbps, efa_gbps, why, None))
    return [
        Problem(
            key(s, where),
            value,
            f"at most {ceiling:g} {why}; a higher floor fails every run",
            f"lower it (default {default:g})" if default else "lower it, or remove it to take half the EFA bandwidth",
        )
        for where, value, ceiling, why, default in floors
        if value > ceiling
    ]


def alert_topic(s: Settings, today: date) -> list[Problem]:
    """An existing alert topic lives in the stack's region: "The targets you associate with a rule must be in the same
    Region as the rule" (AWS re:Post knowledge center, sns-not-getting-eventbridge-notification)."""
    arn = s.alerts.sns_topic_arn
    if not arn or not s.alerts_enabled or arn.split(":")[3] == s.region:
        return []
    return [
        Problem(
            key(s, "alerts.snsTopicArn"),
            arn,
            f"a topic in the same region as the stack ({s.region}); EventBridge rules target their own region",
            f"create the topic in {s.region}, or leave snsTopicArn empty to let the stack create one",
        )
    ]


def manifest_mirror(s: Settings, today: date) -> list[Problem]:
    """A local manifestMirror directory holds every pinned manifest under its pinned name, with the pinned digest:
    `pulumi preview` and `up` read them from there (resources/pinned_manifest.py) and stop at the first one missing.
    An https:// mirror is not asked: the plan stays offline."""
    mirror = s.kubernetes.manifest_mirror
    if not mirror.startswith("/"):
        return []
    folder, found = Path(mirror), []
    for name, pin in sorted(manifests.by_file_name().items()):
        path = folder / name
        try:
            seen = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as err:
            why = "no such file" if isinstance(err, FileNotFoundError) else err.strerror or type(err).__name__
            found.append(
                Problem(
                    key(s, "kubernetes.manifestMirror"),
                    mirror,
                    f"a directory holding every pinned manifest under its pinned name; {path}: {why}",
                    f"copy {pin.url} to {path} (its sha256 must be {pin.sha256}), or remove manifestMirror to read "
                    "the pinned URLs",
                )
            )
            continue
        if seen != pin.sha256:
            found.append(
                Problem(
                    key(s, "kubernetes.manifestMirror"),
                    mirror,
                    f"the pinned file: {path} has sha256 {seen}, the pin (facts/pins/manifests.py) is {pin.sha256}",
                    f"copy the file again from {pin.url}",
                )
            )
    return found


def derived_names(s: Settings, today: date) -> list[Problem]:
    """Every physical name the program derives fits its AWS limit."""
    return name_problems(s)


RULES: tuple[Rule, ...] = (
    public_endpoint,
    deployer_reach,
    admin_principals,
    stack_tags,
    network_zones,
    network_vpc,
    local_zone_nats,
    system_nodes,
    *GPU_RULES,
    addons,
    chart_values,
    unread_chart_values,
    device_mode,
    release_waits,
    kueue_settings,
    checks,
    support_window,
    untested_versions,
    chart_kubernetes_versions,
    dra_driver_forward_only,
    dra_driver_prerequisites,
    alert_topic,
    manifest_mirror,
    derived_names,
    kubeconfig_identity,
)


def run_rules(s: Settings, today: date) -> list[Problem]:
    """Every rule's problems, errors and warnings."""
    return [p for rule in RULES for p in rule(s, today)]
