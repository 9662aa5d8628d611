"""Deployment-order checks over a recorded dependency graph: nothing that needs running nodes may gate a node group.

A node group that waits (directly, transitively, or through a component) for something that only becomes
ready once pods run never starts: the thing waits for nodes, the nodes wait for the thing. On a real
``pulumi up`` this ends in a timeout after 20 minutes or more, e.g. the CoreDNS add-on's
"timeout while waiting for state to become 'ACTIVE' (last state: 'DEGRADED')" (pulumi/pulumi-eks #1819, #1525).

Rules of the graph, as the Pulumi engine applies them:
- a resource waits for every URN in its dependencies;
- waiting for a component waits for all of its children (Pulumi Python SDK, ``runtime/rpc.py``, and for
  remote components such as pulumi-eks's ``Cluster`` the engine waits for the whole construct call);
- a component's own dependencies are not its children's (``resources/child_options.py``).

Pure: reads :class:`PlanResource` only, so the offline plan and tests can use it without Pulumi.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ultraserver.facts.pins.addons import NODE_BOUND_ADDONS
from ultraserver.offline.resource import AUTOSCALING_GROUP, EKS_CLUSTER, HELM_RELEASE, NODE_GROUP, PlanResource

NODE_GROUP_TYPES: tuple[str, ...] = (NODE_GROUP, AUTOSCALING_GROUP)
EKS_ADDON = "aws:eks/addon:Addon"
# pulumi-kubernetes's yaml/v2 components build their children in the provider, out of the offline plan's sight;
# what they hold (e.g. an operator Deployment) may wait for pods.
YAML_COMPONENTS = frozenset({"kubernetes:yaml/v2:ConfigFile", "kubernetes:yaml/v2:ConfigGroup"})
# Kubernetes kinds pulumi-kubernetes waits on until their pods are ready (pulumi-kubernetes await logic).
WAITING_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "Pod"})
# Kinds that never wait for pods: API objects only.
API_ONLY_GROUPS = frozenset(
    {"core", "rbac.authorization.k8s.io", "apiextensions.k8s.io", "admissionregistration.k8s.io", "scheduling.k8s.io"}
)
SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait"


def _skip_await(inputs: Mapping[str, Any]) -> bool:
    """pulumi-kubernetes's skipAwait annotation on a resource's metadata."""
    metadata = inputs.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, Mapping) else None
    return isinstance(annotations, Mapping) and str(annotations.get(SKIP_AWAIT_ANNOTATION)).lower() == "true"


def _pulumi_eks_runs_coredns(inputs: Mapping[str, Any]) -> bool:
    """Whether pulumi-eks's Cluster creates the CoreDNS add-on as a hidden child (nodejs/eks/cluster/cluster.ts).

    It does when CoreDNS is explicitly enabled (``enabled: true`` or ``configurationValues``), or by default
    when it also creates a default node group; the offline plan does not see the child, so this input stands in.
    """
    if not inputs:
        # A real preview shows the component without its props; its CoreDNS add-on child is then in the graph.
        return False
    options = inputs.get("corednsAddonOptions")
    options = options if isinstance(options, Mapping) else {}
    if options.get("enabled") is True or options.get("configurationValues"):
        return True
    return not inputs.get("skipDefaultNodeGroup") and options.get("enabled", True) is not False


def needs_nodes(resource: PlanResource) -> str | None:
    """Why the resource becomes ready only once pods run on some node, or None when it does not."""
    kind = resource.type
    if kind == EKS_ADDON and resource.inputs.get("addonName") in NODE_BOUND_ADDONS:
        return f"the {resource.inputs.get('addonName')} add-on reaches ACTIVE only once its pods run"
    if kind == EKS_CLUSTER and _pulumi_eks_runs_coredns(resource.inputs):
        return "pulumi-eks's Cluster creates the CoreDNS add-on, which reaches ACTIVE only once its pods run"
    if kind in YAML_COMPONENTS:
        return "Kubernetes manifests whose workloads pulumi-kubernetes waits on until their pods are ready"
    if kind == HELM_RELEASE:
        return None if resource.inputs.get("skipAwait") is True else "a Helm release that waits for its pods"
    if not kind.startswith("kubernetes:") or not resource.custom or _skip_await(resource.inputs):
        return None
    module, _, name = kind.partition(":")[2].rpartition(":")
    group = module.split("/")[0]
    if name in WAITING_KINDS:
        return f"a Kubernetes {name} that pulumi-kubernetes waits on until its pods are ready"
    if group not in API_ONLY_GROUPS and "." in group and not group.endswith(".k8s.io"):
        # Custom resources: pulumi-kubernetes waits for a Ready condition, which operators set once they run.
        return f"a custom resource ({name}) that waits for its operator's pods"
    return None


@dataclass(frozen=True)
class Deadlock:
    """A node group that waits for something that waits for nodes."""

    node_group: str
    """URN of the node group (or Auto Scaling group)."""
    blocker: str
    """URN of the resource that needs running nodes."""
    reason: str
    """Why the blocker needs nodes."""
    path: tuple[str, ...]
    """URNs from the node group to the blocker, along dependencies and component children."""

    def message(self) -> str:
        """One line for a test failure or a report."""
        return f"{self.node_group} waits for {self.blocker} ({self.reason}); path: {' -> '.join(self.path)}"


def _children(resources: Sequence[PlanResource]) -> dict[str, list[str]]:
    """Children URNs per parent URN."""
    out: dict[str, list[str]] = {}
    for resource in resources:
        if resource.parent:
            out.setdefault(resource.parent, []).append(resource.urn)
    return out


def _waits_for(
    urn: str, by_urn: Mapping[str, PlanResource], children: Mapping[str, list[str]]
) -> Iterator[tuple[str, str]]:
    """(what, via) a resource waits for next: its dependencies, and all descendants of a dependency (via parent)."""
    resource = by_urn.get(urn)
    for dep in resource.dependencies if resource is not None else ():
        yield dep, urn
        stack = [(child, dep) for child in children.get(dep, ())]
        while stack:
            child, parent = stack.pop()
            yield child, parent
            stack.extend((grandchild, child) for grandchild in children.get(child, ()))


def deadlocks(resources: Sequence[PlanResource]) -> list[Deadlock]:
    """Every node group that (transitively, through components too) waits for a resource that needs nodes."""
    by_urn = {r.urn: r for r in resources}
    children = _children(resources)
    found = []
    for group in (r for r in resources if r.type in NODE_GROUP_TYPES):
        came_from: dict[str, str] = {group.urn: ""}
        frontier = [group.urn]
        while frontier:
            current = frontier.pop(0)
            for nxt, via in _waits_for(current, by_urn, children):
                if nxt in came_from:
                    continue
                came_from[nxt] = via
                frontier.append(nxt)
                target = by_urn.get(nxt)
                reason = needs_nodes(target) if target is not None else None
                if reason:
                    path = [nxt]
                    while came_from[path[-1]]:
                        path.append(came_from[path[-1]])
                    found.append(Deadlock(group.urn, nxt, reason, tuple(reversed(path))))
    return found
