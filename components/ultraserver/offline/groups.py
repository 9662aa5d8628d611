"""Per-GPU-group facts of a plan as plain data: what a person checks before ``pulumi up`` on capacity blocks.

Pure: reads the recorded resources (the node group or Auto Scaling group, its launch template, subnets and
scheduled actions) and the reservation windows from the settings, and a clock. Renderers (terminal, HTML)
only lay the rows out. Everything a group's component declares is found through the plan, so resources other
components add to a group (more scheduled actions, more blocks) show up without changes here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from ultraserver.config.blocks import block_views, standby_timelines
from ultraserver.facts.aws.aws_ids import AMI_RELEASE, AMI_SSM_PARAMETER, EFA_LAYOUT, RESERVATION_ZONE, UPGRADE_SAFE
from ultraserver.facts.capacity.capacity_blocks import ACTIVE, ENDED, FUTURE, ReservationWindow, window_state
from ultraserver.facts.hardware import efa
from ultraserver.facts.kubernetes import spares as spares_facts
from ultraserver.offline.engine import Plan
from ultraserver.offline.resource import AUTOSCALING_GROUP, LAUNCH_TEMPLATE, NODE_GROUP, SUBNET, PlanResource

SCHEDULE = "aws:autoscaling/schedule:Schedule"


@dataclass(frozen=True)
class GroupView:
    """One GPU node group as the plan shows it: labelled rows plus the data the card picture needs."""

    name: str
    instance_type: str
    layout: str
    interfaces: tuple[efa.EfaInterface, ...]
    rows: tuple[tuple[str, str], ...]
    window_states: tuple[str, ...] = field(default=())

    def row(self, label: str) -> str:
        """The value of one row (KeyError when the row is absent)."""
        return dict(self.rows)[label]


def clock_line(now: datetime, injected: bool = False) -> str:
    """The one line naming the clock every time-dependent value was computed against."""
    return f"clock: {iso_minute(now)} ({'injected' if injected else 'now'})"


def iso_minute(moment: datetime) -> str:
    """UTC to the minute, e.g. 2026-11-23T02:50Z."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%MZ")


