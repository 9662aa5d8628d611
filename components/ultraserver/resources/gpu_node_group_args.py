"""GpuNodeGroupArgs: the inputs of a capacity-block GPU node group, checked once where they arrive.

A program that imports the component hands them in directly and ``__post_init__`` checks every rule; a stack file's
settings were checked by the settings model, so ``from_settings`` builds the arguments without checking them again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime

import pulumi
from pydantic.alias_generators import to_snake

from ultraserver import clock
from ultraserver.config.blocks import StandbyGroup
from ultraserver.config.expiry import program_blocks_ended
from ultraserver.config.node_group_spec import NodeGroupInputs, NodeGroupSpec, node_group_spec
from ultraserver.config.settings import GpuNodeGroupSettings
from ultraserver.facts import ami, instances
from ultraserver.facts.capacity_blocks import (
    CapacityBlock,
    ReservationWindow,
    desired_size_problem,
    full_size,
    reservation_id_problem,
    resource_group_arn_problem,
    window_problems,
)
from ultraserver.facts.efa import (
    EfaInterface,
    instance_facts,
    layout_for,
    validate_layout,
)
from ultraserver.facts.iam import IMDS_HOP_LIMITS
from ultraserver.facts.scheduling import ULTRASERVER_LABEL
from ultraserver.facts.successive_blocks import blocks_problems
from ultraserver.facts.tags import EFA_LAYOUT, RESERVATION_ZONE
from ultraserver.facts.ultraservers import DEFAULT_TYPE, NODE_GROUP_MODES, NodeGroupMode, UltraServerTypeName
from ultraserver.problems import ConfigError, Described, Problem, under
from ultraserver.resources.cluster import Cluster, ClusterCoreData


@dataclass
class GpuNodeGroupArgs:
    """Inputs of a capacity-block GPU node group."""

    cluster: Cluster | ClusterCoreData
    """The cluster the nodes join: a Cluster component, or its ClusterCoreData (e.g. from another stack)."""
    subnet_ids: pulumi.Input[Sequence[pulumi.Input[str]]]
    """Subnets in the reservation's Availability Zone only (EKS rejects others for capacity blocks)."""
    security_group_ids: Sequence[pulumi.Input[str]] = ()
    """Extra security groups (the EFA group) for every interface; the cluster security group is always added."""
    mode: NodeGroupMode = "managed"
    """managed (EKS managed node group) or self-managed (Auto Scaling group)."""
    instance_type: str = instances.GB200_INSTANCE_TYPE
    """EC2 instance type, set in the launch template."""
    interfaces: list[EfaInterface] | None = None
    """EFA layout from efa.layout_for; the type's default preset when unset."""
    capacity_reservation_id: pulumi.Input[str] | None = None
    """The UltraServer's Capacity Reservation ID (one group per UltraServer)."""
    capacity_reservation_resource_group_arn: pulumi.Input[str] | None = None
    """Capacity-reservation resource group ARN; self-managed groups only."""
    ultraserver_type: UltraServerTypeName = DEFAULT_TYPE
    """u-p6e-gb200x36 (9 instances) or u-p6e-gb200x72 (18 instances)."""
    ultraserver_count: int = 1
    """UltraServers this group covers; above 1 only with a resource group."""
    desired_size: int | None = None
    """Nodes to run; all instances of the UltraServers when unset."""
    node_role_arn: pulumi.Input[str] | None = None
    """Existing node role; a NodeRole is created when unset."""
    instance_profile_arn: pulumi.Input[str] | None = None
    """Instance profile of node_role_arn; required with it in self-managed mode."""
    release_version: str | None = None
    """Pinned EKS AMI release version (1.35.6-20260714); the facts/ami.py default for the cluster's minor when unset."""
    image_id: pulumi.Input[str] | None = None
    """Custom AMI ID (with ami_release); replaces the EKS AMI."""
    ami_release: str | None = None
    """Release of the custom AMI (v20251103 or later), so its NVIDIA driver can be checked."""
    labels: dict[str, str] = field(default_factory=dict)
    """Kubernetes node labels."""
    reservation_window: ReservationWindow | None = None
    """Capacity Block start and end, for scheduled scaling."""
    capacity_blocks: Sequence[CapacityBlock] = ()
    """Successive blocks (this group's reservation of each, none with a resource group, and the window) instead of
    capacity_reservation_id and reservation_window: the template targets the block current at ``now``."""
    scale_to_zero_for_upgrade: bool = False
    """Hold the group at 0 nodes so its AMI, template, labels or taints can change (docs/deploy.md, upgrades)."""
    local_storage: instances.LocalStorage = "RAID0"
    """nodeadm local storage strategy for the instance store."""
    root_volume_size_gib: int = instances.GPU_ROOT_VOLUME_GIB
    """Root volume size in GiB."""
    kms_key_id: pulumi.Input[str] | None = None
    """KMS key for the root volume; the account default when unset."""
    imds_hop_limit: int = 1
    """IMDSv2 hop limit: 1 keeps pods off the instance metadata; 2 only if a pod must reach it."""
    tags: dict[str, str] = field(default_factory=dict)
    """AWS tags for every resource."""
    now: datetime | None = None
    """Clock for the reservation window and the release date check; the current UTC time when unset."""
    auto_repair: bool = False
    """EKS node auto repair (managed mode only; see docs/health.md for why it is off by default)."""
    settings_spec: dataclasses.InitVar[NodeGroupSpec | None] = None
    """Set by ``from_settings`` only: the values the stack settings derived; they checked every rule already, so the
    rules are not run twice."""
    spec: NodeGroupSpec = field(init=False)
    """What the group comes to at ``now`` (layout, full size, blocks and the current one, AMI release): from the
    settings, or derived here once from the arguments; the component only reads it."""

    @classmethod
    def from_settings(
        cls,
        group: GpuNodeGroupSettings,
        position: int,
        *,
        standby: StandbyGroup | None = None,
        cluster: Cluster | ClusterCoreData,
        subnet_ids: pulumi.Input[Sequence[pulumi.Input[str]]],
        security_group_ids: Sequence[pulumi.Input[str]],
        tags: dict[str, str],
        now: datetime | None,
    ) -> GpuNodeGroupArgs:
        """The arguments of UltraServer ``position`` of a stack's group entry (one group, or a grouped fleet; with
        ``standby``, the group of that one block), carrying the values the settings derived.

        The settings checked every rule already, so the arguments are not checked again.
        """
        version = core_of(cluster).kubernetes_version
        spec = group.spec(position, now or clock.now(), version, standby.block if standby is not None else None)
        return cls(
            cluster=cluster,
            subnet_ids=subnet_ids,
            security_group_ids=security_group_ids,
            mode=group.mode,
            instance_type=group.instance_type,
            interfaces=list(spec.interfaces),
            capacity_reservation_id=None if spec.successive else spec.reservation_id,
            capacity_reservation_resource_group_arn=group.capacity_reservation_resource_group_arn or None,
            ultraserver_type=group.ultraserver_type,
            ultraserver_count=group.ultraserver_count if group.grouped else 1,
            desired_size=group.desired_size,
            release_version=spec.release_version or None,
            image_id=group.ami_id or None,
            ami_release=group.ami_release or None,
            imds_hop_limit=group.imds_hop_limit,
            # The IMEX check and workloads select one UltraServer (one NVLink domain) by this label.
            labels={**group.labels, ULTRASERVER_LABEL: group.node_group_names[position]},
            reservation_window=None if spec.successive else spec.block.window,
            capacity_blocks=spec.blocks if spec.successive else (),
            now=now,
            scale_to_zero_for_upgrade=group.scale_to_zero_for_upgrade,
            auto_repair=group.auto_repair,
            local_storage=group.local_storage,
            root_volume_size_gib=group.root_volume_size_gib,
            tags={**tags, EFA_LAYOUT: group.efa_layout, RESERVATION_ZONE: group.availability_zone},
            settings_spec=spec,
        )

    def __post_init__(self, settings_spec: NodeGroupSpec | None) -> None:
        """Check the arguments where a program hands them in (stack files are checked by their settings), then
        derive the spec from them once; a stack file's spec comes from its settings."""
        if settings_spec is not None:
            self.spec = settings_spec
            return
        problems = args_problems(self)
        if problems:
            raise ConfigError(problems)
        self.spec = self._derived_spec()

    def _derived_spec(self) -> NodeGroupSpec:
        """The spec of checked arguments: the same facts the settings derive theirs from."""
        reservation = self.capacity_reservation_id
        # An Output reservation stays an argument (reservation_target); the block carries plain IDs only.
        one = CapacityBlock((reservation,) if isinstance(reservation, str) else (), self.reservation_window)
        interfaces = self.interfaces if self.interfaces is not None else layout_for(self.instance_type, None, None)
        version = core_of(self.cluster).kubernetes_version
        given = NodeGroupInputs(
            instance_type=self.instance_type,
            interfaces=tuple(interfaces),
            full_size=full_size(self.ultraserver_type, self.ultraserver_count),
            desired_size=self.desired_size,
            blocks=tuple(self.capacity_blocks) or (one,),
            successive=bool(self.capacity_blocks),
            release_version=self.release_version or ami.default_release_version(version),
            kubernetes_version=version,
            custom_image=self.image_id is not None,
            managed=self.mode == "managed",
            hold_at_zero=self.scale_to_zero_for_upgrade,
        )
        return node_group_spec(given, self.now or clock.now())

    @property
    def reservation_target(self) -> pulumi.Input[str] | None:
        """The reservation the launch template targets: the one given, else the current block's (None: grouped)."""
        return self.capacity_reservation_id if self.capacity_reservation_id is not None else self.spec.reservation_id


