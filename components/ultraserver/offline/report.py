"""Human-readable views of a plan: the resource tree, the capacity summary and the EFA table."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from ultraserver.facts import efa, limits
from ultraserver.facts.capacity_blocks import managed_node_group_problem
from ultraserver.facts.tags import EFA_LAYOUT
from ultraserver.offline.engine import Plan
from ultraserver.offline.resource import AUTOSCALING_GROUP, LAUNCH_TEMPLATE, NODE_GROUP, STACK_TYPE, PlanResource

# The few inputs per type that tell a reader what a resource is; the JSON has all of them.
KEY_SETTINGS: dict[str, tuple[str, ...]] = {
    "aws:ec2/vpc:Vpc": ("cidrBlock",),
    "aws:ec2/subnet:Subnet": ("availabilityZone", "cidrBlock"),
    "eks:index:Cluster": ("name", "version", "authenticationMode", "endpointPublicAccess"),
    NODE_GROUP: ("capacityType", "amiType", "instanceTypes", "scalingConfig.desiredSize"),
    AUTOSCALING_GROUP: ("desiredCapacity", "maxSize"),
    LAUNCH_TEMPLATE: ("instanceType", "instanceMarketOptions.marketType", "metadataOptions.httpTokens"),
    "aws:autoscaling/schedule:Schedule": ("startTime", "desiredCapacity"),
    "aws:eks/accessEntry:AccessEntry": ("type",),
    "aws:eks/addon:Addon": ("addonName", "addonVersion"),
    "kubernetes:helm.sh/v3:Release": ("chart", "version", "namespace"),
    "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain": ("spec.numNodes",),
    "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule": ("ipProtocol", "description"),
    "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule": ("ipProtocol", "description"),
}


def lookup(inputs: dict[str, Any], path: str) -> Any:
    """A nested input by dotted path, or None."""
    value: Any = inputs
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def describe(resource: PlanResource) -> str:
    """One tree line: type, name and key settings."""
    shown = []
    for path in KEY_SETTINGS.get(resource.type, ()):
        value = lookup(resource.inputs, path)
        if value not in (None, "", []):
            shown.append(f"{path.split('.')[-1]}={value}")
    if resource.type == LAUNCH_TEMPLATE:
        shown.append(f"interfaces={len(resource.inputs.get('networkInterfaces') or [])}")
    return f"{resource.type} {resource.name}" + (f"  [{', '.join(shown)}]" if shown else "")


def tree(plan: Plan) -> str:
    """Every resource under its parent, indented."""
    children: dict[str, list[PlanResource]] = {}
    for resource in plan.resources:
        children.setdefault(resource.parent, []).append(resource)
    lines: list[str] = []

    def walk(parent: str, depth: int) -> None:
        for resource in children.get(parent, []):
            lines.append("  " * depth + describe(resource))
            walk(resource.urn, depth + 1)

    walk("", 0)
    return "\n".join(lines)


@dataclass(frozen=True)
class GpuGroup:
    """A recorded GPU node group with its launch template."""

    resource: PlanResource
    nodes: int
    full_size: int
    instance_type: str
    interfaces: tuple[efa.EfaInterface, ...]
    layout: str
    managed: bool


def _template_of(resource: PlanResource, by_urn: dict[str, PlanResource]) -> PlanResource | None:
    return next((by_urn[d] for d in resource.dependencies if d in by_urn and by_urn[d].type == LAUNCH_TEMPLATE), None)


def gpu_groups(plan: Plan) -> list[GpuGroup]:
    """Node groups (managed or self-managed) whose launch template names a GPU instance type."""
    by_urn = plan.by_urn()
    groups = []
    for resource in plan.resources:
        if resource.type not in (NODE_GROUP, AUTOSCALING_GROUP):
            continue
        template = _template_of(resource, by_urn)
        instance_type = str(template.inputs.get("instanceType", "")) if template else ""
        if template is None or instance_type not in efa.supported_instance_types():
            continue
        managed = resource.type == NODE_GROUP
        nodes = (
            lookup(resource.inputs, "scalingConfig.desiredSize") if managed else resource.inputs.get("desiredCapacity")
        )
        full = lookup(resource.inputs, "scalingConfig.maxSize") if managed else resource.inputs.get("maxSize")
        interfaces = tuple(
            efa.EfaInterface(
                int(n.get("networkCardIndex", 0)),
                int(n.get("deviceIndex", 0)),
                str(n.get("interfaceType", "interface")),
            )
            for n in template.inputs.get("networkInterfaces") or []
        )
        layout = (template.inputs.get("tags") or {}).get(EFA_LAYOUT, "custom")
        groups.append(GpuGroup(resource, int(nodes or 0), int(full or 0), instance_type, interfaces, layout, managed))
    return groups


def summary(plan: Plan, quota: int = limits.MANAGED_NODE_GROUPS_PER_CLUSTER.maximum) -> str:
    """Resources by type, nodes, GPUs, EFA devices per node, and quota warnings."""
    counts = Counter(r.type for r in plan.resources if r.type != STACK_TYPE)
    lines = [f"Resources: {sum(counts.values())}"]
    lines += [f"  {count:4d}  {kind}" for kind, count in sorted(counts.items())]
    groups = gpu_groups(plan)
    system_nodes = sum(int(lookup(r.inputs, "scalingConfig.desiredSize") or 0) for r in plan.of_type(NODE_GROUP)) - sum(
        g.nodes for g in groups if g.managed
    )
    gpu_nodes = sum(g.full_size for g in groups)
    gpus = sum(g.full_size * int(efa.instance_facts(g.instance_type)["gpus"]) for g in groups)
    lines.append(
        f"Nodes: {system_nodes} system, {gpu_nodes} GPU in {len(groups)} GPU node groups "
        f"({sum(g.nodes for g in groups)} running now); GPUs: {gpus}"
    )
    waiting = [g.resource.name for g in groups if g.nodes < g.full_size]
    if waiting:
        lines.append(
            f"  Below full size now (capacity block not yet active, or held at 0 for an upgrade): {', '.join(waiting)}"
        )
    if groups:
        rows = [
            efa.LayoutRow(
                g.resource.name, g.instance_type, g.layout, efa.summarize_layout(g.instance_type, g.interfaces)
            )
            for g in groups
        ]
        lines += ["", "EFA per node:", efa.format_layout_table(rows)]
    managed_groups = len(plan.of_type(NODE_GROUP)) + len(plan.of_type("eks:index:ManagedNodeGroup"))
    past_quota = managed_node_group_problem(managed_groups, quota)
    if past_quota:
        lines += ["", f"WARNING: {past_quota}"]
    return "\n".join(lines)