def span(delta: timedelta) -> str:
    """A duration a person reads at a glance: 8d 8h, 5h 10m, 12m."""
    minutes = int(abs(delta).total_seconds() // 60)
    days, rest = divmod(minutes, 24 * 60)
    hours, mins = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    return f"{hours}h {mins}m" if hours else f"{mins}m"


def describe_window(window: ReservationWindow, now: datetime) -> str:
    """A window's state with its times and how far away they are."""
    state = window_state(window, now)
    times = f"{iso_minute(window.start)} to {iso_minute(window.end)}"
    if state == FUTURE:
        return f"{state}: {times} (starts in {span(window.start - now)})"
    if state == ACTIVE:
        down_at, reclaim = window.scale_down_at, window.reclaim_at
        scale = f"scales to 0 in {span(down_at - now)}" if now < down_at else "scaled to 0 for the end"
        left = f"reclaimed in {span(reclaim - now)}" if now < reclaim else "being reclaimed"
        return f"{state}: {times} ({left}, ends in {span(window.end - now)}; {scale})"
    return f"{state}: {times} (ended {span(now - window.end)} ago)"


def _lookup(inputs: Mapping[str, Any], path: str) -> Any:
    value: Any = inputs
    for part in path.split("."):
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def tags_of(resource: PlanResource) -> dict[str, str]:
    """A resource's tags: a mapping, or an Auto Scaling group's list of {key, value} entries."""
    tags = resource.inputs.get("tags") or {}
    if isinstance(tags, list):
        return {str(t.get("key")): str(t.get("value")) for t in tags if isinstance(t, Mapping)}
    return {str(k): str(v) for k, v in tags.items()} if isinstance(tags, Mapping) else {}


def _sizes(resource: PlanResource) -> tuple[int, int, int]:
    """(min, desired, max) of a managed node group or an Auto Scaling group."""
    if resource.type == NODE_GROUP:
        keys = ("scalingConfig.minSize", "scalingConfig.desiredSize", "scalingConfig.maxSize")
    else:
        keys = ("minSize", "desiredCapacity", "maxSize")
    low, want, high = (int(_lookup(resource.inputs, k) or 0) for k in keys)
    return low, want, high


def _reservation(template: PlanResource) -> str:
    target = _lookup(template.inputs, "capacityReservationSpecification.capacityReservationTarget") or {}
    if target.get("capacityReservationId"):
        return str(target["capacityReservationId"])
    if target.get("capacityReservationResourceGroupArn"):
        return f"resource group {target['capacityReservationResourceGroupArn']}"
    return "none (no capacity reservation target)"


def _subnets(group: PlanResource, by_urn: Mapping[str, PlanResource]) -> tuple[str, str]:
    """(zones, subnets with CIDRs) of a group: declared subnets with their CIDR, existing ones by id."""
    ids = group.inputs.get("subnetIds") or group.inputs.get("vpcZoneIdentifiers") or []
    declared = [by_urn[d] for d in group.dependencies if d in by_urn and by_urn[d].type == SUBNET]
    shown, zones = [], []
    for subnet in declared:
        shown.append(f"{subnet.name} {subnet.inputs.get('cidrBlock', '?')}")
        zones.append(str(subnet.inputs.get("availabilityZone", "")))
    known = {f"{s.name}-offline-id" for s in declared}
    shown += [f"{i} (existing; CIDR not known offline)" for i in ids if i not in known]
    return ", ".join(z for z in dict.fromkeys(zones) if z), ", ".join(shown) or "none"


def _ami(group: PlanResource, template: PlanResource) -> str:
    tags = tags_of(template)
    image = template.inputs.get("imageId")
    if image is None and group.type == NODE_GROUP:
        return f"EKS {group.inputs.get('amiType', '?')}, release {group.inputs.get('releaseVersion', 'latest')}"
    if tags.get(AMI_SSM_PARAMETER):
        return f"SSM {tags[AMI_SSM_PARAMETER]} -> {image} (release {tags.get(AMI_RELEASE, '?')})"
    return f"custom {image} (release {tags.get(AMI_RELEASE, 'not stated')})"


def _efa(instance_type: str, layout: str, interfaces: Sequence[efa.EfaInterface]) -> str:
    summary = efa.summarize_layout(instance_type, interfaces)
    cards = len(efa.instance_facts(instance_type)["cards"])
    return (
        f"{layout}: {summary.efa_devices} EFA devices, {summary.ena_interfaces} ENA, {summary.efa_bandwidth_gbps} "
        f"Gbps EFA per node, on {summary.network_cards_used} of {cards} network cards"
    )


def interfaces_of(template: PlanResource) -> tuple[efa.EfaInterface, ...]:
    """A launch template's network interfaces as recorded."""
    return tuple(
        efa.EfaInterface(int(n.get("networkCardIndex", 0)), int(n.get("deviceIndex", 0)), str(n.get("interfaceType")))
        for n in template.inputs.get("networkInterfaces") or []
    )


def _schedules_by_parent(plan: Plan) -> dict[str, list[PlanResource]]:
    """Scheduled actions by the component that declared them (a group's own), each list by start time."""
    found: dict[str, list[PlanResource]] = {}
    for r in sorted(plan.of_type(SCHEDULE), key=lambda r: str(r.inputs.get("startTime", ""))):
        found.setdefault(r.parent, []).append(r)
    return found


def _sizes_text(sizes: tuple[int, int, int]) -> str:
    return " / ".join(str(n) for n in sizes)


def _at_block_start(
    schedules: Sequence[PlanResource],
    windows: Sequence[ReservationWindow],
    now: datetime,
    now_sizes: str,
    held: bool = False,
) -> str:
    up = next((s for s in schedules if int(s.inputs.get("desiredCapacity") or 0) > 0), None)
    if up is not None:
        sizes = tuple(int(up.inputs.get(k) or 0) for k in ("minSize", "desiredCapacity", "maxSize"))
        return f"{_sizes_text(sizes)} (scheduled {up.inputs.get('startTime')})"  # type: ignore[arg-type]
    states = [window_state(w, now) for w in windows]
    if not states:
        return "no reservation window: the group keeps its size now"
    if ACTIVE in states:
        return f"{now_sizes} (the block has started: sized now)"
    if all(s == ENDED for s in states):
        return "none (every block has ended)"
    return "no scale-up scheduled (the group is held at 0 for an upgrade)" if held else "no scale-up scheduled"


def _schedule_text(schedules: Sequence[PlanResource]) -> str:
    if not schedules:
        return "none"
    return "; ".join(
        f"{s.inputs.get('startTime')} desired {s.inputs.get('desiredCapacity')} ({s.inputs.get('scheduledActionName')})"
        for s in schedules
    )


def group_view(
    group: PlanResource,
    plan: Plan,
    windows: Sequence[ReservationWindow],
    now: datetime,
    block: str = "",
    indexes: tuple[Mapping[str, PlanResource], Mapping[str, list[PlanResource]]] | None = None,
    spares: str = "",
) -> GroupView | None:
    """The view of one node group, or None when it is not a GPU group (no catalogued instance type).

    ``indexes`` (resources by URN, scheduled actions by parent) are built from ``plan`` when not given; a caller
    viewing many groups builds them once. ``spares`` is the group's line on its spares (``spare_lines``).
    """
    by_urn, schedules_by_parent = indexes or (plan.by_urn(), _schedules_by_parent(plan))
    template = next((by_urn[d] for d in group.dependencies if d in by_urn and by_urn[d].type == LAUNCH_TEMPLATE), None)
    instance_type = str(template.inputs.get("instanceType", "")) if template else ""
    if template is None or instance_type not in efa.supported_instance_types():
        return None
    tags = tags_of(template)
    layout = str(tags.get(EFA_LAYOUT, "custom"))
    interfaces = interfaces_of(template)
    zones, subnets = _subnets(group, by_urn)
    sizes = _sizes(group)
    schedules = schedules_by_parent.get(group.parent, [])
    held = tags_of(group).get(UPGRADE_SAFE) == "true"
    gpus = sizes[2] * int(efa.instance_facts(instance_type)["gpus"])
    rows = [
        ("mode", "managed (EKS node group)" if group.type == NODE_GROUP else "self-managed (Auto Scaling group)"),
        ("instances", f"{sizes[2]} x {instance_type} ({gpus} GPUs)"),
        ("reservation", _reservation(template)),
        ("zone", str(tags.get(RESERVATION_ZONE) or zones or "?")),
        ("subnet", subnets),
        ("min/desired/max now", _sizes_text(sizes) + (" (held at 0 for an upgrade)" if held else "")),
        ("min/desired/max at block start", _at_block_start(schedules, windows, now, _sizes_text(sizes), held)),
        ("AMI", _ami(group, template)),
        ("EFA", _efa(instance_type, layout, interfaces)),
        ("schedule", _schedule_text(schedules)),
    ]
    rows += [("spares", spares)] if spares else []
    rows += _block_rows(windows, now, block)
    states = tuple(window_state(w, now) for w in windows)
    return GroupView(group.name, instance_type, layout, interfaces, tuple(rows), states)


def _block_rows(windows: Sequence[ReservationWindow], now: datetime, block: str) -> list[tuple[str, str]]:
    """The group's capacity block line (when given) and one row per window."""
    rows = [("capacity block", block)] if block else []
    if not windows:
        rows.append(("window", "none given (no scheduled scaling)"))
    for index, window in enumerate(windows, start=1):
        rows.append(("window" if len(windows) == 1 else f"window {index}", describe_window(window, now)))
    return rows


def group_views(
    plan: Plan,
    windows: Mapping[str, Sequence[ReservationWindow]],
    now: datetime,
    blocks: Mapping[str, str] | None = None,
    spares: Mapping[str, str] | None = None,
) -> list[GroupView]:
    """Every GPU node group of the plan, in plan order; ``windows`` maps a group's resource name to its blocks'
    windows, ``blocks`` to a line on its current block (``block_lines``) and ``spares`` to one on its spares
    (``spare_lines``)."""
    views, indexes = [], (plan.by_urn(), _schedules_by_parent(plan))
    for resource in plan.resources:
        if resource.type in (NODE_GROUP, AUTOSCALING_GROUP):
            block = (blocks or {}).get(resource.name, "")
            spare = (spares or {}).get(resource.name, "")
            view = group_view(resource, plan, windows.get(resource.name, ()), now, block, indexes, spare)
            if view is not None:
                views.append(view)
    return views


def spare_cost(spares: int, gpus_per_node: int, windows: Sequence[ReservationWindow]) -> str:
    """What ``spares`` idle nodes of one UltraServer cost: GPU-hours per block (per hour without a window), beside
    the time the toolkit expects a failed node's job to be back on a spare."""
    idle = spares * gpus_per_node
    if windows:
        hours = (idle * (w.end - w.start).total_seconds() / 3600 for w in windows)
        cost = " / ".join(f"{h:.0f}" for h in hours) + " GPU-hours per block"
    else:
        cost = f"{idle} GPU-hours per hour (no block window)"
    minutes = spares_facts.expected_replacement_minutes()
    return (
        f"{spares} node(s) per UltraServer held back ({idle} GPUs idle): {cost}; a failed node's job is placed on a "
        f"spare within {minutes:.1f} min ({spares_facts.NODE_MONITOR_GRACE_SECONDS} s to NotReady, "
        f"{spares_facts.FAILURE_GRACE_MINUTES} min grace, a {spares_facts.CONTROLLER_PERIOD_MINUTES}-min controller "
        "run), then restarts from its checkpoint"
    )


def spare_lines(settings: Any) -> dict[str, str]:
    """Per node-group resource name of a group with spares: their cost and the expected replacement time."""
    found = {}
    for group in getattr(settings, "gpu_node_groups", ()):
        if not group.spares_per_ultraserver:
            continue
        gpus = int(efa.instance_facts(group.instance_type)["gpus"])
        for position, name in enumerate(group.node_group_names):
            windows = [b.window for b in group.position_blocks(position) if b.window is not None]
            found[f"{settings.cluster.name}-{name}"] = spare_cost(group.spares_per_ultraserver, gpus, windows)
    return found


def windows_by_group(settings: Any) -> dict[str, list[ReservationWindow]]:
    """Reservation windows of every block per node-group resource name (``<cluster>-<group>``)."""
    found: dict[str, list[ReservationWindow]] = {}
    for group in getattr(settings, "gpu_node_groups", ()):
        for position, name in enumerate(group.node_group_names):
            blocks = group.position_blocks(position)
            found[f"{settings.cluster.name}-{name}"] = [b.window for b in blocks if b.window is not None]
    # A custom platform passes no settings; a standby block group has its own block's window.
    standby = standby_timelines(settings, None) if getattr(settings, "gpu_node_groups", ()) else {}
    for name, block_group in standby.items():
        found[f"{settings.cluster.name}-{name}"] = [block_group.block.window] if block_group.block.window else []
    return found


def block_lines(settings: Any, now: datetime) -> dict[str, str]:
    """Per node-group resource name: the block it runs on at ``now`` and when ``pulumi up`` moves it to the next, or,
    for a ``handover: standby`` block group, its timeline (create, scale up, scale down, end)."""
    if not getattr(settings, "gpu_node_groups", ()):
        return {}
    lines = {
        f"{settings.cluster.name}-{view.group}": view.summary()
        for view in block_views(settings, now)
        if view.state != "unscheduled"
    }
    # A standby block group shows its own timeline: nobody has to act between blocks.
    standby = standby_timelines(settings, now)
    return lines | {f"{settings.cluster.name}-{name}": group.timeline() for name, group in standby.items()}
