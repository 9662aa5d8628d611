"""Human-readable views of a plan: the resource tree in dependency order, the counts, and what the report prints."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ultraserver.facts.aws import limits
from ultraserver.facts.aws.aws_ids import EFA_LAYOUT
from ultraserver.facts.hardware import efa
from ultraserver.offline.engine import Plan
from ultraserver.offline.groups import GroupView
from ultraserver.offline.resource import AUTOSCALING_GROUP, LAUNCH_TEMPLATE, NODE_GROUP, STACK_TYPE, PlanResource
from ultraserver.problems import Problem

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


@dataclass
class PlanText:
    """Everything the terminal plan and the HTML report show, already computed."""

    title: str
    clock: str
    groups: Sequence[GroupView]
    warnings: Sequence[Problem]
    policies: str
    tree: str
    summary: str
    placeholders: Sequence[str] = field(default_factory=list)
    notes: Sequence[str] = field(default_factory=list)


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
    nics = [str(n.get("interfaceType")) for n in resource.inputs.get("networkInterfaces") or []]
    if resource.type == LAUNCH_TEMPLATE and nics:
        # Only GPU templates list interfaces; a template without any gets EKS's default network interface.
        efa_count = sum(1 for kind in nics if kind in efa.EFA_TYPES)
        shown.append(f"interfaces={len(nics)} ({efa_count} EFA, {len(nics) - efa_count} ENA only)")
    return f"{resource.type} {resource.name}" + (f"  [{', '.join(shown)}]" if shown else "")


def creation_order(plan: Plan) -> dict[str, int]:
    """A sort key per URN: the dependency step at which a resource (or a component's first part) can start.

    A resource starts one step after everything it waits for is done; waiting for a component waits for all of
    its parts (offline/order.py states the engine's rules), so a component is done when its last part is.
    """
    by_urn = plan.by_urn()
    children: dict[str, list[str]] = {}
    for resource in plan.resources:
        children.setdefault(resource.parent, []).append(resource.urn)
    start: dict[str, int] = {}
    done: dict[str, int] = {}
    busy: set[str] = set()

    def finish(urn: str) -> int:
        if urn in done or urn in busy or urn not in by_urn:
            return done.get(urn, 0)
        busy.add(urn)
        start[urn] = 1 + max((finish(d) for d in by_urn[urn].dependencies), default=-1)
        done[urn] = max([start[urn], *(finish(c) for c in children.get(urn, []))])
        busy.discard(urn)
        return done[urn]

    def key(urn: str) -> int:
        parts = [key(c) for c in children.get(urn, [])]
        return max(start[urn], min(parts)) if parts and not by_urn[urn].custom else start[urn]

    for resource in plan.resources:
        finish(resource.urn)
    return {r.urn: key(r.urn) for r in plan.resources}


def tree(plan: Plan) -> str:
    """Every resource under its parent, indented; siblings in the order they can be created."""
    order = creation_order(plan)
    children: dict[str, list[PlanResource]] = {}
    for resource in sorted(plan.resources, key=lambda r: (order[r.urn], r.type, r.name)):
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


def counts(plan: Plan) -> str:
    """One line that adds up to the plan JSON's entries: the stack, components, providers, and resources by cloud."""
    kinds = Counter(
        "stack"
        if r.type == STACK_TYPE
        else "provider"
        if r.provider
        else "component"
        if not r.custom
        else r.type.split(":")[0]
        for r in plan.resources
    )
    parts = []
    for kind in ("stack", "component", "provider"):
        number = kinds.pop(kind, 0)
        if number:
            parts.append(f"{number} {kind}{'s' if number > 1 else ''}")
    clouds = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    if clouds:
        parts.append(f"{sum(kinds.values())} resources ({clouds})")
    return f"Resources: {len(plan.resources)}, one per entry of --json: {', '.join(parts)}"


def summary(plan: Plan) -> str:
    """The resource count, nodes and GPUs, in two lines."""
    groups = gpu_groups(plan)
    system_nodes = sum(int(lookup(r.inputs, "scalingConfig.desiredSize") or 0) for r in plan.of_type(NODE_GROUP)) - sum(
        g.nodes for g in groups if g.managed
    )
    gpu_nodes = sum(g.full_size for g in groups)
    gpus = sum(g.full_size * int(efa.instance_facts(g.instance_type)["gpus"]) for g in groups)
    if not groups and not plan.of_type(NODE_GROUP):
        # A project that runs on a cluster made elsewhere (kubernetes-layer/, an example job): "0 GPUs" would
        # read as if its workloads had none.
        return f"{counts(plan)}\nNodes: none declared by this project (its cluster's nodes come from another stack)"
    return "\n".join(
        [
            counts(plan),
            f"Nodes: {system_nodes} system, {gpu_nodes} GPU in {len(groups)} GPU node group"
            f"{'' if len(groups) == 1 else 's'} ({sum(g.nodes for g in groups)} running at the clock above); "
            f"GPUs: {gpus}",
        ]
    )


def plan_warnings(plan: Plan, quota: int = limits.MANAGED_NODE_GROUPS_PER_CLUSTER.maximum) -> list[Problem]:
    """Warnings the recorded plan gives (the settings' own warnings come from config/)."""
    managed_groups = len(plan.of_type(NODE_GROUP)) + len(plan.of_type("eks:index:ManagedNodeGroup"))
    past_quota = limits.managed_node_group_problem(managed_groups, "EKS cluster", quota)
    return [past_quota] if past_quota else []
