"""The edge check of a recorded plan: every input declared as an Output kept its edge."""

from __future__ import annotations

from ultraserver.offline import Plan, completeness
from ultraserver.offline.graph import boxes, contains, edges


def _descendants(urn: str, plan: Plan) -> set[str]:
    children = {r.urn for r in plan.resources if r.parent == urn}
    return children.union(*(_descendants(c, plan) for c in children))


def _covered(source: str, recorded: list[str], plan: Plan) -> bool:
    """Whether a dependency on ``source`` is in ``recorded``: Pulumi records one on a component (not a remote one) as
    the custom and remote resources inside it (pulumi/runtime/rpc.py ``_add_dependency``, pulumi 3.272.0)."""
    by_urn = plan.by_urn()
    found = by_urn.get(source)
    if source in recorded or found is None or found.custom or found.remote:
        return source in recorded
    inside = {d for d in _descendants(source, plan) if by_urn[d].custom or by_urn[d].remote}
    return not inside or bool(inside & set(recorded))


def lost_edges(plan: Plan) -> list[str]:
    """One line per declared Output input that resolved to None or whose source is missing from the edges."""
    problems = [str(p) for p in completeness.unresolved_inputs(plan)]
    for resource in plan.resources:
        for name, sources in resource.declared_sources.items():
            recorded = resource.property_dependencies.get(name, [])
            problems += [
                f"{plan.stack}: {resource.urn} ({resource.type}) input {name!r} came from {source} "
                "but the plan records no such dependency"
                for source in sources
                if not (_covered(source, recorded, plan) and _covered(source, resource.dependencies, plan))
            ]
    return problems + _missing_graph_edges(plan)


def _missing_graph_edges(plan: Plan) -> list[str]:
    """Every recorded property dependency of a custom resource between two boxes of the report graph is an arrow.

    The graph draws custom resources' waits only, so a component's are not checked: pulumi-eks's Cluster (a remote
    component) waits for the network's subnets, but drawing that arrow would close a cycle between the network box
    and the cluster box (the network's rules on the cluster security group wait for the cluster).
    """
    _, arrows = edges(plan)
    box_of = boxes(plan)
    by_urn = plan.by_urn()
    problems: set[str] = set()
    for resource in (r for r in plan.resources if r.custom):
        for source in {s for sources in resource.property_dependencies.values() for s in sources}:
            pair = (box_of.get(source), box_of.get(resource.urn))
            if pair[0] is None or pair[1] is None or pair[0] == pair[1] or contains(pair[0], pair[1], by_urn):
                continue
            if pair not in arrows:
                problems.add(f"{plan.stack}: the graph has no edge {pair[0]} -> {pair[1]}")
    return sorted(problems)
