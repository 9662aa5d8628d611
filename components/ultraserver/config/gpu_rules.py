"""Rules of the GPU node groups: reservations, instance types, AMIs, storage, labels, sizes, zones."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import date

from ultraserver.config.blocks import created_node_groups, standby_problems, switch_problems
from ultraserver.config.expiry import expiry_problems
from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.label_rules import label_allowed
from ultraserver.config.model import Settings, key
from ultraserver.config.release_rules import amis, known_bad_releases
from ultraserver.config.spare_rules import spares
from ultraserver.facts.aws import aws_ids, limits
from ultraserver.facts.capacity import capacity_blocks, successive_blocks
from ultraserver.facts.hardware import instances
from ultraserver.problems import WARNING, ConfigError, Described, Problem, under

GroupRule = Callable[[GpuNodeGroupSettings, str, str, date], list[Problem]]
"""A rule of one group entry: the entry, its key, the cluster's Kubernetes minor and the day; the stack file and
a program's component arguments are checked by the same rules."""


def reservations(g: GpuNodeGroupSettings, at: str, version: str, today: date) -> list[Problem]:
    """Reservation ids or (self-managed) a resource group; each id once."""
    ids, found = list(g.blocks[0].reservation_ids), []
    if bool(ids) == g.grouped and not (g.grouped and g.capacity_blocks):
        found.append(
            Problem(
                f"{at}.capacityReservationIds",
                ids,
                "either capacityReservationIds (one per UltraServer) or "
                "capacityReservationResourceGroupArn, not both and not neither",
                "list the cr-... id of each UltraServer's capacity reservation",
            )
        )
    if ids and "ultraserver_count" in g.model_fields_set:
        found.append(
            Problem(
                f"{at}.ultraserverCount",
                g.ultraserver_count,
                "ultraserverCount only with capacityReservationResourceGroupArn",
                "remove it: each reservation id is one UltraServer",
            )
        )
    if g.grouped and g.mode != "self-managed":
        found.append(
            Problem(
                f"{at}.capacityReservationResourceGroupArn",
                g.capacity_reservation_resource_group_arn,
                "resource-group targets only with mode: self-managed (EKS documents one reservation id per "
                "capacity-block managed node group)",
                "set mode: self-managed, or list capacityReservationIds (one managed group per UltraServer)",
            )
        )
    every = list(g.all_reservation_ids)
    if len(set(every)) != len(every):
        key = f"{at}.capacityBlocks" if g.capacity_blocks else f"{at}.capacityReservationIds"
        found.append(Problem(key, every, "each reservation once", "remove the duplicate id"))
    return found


def block_sequence(g: GpuNodeGroupSettings, at: str, version: str, today: date) -> list[Problem]:
    """capacityBlocks: no single-block keys, one UltraServer count, time order; a switch over several warns."""
    if not g.capacity_blocks:
        return standby_problems(g, at)
    found = [
        Problem(
            f"{at}.{key}",
            value,
            "capacityBlocks or capacityReservationIds + reservationWindow, not both",
            f"move {key} into the entries of capacityBlocks",
        )
        for key, value in (
            ("capacityReservationIds", g.capacity_reservation_ids),
            ("reservationWindow", g.reservation_window),
        )
        if value
    ]
    wanted = len(g.blocks[0].reservation_ids)
    for index, block in enumerate(g.blocks[1:], start=1):
        if not g.grouped and len(block.reservation_ids) != wanted:
            found.append(
                Problem(
                    f"{at}.capacityBlocks[{index}].capacityReservationIds",
                    list(block.reservation_ids),
                    f"{wanted} reservation(s), like capacityBlocks[0]: node group n moves from block to block "
                    "on the n-th id",
                    "list one reservation per UltraServer in the same order in every block",
                )
            )
    found += successive_blocks.sequence_problems(g.blocks, under(f"{at}.capacityBlocks"))
    found += successive_blocks.schedule_count_problems(g.blocks, f"{at}.capacityBlocks")
    return found + switch_problems(g, at)


def zone_offers(g: GpuNodeGroupSettings, at: str, version: str, today: date) -> list[Problem]:
    """The zone is one the catalog knows offers the instance type, or the group says it is not in the catalog."""
    known = instances.OFFERED_ZONES.get(g.instance_type)
    if known is None or g.availability_zone in known or g.zone_not_in_catalog:
        return []
    return [
        Problem(
            f"{at}.availabilityZone",
            g.availability_zone,
            f"a zone that offers {g.instance_type}: {', '.join(known)} (toolkit catalog, facts/hardware/instances.py)",
            f"use {known[0]}; if AWS now offers the type in {g.availability_zone}, set zoneNotInCatalog: true "
            "and run ultraserver preflight, which asks EC2",
        )
    ]