ARGS = "GpuNodeGroupArgs"
_ARG = under(ARGS)
"""The key of an argument as the program passed it: GpuNodeGroupArgs.capacity_reservation_id."""
_FACTS = under(ARGS, to_snake)
"""The same for a facts check that names its fields as a stack file writes them (reservationWindow.scaleDownLeadMinutes
-> GpuNodeGroupArgs.reservation_window.scale_down_lead_minutes)."""


def core_of(cluster: Cluster | ClusterCoreData) -> ClusterCoreData:
    """The cluster's core data, from the component or as given."""
    return cluster.core if isinstance(cluster, Cluster) else cluster


def _ami_problems(args: GpuNodeGroupArgs, version: str, today: date) -> list[Problem]:
    """Why the AMI choice is unusable."""
    if args.image_id is not None or args.ami_release is not None:
        if args.image_id is None or args.ami_release is None:
            return [
                Problem(
                    _ARG("image_id") if args.image_id is None else _ARG("ami_release"),
                    None,
                    "image_id and ami_release together: a custom AMI needs both (the release shows its NVIDIA driver)",
                    "give both, or to pin the EKS AMI set release_version instead",
                )
            ]
        return [p for p in [ami.release_problem(args.ami_release, key=_ARG("ami_release"))] if p]
    if args.release_version is None:
        if ami.default_release_version(version):
            return []
        return [
            Problem(
                _ARG("release_version"),
                None,
                f"a release version: no default for Kubernetes {version} (defaults exist for "
                f"{', '.join(ami.RELEASE_VERSIONS)})",
                f"set release_version to the value of SSM {ami.SSM_ROOT}/{version}/{ami.VARIANT}/recommended/"
                "release_version",
            )
        ]
    return [
        p for p in [ami.release_version_problem(args.release_version, version, today, _ARG("release_version"))] if p
    ]


