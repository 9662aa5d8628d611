"""Where the drain's objects sit: which pods a PodDisruptionBudget covers and whether one more may go, DaemonSet pods,
and the nodes a Kueue Workload's admission placed it on. Standard library only, like every module of ``incluster``."""

from __future__ import annotations

from typing import Any


def _meta(obj: dict[str, Any]) -> dict[str, Any]:
    return obj.get("metadata") or {}


def daemon_pod(pod: dict[str, Any]) -> bool:
    return any(o.get("kind") == "DaemonSet" for o in _meta(pod).get("ownerReferences") or [])


def matches(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    """matchLabels and matchExpressions (In, NotIn, Exists, DoesNotExist) of a label selector."""
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr["key"], expr["operator"], expr.get("values") or []
        ok = {
            "In": labels.get(key) in values,
            "NotIn": labels.get(key) not in values,
            "Exists": key in labels,
            "DoesNotExist": key not in labels,
        }.get(op, False)
        if not ok:
            return False
    return True


def budgets_of(pdbs: list[dict[str, Any]]) -> list[list[Any]]:
    """[namespace, selector, disruptions allowed] per PodDisruptionBudget, as its status reports it."""
    return [
        [
            _meta(p).get("namespace"),
            (p.get("spec") or {}).get("selector") or {},
            (p.get("status") or {}).get("disruptionsAllowed", 0),
        ]
        for p in pdbs
    ]


def evictable(pod: dict[str, Any], budgets: list[list[Any]]) -> bool:
    """Whether every PodDisruptionBudget over the pod allows one more disruption now (and take it)."""
    labels = _meta(pod).get("labels") or {}
    covering = [b for b in budgets if b[0] == _meta(pod).get("namespace") and matches(b[1], labels)]
    if any(b[2] < 1 for b in covering):
        return False
    for budget in covering:
        budget[2] -= 1
    return True


def assignment_nodes(assignment: dict[str, Any]) -> set[str]:
    """The values of a topology assignment's last level (the node: the Topology ends at the hostname level), in
    Kueue's v1beta1 shape (``domains[].values``) or v1beta2's (``slices[].valuesPerLevel``, a ``universal`` value or
    ``individual`` prefix + roots + suffix); kueue 0.19.2 config/components/crd/bases/kueue.x-k8s.io_workloads.yaml."""
    names: set[str] = set()
    for domain in assignment.get("domains") or []:
        names.update((domain.get("values") or [])[-1:])
    for piece in assignment.get("slices") or []:
        level = (piece.get("valuesPerLevel") or [{}])[-1]
        if level.get("universal"):
            names.add(level["universal"])
        each = level.get("individual") or {}
        names.update(f"{each.get('prefix') or ''}{root}{each.get('suffix') or ''}" for root in each.get("roots") or [])
    return names


def workload_nodes(workload: dict[str, Any]) -> set[str]:
    """Nodes a Workload's admission placed it on."""
    admission = (workload.get("status") or {}).get("admission") or {}
    names: set[str] = set()
    for assignment in admission.get("podSetAssignments") or []:
        names |= assignment_nodes(assignment.get("topologyAssignment") or {})
    return names
