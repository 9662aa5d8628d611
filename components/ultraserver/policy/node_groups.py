"""Rules for node groups: capacity blocks, upgrades at zero, the managed node group quota, reservation zones."""

from __future__ import annotations

import dataclasses
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from ultraserver.facts.aws import limits
from ultraserver.facts.aws.aws_ids import RESERVATION_ZONE as TAG_RESERVATION_ZONE
from ultraserver.facts.aws.aws_ids import UPGRADE_SAFE as TAG_UPGRADE_SAFE
from ultraserver.facts.aws.limits import managed_node_group_problem
from ultraserver.facts.hardware.ultraservers import NODE_INSTANCE_TYPES
from ultraserver.policy.model import (
    ADVISORY,
    AUTOSCALING_GROUP,
    EKS_MANAGED_NODE_GROUP,
    MANAGED_NODE_GROUP_TYPES,
    NODE_GROUP,
    SUBNET,
    PlanResource,
    Rule,
    StackIndex,
    as_int,
    as_list,
    get_path,
    is_unknown,
    tags_of,
)
from ultraserver.policy.rolling import changed_fields, rolling_fields
from ultraserver.problems import Described, Problem

CAPACITY_BLOCK = "CAPACITY_BLOCK"
UPGRADE_RULE = "capacity-block-upgrade-at-zero"
CAPACITY_BLOCK_MARKET = "capacity-block"
ZONE_ID = re.compile(r"[a-z]{2,4}[0-9]+-az[0-9]+")


def _market_type(template: PlanResource | None) -> Any:
    """The launch template's instance market type."""
    return get_path(template.inputs, "instanceMarketOptions", "marketType") if template is not None else None


def capacity_block_groups(index: StackIndex) -> list[tuple[PlanResource, PlanResource | None]]:
    """(group, launch template) for every group that runs in a capacity block, by its own or its template's say."""
    out = []
    for group in index.of_type(*MANAGED_NODE_GROUP_TYPES, AUTOSCALING_GROUP):
        template = index.launch_template_of(group)
        if group.inputs.get("capacityType") == CAPACITY_BLOCK or _market_type(template) == CAPACITY_BLOCK_MARKET:
            out.append((group, template))
    return out