def _target_problems(args: GpuNodeGroupArgs) -> list[Problem]:
    """Why the capacity reservation target is unusable: exactly one kind, each ID checked once."""
    if args.capacity_blocks and (args.capacity_reservation_id is not None or args.reservation_window is not None):
        return [
            Problem(
                _ARG("capacity_blocks"),
                Described(f"{len(args.capacity_blocks)} blocks"),
                "capacity_blocks, or capacity_reservation_id / reservation_window, not both",
                "drop one of them",
            )
        ]
    problems = []
    reservation_id: pulumi.Input[str] | None
    if args.capacity_blocks:
        # blocks_problems checks every block's reservation IDs.
        problems += blocks_problems(args.capacity_blocks, under(_ARG("capacity_blocks"), to_snake))
        first = args.capacity_blocks[0].reservation_ids
        reservation_id = first[0] if first else None
    else:
        reservation_id = args.capacity_reservation_id
    group_arn = args.capacity_reservation_resource_group_arn
    if (reservation_id is None) == (group_arn is None):
        return problems + [
            Problem(
                _ARG("capacity_reservation_id"),
                reservation_id,
                "exactly one of capacity_reservation_id and capacity_reservation_resource_group_arn: the reservation "
                "ID targets one UltraServer, the resource group ARN a grouped fleet",
                "set exactly one",
            )
        ]
    # Outputs come from resources whose shape AWS already enforces; only plain strings are checked.
    if not args.capacity_blocks and isinstance(reservation_id, str):
        problems += [p for p in [reservation_id_problem(reservation_id, _ARG("capacity_reservation_id"))] if p]
    if isinstance(group_arn, str):
        problems += [
            p for p in [resource_group_arn_problem(group_arn, _ARG("capacity_reservation_resource_group_arn"))] if p
        ]
    if args.reservation_window is not None:
        problems += window_problems(args.reservation_window, under(_ARG("reservation_window"), to_snake))
    return problems


