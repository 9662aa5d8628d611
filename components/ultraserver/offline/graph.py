"""The deployment-order graph of a plan, as Mermaid or Graphviz DOT.

Plumbing (subnets, rules, attachments) folds into the component that owns it, so the picture
shows what a person reasons about: network, cluster, node groups, Helm releases, checks.
"""

from __future__ import annotations

from ultraserver.offline.engine import Plan
from ultraserver.offline.resource import STACK_TYPE, PlanResource

# Resources worth their own box even inside a component.
NOTABLE = {
    "eks:index:Cluster",
    "aws:eks/nodeGroup:NodeGroup",
    "aws:autoscaling/group:Group",
    "kubernetes:helm.sh/v3:Release",
    "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain",
    "kubernetes:kubeflow.org/v2beta1:MPIJob",
    "pulumi:providers:kubernetes",
}


def _box(resource: PlanResource, by_urn: dict[str, PlanResource]) -> str | None:
    """The URN of the box a resource is drawn in: itself if notable, else its nearest component."""
    current: PlanResource | None = resource
    while current is not None and current.type != STACK_TYPE:
        if current.type in NOTABLE or not current.custom:
            return current.urn
        current = by_urn.get(current.parent)
    return None


def label(resource: PlanResource) -> str:
    """A box label: name and short type, e.g. ``gpu-1 (aws:NodeGroup)``."""
    parts = resource.type.split(":")
    return f"{resource.name} ({parts[0]}:{parts[-1]})"


def boxes(plan: Plan) -> dict[str, str | None]:
    """The box each resource is drawn in (URN -> the box's URN), None for the stack."""
    by_urn = plan.by_urn()
    return {r.urn: _box(r, by_urn) for r in plan.resources}


def edges(plan: Plan) -> tuple[dict[str, str], set[tuple[str, str]]]:
    """Boxes (URN -> label) and edges (dependency -> dependent) between boxes."""
    by_urn = plan.by_urn()
    box_of = boxes(plan)
    used: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for resource in plan.resources:
        target = box_of.get(resource.urn)
        if target is None or not resource.custom:
            continue
        used.add(target)
        for dep in resource.dependencies:
            source = box_of.get(dep)
            if source and source != target and not contains(source, target, by_urn):
                pairs.add((source, target))
                used.add(source)
    labels = {urn: label(by_urn[urn]) for urn in used}
    return labels, pairs


def contains(outer: str, inner: str, by_urn: dict[str, PlanResource]) -> bool:
    """Whether box ``outer`` is an ancestor of ``inner`` (a component waiting on its own parts)."""
    current = by_urn.get(inner)
    while current is not None:
        if current.parent == outer:
            return True
        current = by_urn.get(current.parent)
    return False


MERMAID_HEAD = "flowchart LR"
DOT_HEAD = "digraph plan {"
"""The first lines of the two graph texts (an existing file that starts so is an earlier --graph output)."""


def mermaid(plan: Plan) -> str:
    """A Mermaid flowchart, dependencies pointing to what waits for them."""
    labels, pairs = edges(plan)
    ids = {urn: f"n{i}" for i, urn in enumerate(sorted(labels))}
    lines = [MERMAID_HEAD]
    lines += [f'  {ids[u]}["{labels[u]}"]' for u in sorted(labels)]
    lines += [f"  {ids[a]} --> {ids[b]}" for a, b in sorted(pairs)]
    return "\n".join(lines) + "\n"


def dot(plan: Plan) -> str:
    """A Graphviz DOT digraph, for `dot -Tsvg`."""
    labels, pairs = edges(plan)
    lines = [DOT_HEAD, "  rankdir=LR;", "  node [shape=box];"]
    lines += [f'  "{u}" [label="{labels[u]}"];' for u in sorted(labels)]
    lines += [f'  "{a}" -> "{b}";' for a, b in sorted(pairs)]
    return "\n".join(lines + ["}"]) + "\n"
