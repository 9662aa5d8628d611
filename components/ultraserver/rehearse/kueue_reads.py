"""Reading Kueue's decisions from a rehearsal's real API server: the admission stage and the node-failure stage both
poll the Workloads Kueue writes, and the nodes of their topology assignments."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from ultraserver.facts.kubernetes import kueue
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