def _group_problems(args: GpuNodeGroupArgs) -> list[Problem]:
    """Why the group's mode, count and node options do not fit together."""
    problems = []
    if args.mode not in NODE_GROUP_MODES:
        problems.append(
            Problem(_ARG("mode"), args.mode, "one of " + ", ".join(NODE_GROUP_MODES), "use a node-group mode")
        )
    if args.capacity_reservation_id is not None and args.ultraserver_count != 1:
        problems.append(
            Problem(
                _ARG("ultraserver_count"),
                args.ultraserver_count,
                "1 with a capacity reservation ID (it covers one UltraServer); more only with a resource group",
                "make one group per UltraServer, or a self-managed group on a resource group",
            )
        )
    if args.capacity_reservation_resource_group_arn is not None and args.mode == "managed":
        problems.append(
            Problem(
                _ARG("capacity_reservation_resource_group_arn"),
                args.capacity_reservation_resource_group_arn,
                "no resource group with mode managed: managed node groups target one capacity reservation each (the "
                "only target EKS documents for capacity blocks)",
                "use one managed group per UltraServer with its capacity_reservation_id, or mode self-managed",
            )
        )
    if args.auto_repair and args.mode != "managed":
        problems.append(
            Problem(
                _ARG("auto_repair"),
                True,
                "auto_repair only with mode managed: EKS node auto repair works only with managed node groups "
                "(and Karpenter)",
                "remove auto_repair or use a managed group",
            )
        )
    if args.mode == "self-managed" and args.node_role_arn is not None and args.instance_profile_arn is None:
        problems.append(
            Problem(
                _ARG("instance_profile_arn"),
                None,
                "the instance profile of node_role_arn (required with it for self-managed nodes)",
                "pass instance_profile_arn",
            )
        )
    return problems


def _node_problems(args: GpuNodeGroupArgs) -> list[Problem]:
    """Why the sizes, instance type, EFA layout, storage or metadata options are unusable."""
    problems = []
    if args.local_storage not in instances.LOCAL_STORAGE:
        problems.append(
            Problem(
                _ARG("local_storage"),
                args.local_storage,
                "a nodeadm strategy: " + ", ".join(instances.LOCAL_STORAGE),
                "use RAID0",
            )
        )
    if args.imds_hop_limit not in IMDS_HOP_LIMITS:
        problems.append(Problem(_ARG("imds_hop_limit"), args.imds_hop_limit, "1 or 2", "use 1 (default) or 2"))
    sizes = _raised(lambda: full_size(args.ultraserver_type, args.ultraserver_count, _FACTS))
    problems += sizes
    if not sizes and args.desired_size is not None:
        too_big = desired_size_problem(
            args.ultraserver_type, args.ultraserver_count, args.desired_size, _ARG("desired_size")
        )
        problems += [too_big] if too_big else []
    kind = _raised(lambda: instance_facts(args.instance_type, _ARG("instance_type")))
    problems += kind
    if not kind and args.interfaces is not None:
        problems += validate_layout(args.instance_type, args.interfaces, _ARG("interfaces"))
    return problems


def args_problems(args: GpuNodeGroupArgs) -> list[Problem]:
    """Every problem of a component's arguments, keyed by the Python argument names."""
    if not isinstance(args.cluster, Cluster | ClusterCoreData):
        return [
            Problem(
                _ARG("cluster"),
                type(args.cluster).__name__,
                "a Cluster component or its ClusterCoreData",
                "pass the Cluster (or cluster.core)",
            )
        ]
    version = core_of(args.cluster).kubernetes_version
    today = (args.now or clock.now()).date()
    problems = _group_problems(args) + _target_problems(args) + _node_problems(args)
    given = tuple(args.capacity_blocks) or (
        (CapacityBlock((), args.reservation_window),) if args.reservation_window else ()
    )
    key = f"{_ARG('capacity_blocks')}[{len(given) - 1}]" if args.capacity_blocks else _ARG("reservation_window")
    problems += program_blocks_ended(given, key, args.now or clock.now())
    version_problems = _raised(lambda: ami.checked_version(version, _ARG("cluster.kubernetes_version")))
    return problems + (version_problems or _ami_problems(args, version, today))


def _raised(check: Callable[[], object]) -> list[Problem]:
    """The problems a check raises as ConfigError; empty when it passes."""
    try:
        check()
    except ConfigError as error:
        return error.items
    return []