def _resource_group_elsewhere(s: Settings, g: GpuNodeGroupSettings, at: str) -> list[Problem]:
    """A capacity-reservation resource group of the stack's region and partition: a launch template's
    CapacityReservationResourceGroupArn targets reservations of its own region only (EC2 API Reference,
    CapacityReservationTarget), so one of another region never starts an instance."""
    arn = g.capacity_reservation_resource_group_arn
    partition = aws_ids.partition_of(s.region)
    if not arn or (aws_ids.arn_part(arn, 3) == s.region and aws_ids.arn_part(arn, 1) in (partition, None)):
        return []
    return [
        Problem(
            f"{at}.capacityReservationResourceGroupArn",
            arn,
            f"a resource group of the stack's region {s.region} (arn:{partition}:resource-groups:{s.region}:...)",
            f"create the resource group in {s.region} around the block's reservations, or move the stack to the "
            "reservations' region (aws:region)",
        )
    ]


def placement(s: Settings, g: GpuNodeGroupSettings, at: str) -> list[Problem]:
    """The zone in the stack's region (and in gpuSubnetIds for an existing VPC); the resource group's region."""
    if elsewhere := _resource_group_elsewhere(s, g, at):
        return elsewhere
    if not g.availability_zone.startswith(s.region) or g.availability_zone == s.region:
        return [
            Problem(
                f"{at}.availabilityZone",
                g.availability_zone,
                f"a zone of the stack's region {s.region}",
                "use the zone of the capacity reservation",
            )
        ]
    if s.network.existing and s.network.gpu_subnet_ids.get(g.availability_zone) == ():
        # Listed with no subnet: the group would have nowhere to launch (its Args refuse it at deploy).
        return [
            Problem(
                key(s, f"network.gpuSubnetIds.{g.availability_zone}"),
                [],
                "one subnet or more, in the capacity reservation's zone",
                f"list the GPU subnets of {g.availability_zone}: gpuSubnetIds: {{{g.availability_zone}: [subnet-...]}}",
            )
        ]
    if s.network.existing and g.availability_zone not in s.network.gpu_subnet_ids:
        return [
            Problem(
                f"{at}.availabilityZone",
                g.availability_zone,
                "a zone listed in network.gpuSubnetIds (GPU subnets must sit in the reservation's zone)",
                f"add gpuSubnetIds: {{{g.availability_zone}: [subnet-...]}} to the network settings",
            )
        ]
    return []


def efa_layout(g: GpuNodeGroupSettings, at: str, version: str, today: date) -> list[Problem]:
    """The EFA layout fits the instance type's network cards."""
    try:
        g.efa_interfaces  # noqa: B018 - resolving the layout validates it
    except ConfigError as err:
        # The model resolves the layout under its own key (efaLayout); the group's position goes in front.
        return [dataclasses.replace(p, key=f"{at}.{p.key}") for p in err.items]
    return []


def sizes(g: GpuNodeGroupSettings, at: str, version: str, today: date) -> list[Problem]:
    """Desired size within the reserved instances and the managed-node-group limit."""
    found = []
    if g.desired_size is not None and g.desired_size > g.full_size:
        found.append(
            Problem(
                f"{at}.desiredSize",
                g.desired_size,
                f"0 to {g.full_size} (the instances in the group's UltraServer capacity)",
                f"set desiredSize: {g.full_size} or remove it",
            )
        )
    # The EKS quota binds managed groups only; an Auto Scaling group has no documented instance cap
    # (limits.AUTO_SCALING_GROUPS_PER_REGION), so self-managed groups are counted in across_groups instead.
    limit = limits.NODES_PER_MANAGED_NODE_GROUP
    if g.mode == "managed" and limits.over(limit, g.full_size):
        per_group = limit.maximum // g.instances_per_ultraserver
        found.append(
            Problem(
                f"{at}.ultraserverCount" if g.grouped else at,
                g.ultraserver_count if g.grouped else g.full_size,
                f"at most {limit.maximum} nodes per node group ({per_group} x {g.ultraserver_type})",
                f"split the UltraServers over several groups (limit: {limit.source})",
            )
        )
    if g.auto_repair and g.mode != "managed":
        found.append(Problem(f"{at}.autoRepair", True, "autoRepair only on managed groups", "remove autoRepair"))
    return found


def _windowless(g: GpuNodeGroupSettings, at: str) -> Problem:
    """A capacity-block group with no window: nothing scales it for its block (preflight fails it while active)."""
    stuck = g.mode != "managed" and g.desired_size is None  # node_group_spec creates it at 0 and nothing raises it
    size = 0 if stuck else g.desired_size if g.desired_size is not None else g.full_size
    return Problem(
        f"{at}.reservationWindow",
        Described(
            f"not set, nor capacityBlocks: the group stays at {size} of {g.full_size} nodes"
            + (" for good" if stuck else "")
            + " (no scale-up at the block's start, no scale-down or drain before EC2 reclaims it 60 minutes before "
            "its end)"
        ),
        "the block's start and end, or capacityBlocks",
        "copy StartDate and EndDate from aws ec2 describe-capacity-blocks into reservationWindow (preflight fails "
        "a group without them while its reservations are active)",
        WARNING,
    )


