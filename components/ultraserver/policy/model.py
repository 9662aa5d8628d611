"""Plain data the policy rules work on: recorded resources, violations, rules, and small readers."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ultraserver.facts.hardware.ultraservers import NODE_INSTANCE_TYPES
from ultraserver.facts.pins import charts
from ultraserver.offline.resource import (  # noqa: F401 -- re-exported for the rule modules
    AUTOSCALING_GROUP,
    AWS_EKS_CLUSTER,
    COMPUTE_DOMAIN,
    EKS_CLUSTER,
    EKS_MANAGED_NODE_GROUP,
    HELM_RELEASE,
    IAM_POLICY,
    IAM_ROLE,
    IAM_ROLE_POLICY,
    IAM_ROLE_POLICY_ATTACHMENT,
    LAUNCH_TEMPLATE,
    NODE_GROUP,
    SECURITY_GROUP,
    SG_EGRESS_RULE,
    SG_INGRESS_RULE,
    SG_RULE,
    SQS_QUEUE_POLICY,
    SUBNET,
    PlanResource,
)
from ultraserver.problems import ERROR, WARNING, Problem

MANDATORY = "mandatory"
ADVISORY = "advisory"
DISABLED = "disabled"
LEVELS: tuple[str, ...] = (MANDATORY, ADVISORY, DISABLED)

CLUSTER_TYPES: tuple[str, ...] = (EKS_CLUSTER, AWS_EKS_CLUSTER)
MANAGED_NODE_GROUP_TYPES: tuple[str, ...] = (NODE_GROUP, EKS_MANAGED_NODE_GROUP)

# Tags the project's components record so the rules can check what the inputs alone cannot show.


class Unknown:
    """A value the engine does not know yet (computed during preview); rules never flag it."""

    _instance: Unknown | None = None

    def __new__(cls) -> Unknown:
        """Return the single instance, so `is` comparisons work."""
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        """Show as <unknown> in messages and test output."""
        return "<unknown>"


UNKNOWN = Unknown()


def is_unknown(value: Any) -> bool:
    """True when the value is not known yet."""
    return value is UNKNOWN


@dataclass(frozen=True)
class Violation:
    """One failed rule on one resource (or on the stack when urn is empty)."""

    policy: str
    """Rule name."""
    level: str
    """Effective enforcement level: mandatory or advisory."""
    urn: str
    """URN of the offending resource; empty for the whole stack."""
    problem: Problem
    """What the rule found: the input (or the resource's URN), the value, what is allowed and the fix."""

    @property
    def message(self) -> str:
        """The problem as a report beside the URN shows it: the input named unless the key is the URN itself."""
        return self.problem.finding() if self.problem.key in ("", self.urn) else str(self.problem)

    def to_json(self) -> dict[str, str]:
        """The plan JSON's policies entry."""
        return {"policy": self.policy, "level": self.level, "urn": self.urn, "message": self.message}

    def to_problem(self) -> Problem:
        """This violation as a report entry: a mandatory rule blocks (error), an advisory one warns."""
        where = f"[{self.policy}] {self.urn or '(stack)'}"
        if self.problem.key not in ("", self.urn):
            where += f" {self.problem.key}"
        level = ERROR if self.level == MANDATORY else WARNING
        return dataclasses.replace(self.problem, key=where, level=level)


ResourceCheck = Callable[[str, Mapping[str, Any], Mapping[str, Any]], list[Problem]]
"""(resource type, inputs, rule options) -> Problems keyed by the input at fault."""
StackCheck = Callable[[Sequence[PlanResource], Mapping[str, Any]], list[Problem]]
"""(all resources, rule options) -> Problems keyed by the URN of the resource at fault ("" for the stack)."""


@dataclass(frozen=True)
class Rule:
    """A policy rule: pure check plus the metadata the pack and the offline plan both need."""

    name: str
    """Unique rule name, also the key in the pack's config."""
    description: str
    """One line: what the rule requires."""
    fix: str
    """One line: how to fix a violation in general (each message also says it specifically)."""
    level: str = MANDATORY
    """Default enforcement level."""
    resource_types: tuple[str, ...] = ()
    """Types a resource check applies to."""
    check_resource: ResourceCheck | None = None
    """Per-resource check; exactly one of check_resource and check_stack is set."""
    check_stack: StackCheck | None = None
    """Whole-stack check."""
    config_schema: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    """JSON schema of each option."""
    defaults: Mapping[str, Any] = field(default_factory=dict)
    """Default option values."""

    def __post_init__(self) -> None:
        """Reject malformed rule definitions early (a programming error, not user input)."""
        if (self.check_resource is None) == (self.check_stack is None):
            raise ValueError(f"rule {self.name}: set exactly one of check_resource and check_stack")
        if self.check_resource is not None and not self.resource_types:
            raise ValueError(f"rule {self.name}: a resource check needs resource_types")
        if self.level not in (MANDATORY, ADVISORY):
            raise ValueError(f"rule {self.name}: default level must be mandatory or advisory")
        if set(self.defaults) - set(self.config_schema):
            raise ValueError(f"rule {self.name}: defaults without a schema entry")


# ---- readers over camelCase inputs -------------------------------------------------------------


def get_path(props: Mapping[str, Any] | Any, *keys: str) -> Any:
    """props[k1][k2]...; None when any level is missing or not a mapping."""
    value: Any = props
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def as_list(value: Any) -> list[Any]:
    """A list input as a list; unknown or missing becomes empty."""
    if isinstance(value, (list, tuple)):
        return list(value)
    return []


def as_bool(value: Any) -> bool | None:
    """Booleans as recorded (providers take some as the strings "true"/"false")."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return None


def as_int(value: Any) -> int | None:
    """Integers as recorded (mocks hand back floats)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value)


