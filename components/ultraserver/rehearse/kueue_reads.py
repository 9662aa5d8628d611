"""Reading Kueue's decisions from a rehearsal's real API server: the admission stage and the node-failure stage both
poll the Workloads Kueue writes, and the nodes of their topology assignments."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any

from ultraserver.facts.kubernetes import kueue
from ultraserver.facts.kubernetes.scheduling import ULTRASERVER_LABEL
from ultraserver.incluster.placement import assignment_nodes
from ultraserver.rehearse.control_plane import ApiError, ControlPlane

SETTLE_WITHIN = 240.0
"""Seconds for Kueue to come up and admit, and for the scheduler and kwok to run a job's pods (a loaded 2-core
machine; about 10-30 s unloaded)."""
WORKLOADS = f"/apis/{kueue.API_VERSION}"


def until(what: str, probe: Callable[[], Any], within: float | None = None) -> Any:
    """Poll ``probe`` until it returns something true, for ``within`` seconds (SETTLE_WITHIN, read at the call);
    TimeoutError naming ``what``."""
    within = SETTLE_WITHIN if within is None else within
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            found = probe()
        except ApiError:
            found = None
        if found:
            return found
        time.sleep(1.0)
    raise TimeoutError(f"{what}: not within {within:.0f} s")


def condition(obj: Mapping[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind), {})


def workloads(plane: ControlPlane, namespace: str) -> list[dict[str, Any]]:
    return list(plane.call("GET", f"{WORKLOADS}/namespaces/{namespace}/workloads").get("items") or [])


def owned_by(workload: Mapping[str, Any], name: str) -> bool:
    return any(o.get("name") == name for o in workload["metadata"].get("ownerReferences") or [])


def assigned_nodes(workload: Mapping[str, Any]) -> list[str]:
    found: set[str] = set()
    for podset in ((workload.get("status") or {}).get("admission") or {}).get("podSetAssignments") or []:
        if podset.get("topologyAssignment"):
            found |= assignment_nodes(podset["topologyAssignment"])
    return sorted(found)


def tolerated(taint: Mapping[str, Any], tolerations: Iterable[Mapping[str, Any]]) -> bool:
    """Whether a toleration matches the taint (k8s.io/api v0.35.4 core/v1/toleration.go 52-77); one with a comparison
    operator (Lt, Gt: alpha) counts as matching, so that a node is never taken for full when it might not be."""
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("key") and t["key"] != taint.get("key"):
            continue
        if (t.get("operator") or "Equal") == "Equal" and t.get("value", "") != taint.get("value", ""):
            continue
        return True
    return False


def free_nodes(
    nodes: Iterable[Mapping[str, Any]], taken: Collection[str], tolerations: Iterable[Mapping[str, Any]]
) -> list[str]:
    """The GPU nodes Kueue's topology placement could put a whole-node pod with ``tolerations`` on: not ``taken``
    (each holding one), schedulable and Ready, without a NoSchedule or NoExecute taint the pod does not tolerate.
    Kueue's placement leaves out a node unschedulable or not Ready (kueue v0.19.2 pkg/cache/scheduler/tas_nodes_cache.go
    57-66, with SchedulerLibraryIntegration off, its default: pkg/features/kube_features.go 927-929) and one with an
    untolerated taint of either effect (pkg/cache/scheduler/scheduling_simulator_default.go 72-79,
    pkg/util/taints/taints.go 32-34)."""
    tolerations = list(tolerations)
    found = []
    for node in nodes:
        meta, spec = node["metadata"], node.get("spec") or {}
        ready = condition(node, "Ready").get("status") == "True"
        hard = [t for t in spec.get("taints") or [] if t.get("effect") in ("NoSchedule", "NoExecute")]
        kept_off = any(not tolerated(t, tolerations) for t in hard)
        gpu = ULTRASERVER_LABEL in (meta.get("labels") or {})
        if gpu and ready and not kept_off and not spec.get("unschedulable") and meta["name"] not in taken:
            found.append(meta["name"])
    return sorted(found)
