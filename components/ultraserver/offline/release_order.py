"""Order across releases: a release that creates objects of a kind another release's CRD defines waits for it.

Pulumi creates resources that do not depend on each other in parallel, so without the dependency both Helm installs
run at once, and the one whose object's kind is not served yet fails with "no matches for kind" (Helm builds every
object's REST mapping before it creates any: helm/helm v3.20.2 pkg/action/install.go:333, `i.cfg.KubeClient.Build`).
Kueue's ServiceMonitor with `enablePrometheus: true` needs kube-prometheus-stack's Prometheus Operator CRDs.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ultraserver.offline.engine import Plan
from ultraserver.offline.resource import HELM_RELEASE
from ultraserver.offline.served_apis import api_of, served_versions
from ultraserver.problems import Described, Problem


def waits_for(plan: Plan, urn: str) -> set[str]:
    """Every URN the resource waits for, directly or through what it waits for (a component stands for its
    children)."""
    by_urn = plan.by_urn()
    children: dict[str, list[str]] = {}
    for resource in plan.resources:
        children.setdefault(resource.parent, []).append(resource.urn)
    seen: set[str] = set()
    todo = list(by_urn[urn].dependencies) if urn in by_urn else []
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo += children.get(current, [])
        todo += by_urn[current].dependencies if current in by_urn else []
    return seen


def order_problems(plan: Plan, releases: Sequence[tuple[str, Iterable[Mapping[str, Any]]]]) -> list[Problem]:
    """For each (release resource name, its rendered objects): the releases whose CRDs it uses without waiting for
    them."""
    urns = {r.name: r.urn for r in plan.of_type(HELM_RELEASE)}
    owners: dict[tuple[str, str], str] = {}
    rendered = [(name, list(bodies)) for name, bodies in releases]
    for name, bodies in rendered:
        for (group, _, kind), _ in served_versions(bodies):
            owners.setdefault((group, kind), name)
    found = []
    for name, bodies in rendered:
        waited = waits_for(plan, urns[name]) if name in urns else set()
        needed: dict[str, set[str]] = {}
        for body in bodies:
            group, _, kind = api_of(body)
            owner = owners.get((group, kind))
            if owner is not None and owner != name and urns.get(owner) not in waited:
                needed.setdefault(owner, set()).add(f"{kind} ({body.get('apiVersion')})")
        for owner, kinds in sorted(needed.items()):
            found.append(
                Problem(
                    name,
                    Described(
                        f"renders {', '.join(sorted(kinds))}, whose CRD {owner} installs, and does not wait for it"
                    ),
                    "a release that depends on the release installing the CRDs of the kinds it creates: both install "
                    "in parallel otherwise, and Helm refuses a kind that is not served yet",
                    f"make {name} depend on {owner} (depends_on)",
                )
            )
    return found