def tags_of(props: Mapping[str, Any]) -> dict[str, str]:
    """Tags as a dict, from either a tags map or an autoscaling group's [{key, value}] list."""
    tags = props.get("tags")
    if isinstance(tags, Mapping):
        return {str(k): v for k, v in tags.items() if isinstance(v, str)}
    out: dict[str, str] = {}
    for item in as_list(tags):
        if isinstance(item, Mapping) and isinstance(item.get("key"), str) and isinstance(item.get("value"), str):
            out[item["key"]] = item["value"]
    return out


def chart_name(props: Mapping[str, Any]) -> str:
    """A Release's bare chart name, whether its chart is a name (with repositoryOpts, as a chart mirror gives even
    OCI charts), repo/name or an oci:// reference."""
    chart = props.get("chart")
    return charts.chart_of(chart) if isinstance(chart, str) else ""


def releases_of(resources: Sequence[PlanResource], chart: str) -> list[PlanResource]:
    """The plan's Helm releases of ``chart`` (facts/pins/charts.py name)."""
    return [r for r in resources if r.type == HELM_RELEASE and chart_name(r.inputs) == chart]


def is_gb200(instance_type: Any) -> bool:
    """True for the instance type of an UltraServer's nodes (the catalog, facts.hardware.ultraservers)."""
    return isinstance(instance_type, str) and instance_type in NODE_INSTANCE_TYPES


# ---- the resource graph ------------------------------------------------------------------------


class StackIndex:
    """Lookups over recorded resources: by URN, by type, and along dependencies."""

    def __init__(self, resources: Sequence[PlanResource]) -> None:
        self.resources = list(resources)
        self.by_urn = {r.urn: r for r in self.resources}

    def of_type(self, *types: str) -> Iterator[PlanResource]:
        """Resources of any of the given types, in recorded order."""
        return (r for r in self.resources if r.type in types)

    def deps(self, resource: PlanResource, *types: str) -> list[PlanResource]:
        """Direct dependencies of the given types."""
        found = (self.by_urn.get(urn) for urn in resource.dependencies)
        return [d for d in found if d is not None and d.type in types]

    def dependents(self, resource: PlanResource, *types: str) -> list[PlanResource]:
        """Resources of the given types that depend directly on this one."""
        return [r for r in self.of_type(*types) if resource.urn in r.dependencies]

    def launch_template_of(self, group: PlanResource) -> PlanResource | None:
        """The launch template a node group or autoscaling group uses (found through its dependencies)."""
        templates = self.deps(group, LAUNCH_TEMPLATE)
        return templates[0] if len(templates) == 1 else None

    def cluster_of(self, resource: PlanResource) -> str | None:
        """URN of the cluster a node group belongs to: a cluster it depends on, else the stack's only one."""
        seen: set[str] = set()
        frontier = list(resource.dependencies)
        while frontier:
            urn = frontier.pop(0)
            if urn in seen:
                continue
            seen.add(urn)
            dep = self.by_urn.get(urn)
            if dep is None:
                continue
            if dep.type in CLUSTER_TYPES:
                return self.cluster_key(dep)
            frontier.extend(dep.dependencies)
        clusters = {self.cluster_key(c) for c in self.of_type(*CLUSTER_TYPES)}
        return clusters.pop() if len(clusters) == 1 else None

    def cluster_key(self, cluster: PlanResource) -> str:
        """One URN per cluster: pulumi-eks's aws:eks Cluster child counts as its eks:index:Cluster parent."""
        parent = self.by_urn.get(cluster.parent or "")
        if cluster.type == AWS_EKS_CLUSTER and parent is not None and parent.type == EKS_CLUSTER:
            return parent.urn
        return cluster.urn

    def group_instance_type(self, group: PlanResource) -> str | None:
        """Instance type of a node group or autoscaling group: its launch template's, else its own first."""
        template = self.launch_template_of(group)
        from_template = template.inputs.get("instanceType") if template is not None else None
        if isinstance(from_template, str):
            return from_template
        own = [t for t in as_list(group.inputs.get("instanceTypes")) if isinstance(t, str)]
        return own[0] if own else None

    def gpu_groups(self) -> Iterator[PlanResource]:
        """Node groups and autoscaling groups that run GB200 instances."""
        for group in self.of_type(*MANAGED_NODE_GROUP_TYPES, AUTOSCALING_GROUP):
            if is_gb200(self.group_instance_type(group)):
                yield group