def window(g: GpuNodeGroupSettings, at: str, version: str, today: date) -> list[Problem]:
    """Each window ends after it starts, leaves room for the scale-down, fits the block schedule (ended ones:
    config.expiry); a group with none is warned about."""
    if g.reservation_window is None and not g.capacity_blocks:
        return [_windowless(g, at)]
    found = []
    for index, block in enumerate(g.blocks):
        w = block.window
        if w is None:
            continue
        key = f"{at}.capacityBlocks[{index}]" if g.capacity_blocks else f"{at}.reservationWindow"
        if w.end <= w.start:
            found.append(
                Problem(
                    f"{key}.end",
                    w.end.isoformat(),
                    "a time after start",
                    "copy start and end from describe-capacity-blocks",
                )
            )
            continue
        found += capacity_blocks.window_problems(w, under(key))
        found += capacity_blocks.aws_schedule_problems(w, key)
    return found


def storage_and_labels(g: GpuNodeGroupSettings, at: str, version: str, today: date) -> list[Problem]:
    """RAID10 needs 4 instance-store disks; node labels the kubelet may set."""
    found = []
    disks = instances.instance_store_disks(g.instance_type)
    if g.local_storage == "RAID10" and disks is not None and disks < instances.RAID10_MIN_DISKS:
        found.append(
            Problem(
                f"{at}.localStorage",
                g.local_storage,
                f"RAID0 or Mount: {g.instance_type} has {disks} instance-store disks and nodeadm needs "
                f"{instances.RAID10_MIN_DISKS} for RAID10",
                f"set localStorage: RAID0 (AWS's recommendation for {g.instance_type})",
            )
        )
    for name, value in g.labels.items():
        why = label_allowed(name, value)
        if why:
            found.append(Problem(f"{at}.labels.{name}", value, why, "rename the label or change its value"))
    return found


GROUP_RULES: tuple[GroupRule, ...] = (
    reservations,
    block_sequence,
    zone_offers,
    efa_layout,
    sizes,
    spares,
    window,
    expiry_problems,
    amis,
    known_bad_releases,
    storage_and_labels,
)


def group_problems(g: GpuNodeGroupSettings, at: str, version: str, today: date) -> list[Problem]:
    """Every rule of one group entry, under the key ``at``, on a cluster of Kubernetes ``version``."""
    return [p for rule in GROUP_RULES for p in rule(g, at, version, today)]


def each_group(s: Settings, today: date) -> list[Problem]:
    """Every group rule on every group; each group's zone in the stack's region and network."""
    found = []
    for index, g in enumerate(s.gpu_node_groups):
        at = f"{s.project}:gpuNodeGroups[{index}]"
        zone = placement(s, g, at)
        found += zone + [
            p
            for p in group_problems(g, at, s.cluster.kubernetes_version, today)
            # a zone of another region is one problem, not two
            if not (zone and p.key == f"{at}.availabilityZone")
        ]
    return found


def across_groups(s: Settings, today: date) -> list[Problem]:
    """Unique group names (derived ones too) and reservations; the managed node group quota."""
    at, found = f"{s.project}:gpuNodeGroups", []
    names = [n for g in s.gpu_node_groups for n in g.node_group_names]
    for name in sorted({n for n in names if names.count(n) > 1}):
        found.append(Problem(at, name, "unique group names", f"rename one of the groups called {name}"))
    ids = [i for g in s.gpu_node_groups for i in g.all_reservation_ids]
    for rid in sorted({i for i in ids if ids.count(i) > 1}):
        found.append(
            Problem(at, rid, "each capacity reservation in one group only", f"remove {rid} from all but one group")
        )
    return found + _quota_problems(s, at)


def _quota_problems(s: Settings, at: str) -> list[Problem]:
    """The stack's node groups against the managed node group and Auto Scaling group quotas (warnings)."""
    found = []
    managed = 1 + sum(created_node_groups(g) for g in s.gpu_node_groups if g.mode == "managed")
    quota = limits.MANAGED_NODE_GROUPS_PER_CLUSTER
    if limits.over(quota, managed):
        found.append(
            Problem(
                at,
                f"{managed} managed node groups (system group included)",
                f"at most {quota.maximum} by default ({quota.source})",
                "use mode: self-managed for some UltraServers, or raise the quota: aws service-quotas "
                "request-service-quota-increase --service-code eks "
                f"--quota-code {limits.MANAGED_NODE_GROUP_QUOTA_CODE}",
                WARNING,
            )
        )
    asgs = sum(created_node_groups(g) for g in s.gpu_node_groups if g.mode != "managed")
    asg_quota = limits.AUTO_SCALING_GROUPS_PER_REGION
    if limits.over(asg_quota, asgs):
        found.append(
            Problem(
                at,
                f"{asgs} self-managed Auto Scaling groups",
                f"at most {asg_quota.maximum} per region by default, other stacks' included ({asg_quota.source})",
                "group more UltraServers per entry (ultraserverCount), or raise the quota in Service Quotas "
                "(Amazon EC2 Auto Scaling, 'Auto Scaling groups per region')",
                WARNING,
            )
        )
    return found


GPU_RULES: tuple[Callable[[Settings, date], list[Problem]], ...] = (each_group, across_groups)