def check_capacity_block_group(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """A capacity-block managed group: custom launch template, CAPACITY_BLOCK, no instance types."""
    out = []
    for group, _ in capacity_block_groups(StackIndex(resources)):
        if group.type == AUTOSCALING_GROUP:
            continue
        props = group.inputs
        if not isinstance(props.get("launchTemplate"), Mapping):
            out.append(
                Problem(
                    group.urn,
                    Described("no launch template"),
                    "a custom launch template (a capacity-block managed node group needs one)",
                    "pass launch_template={id, version} built for the reservation",
                )
            )
        if props.get("capacityType") != CAPACITY_BLOCK:
            out.append(
                Problem(
                    group.urn,
                    props.get("capacityType"),
                    f"capacityType {CAPACITY_BLOCK}: the launch template targets a capacity block",
                    'set capacity_type="CAPACITY_BLOCK"',
                )
            )
        if as_list(props.get("instanceTypes")):
            out.append(
                Problem(
                    group.urn,
                    as_list(props.get("instanceTypes")),
                    "no instanceTypes on a capacity-block node group",
                    "leave it unset and put the instance type in the launch template",
                )
            )
    return out


def check_capacity_block_template(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """A capacity-block group's template: market type capacity-block, a reservation target, an instance type."""
    out = []
    seen: set[str] = set()
    for _group, template in capacity_block_groups(StackIndex(resources)):
        if template is None or template.urn in seen:
            continue
        seen.add(template.urn)
        props = template.inputs
        if _market_type(template) != CAPACITY_BLOCK_MARKET:
            out.append(
                Problem(
                    template.urn,
                    _market_type(template),
                    f"instanceMarketOptions.marketType {CAPACITY_BLOCK_MARKET} on a capacity-block group's template",
                    'set market_type="capacity-block"',
                )
            )
        target = get_path(props, "capacityReservationSpecification", "capacityReservationTarget")
        if not isinstance(target, Mapping) or not (
            target.get("capacityReservationId") or target.get("capacityReservationResourceGroupArn")
        ):
            out.append(
                Problem(
                    template.urn,
                    target,
                    "a capacity reservation target (capacityReservationId or capacityReservationResourceGroupArn)",
                    "set capacity_reservation_specification.capacity_reservation_target to the block's "
                    "capacity_reservation_id (or its resource group ARN)",
                )
            )
        if not props.get("instanceType"):
            out.append(
                Problem(
                    template.urn,
                    props.get("instanceType"),
                    "an instanceType in the launch template (capacity blocks need it there)",
                    f"set it to the UltraServer type's node type ({' or '.join(NODE_INSTANCE_TYPES)})",
                )
            )
    return out


def _desired(group: PlanResource) -> Any:
    """Desired size of a managed node group or an autoscaling group."""
    if group.type == AUTOSCALING_GROUP:
        return group.inputs.get("desiredCapacity")
    return get_path(group.inputs, "scalingConfig", "desiredSize")


def deployed_state(resources: Sequence[PlanResource]) -> dict[str, dict[str, Any]]:
    """What rolls each capacity-block group, from the deployed state's resources; the rule's ``deployed`` option."""
    return {
        group.name: rolling_fields(group, template) for group, template in capacity_block_groups(StackIndex(resources))
    }


def check_upgrade_at_zero(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """A change that rolls a capacity-block group's nodes happens only while the group is at desired size 0."""
    deployed: Mapping[str, Any] = opts["deployed"]
    out = []
    for group, template in capacity_block_groups(StackIndex(resources)):
        desired = as_int(_desired(group))
        if is_unknown(_desired(group)) or desired == 0:
            continue
        if tags_of(group.inputs).get(TAG_UPGRADE_SAFE) == "true":
            out.append(
                Problem(
                    group.urn,
                    Described(f"desired size {desired} with the tag {TAG_UPGRADE_SAFE}=true"),
                    "desired size 0 while the group is tagged for an upgrade",
                    "scale it to 0 (desired and min) for the upgrade",
                )
            )
        before = deployed.get(group.name) or deployed.get(group.urn)
        if not isinstance(before, Mapping):
            continue
        changed = changed_fields(before, rolling_fields(group, template))
        if changed:
            shown = ", ".join(changed[:5]) + (f" and {len(changed) - 5} more" if len(changed) > 5 else "")
            out.append(
                Problem(
                    group.urn,
                    Described(f"{shown} changes on a capacity-block group with desired size {desired}"),
                    "changes that roll nodes only at desired size 0: a roll replaces every node, and a capacity block "
                    "has no spare capacity",
                    "set scaleToZeroForUpgrade: true and deploy, then make the change, then set it back "
                    "(docs/deploy.md, Upgrading GPU nodes)",
                )
            )
    return out


def check_node_group_quota(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """Managed node groups per cluster within the EKS quota."""
    index = StackIndex(resources)
    counts: Counter[str] = Counter()
    for group in index.of_type(*MANAGED_NODE_GROUP_TYPES):
        parent = index.by_urn.get(group.parent or "")
        if group.type == NODE_GROUP and parent is not None and parent.type == EKS_MANAGED_NODE_GROUP:
            continue  # pulumi-eks's own child of a ManagedNodeGroup: already counted.
        counts[index.cluster_of(group) or ""] += 1
    quota = int(opts["quota"])
    return [
        dataclasses.replace(why, fix=f"{why.fix}; then set this rule's quota option to the raised value")
        for cluster, count in counts.items()
        if (why := managed_node_group_problem(count, cluster, quota))
    ]


def reservation_zone(index: StackIndex, group: PlanResource) -> str | None:
    """The zone of the group's reservation, from its tag or its launch template's."""
    template = index.launch_template_of(group)
    zone = tags_of(group.inputs).get(TAG_RESERVATION_ZONE)
    if zone is None and template is not None:
        zone = tags_of(template.inputs).get(TAG_RESERVATION_ZONE)
    return zone


def check_subnets_in_zone(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """Every GPU group's in-stack subnets lie in its reservation's zone (unresolvable ones are skipped)."""
    index = StackIndex(resources)
    out = []
    groups = {g.urn: g for g in index.gpu_groups()}
    for group in index.of_type(*MANAGED_NODE_GROUP_TYPES, AUTOSCALING_GROUP):
        zone = reservation_zone(index, group)
        if zone is not None:
            groups.setdefault(group.urn, group)
    for group in groups.values():
        zone = reservation_zone(index, group)
        if zone is None:
            continue
        key = "availabilityZoneId" if ZONE_ID.fullmatch(zone) else "availabilityZone"
        wrong = [
            s.name
            for s in index.deps(group, SUBNET)
            if isinstance(s.inputs.get(key), str) and s.inputs.get(key) != zone
        ]
        if wrong:
            out.append(
                Problem(
                    group.urn,
                    Described(f"subnets {', '.join(wrong)} outside the reservation's zone {zone}"),
                    f"subnets in {zone} only: capacity-block nodes launch only there",
                    "give the group only subnets in that zone",
                )
            )
    return out


RULES: tuple[Rule, ...] = (
    Rule(
        name="capacity-block-node-group",
        description="Capacity-block managed node groups use a custom launch template, capacity type "
        "CAPACITY_BLOCK and no instance types on the group.",
        fix="Set launch_template and capacity_type=CAPACITY_BLOCK; move the instance type to the template.",
        check_stack=check_capacity_block_group,
    ),
    Rule(
        name="capacity-block-launch-template",
        description="A capacity-block group's launch template has market type capacity-block, a reservation "
        "target and the instance type.",
        fix="Set instance_market_options.market_type=capacity-block and the capacity reservation target.",
        check_stack=check_capacity_block_template,
    ),
    Rule(
        name=UPGRADE_RULE,
        description="A change that rolls a capacity-block group's nodes (Kubernetes version, AMI release, launch "
        "template content, labels, taints) happens only with desired size 0.",
        fix="Set scaleToZeroForUpgrade, deploy, make the change, deploy, then scale back up.",
        check_stack=check_upgrade_at_zero,
        config_schema={
            "deployed": {
                "type": "object",
                "description": "Deployed state per group name or URN, as `ultraserver plan --deployed FILE` builds "
                "it: {version, releaseVersion, amiType, labels, taints, imageId, amiRelease, launchTemplate}; "
                "only the fields given are compared.",
            }
        },
        defaults={"deployed": {}},
    ),
    Rule(
        name="eks-managed-node-group-quota",
        description="Managed node groups per cluster stay within the EKS quota (30 by default, adjustable: a warning).",
        fix="Raise the quota (Service Quotas, L-6D54EA21) and this rule's quota option, or use self-managed groups.",
        level=ADVISORY,
        check_stack=check_node_group_quota,
        config_schema={"quota": {"type": "integer", "description": "Managed node groups allowed per cluster."}},
        defaults={"quota": limits.MANAGED_NODE_GROUPS_PER_CLUSTER.maximum},
    ),
    Rule(
        name="gpu-subnets-in-reservation-zone",
        description="Every GPU node group's subnets are in its capacity reservation's availability zone.",
        fix="Give the group only subnets in the reservation's zone.",
        check_stack=check_subnets_in_zone,
    ),
)
