"""Repair that fits a Capacity Block on the GPU groups EKS does not repair (self-managed; docs/health.md, "Repair on
self-managed groups"): the reboots due (``wanted``, pure) and what a person must hear of them (``findings``);
``drain_main`` makes them through EC2 RebootInstances, once a minute in the reclaim drain's CronJob.

The same table as the managed groups' ``nodeRepairConfigOverrides`` (facts/aws/node_repair.py): a node whose
AcceleratedHardwareReady has been False for ``REPAIR_WAIT_MINUTES`` (EKS's own wait) with a reason a reboot clears is
rebooted once; a reason only a replacement would fix gets no action (its spare has taken over already,
``incluster.spares``). Like the managed groups' repair config (one node at a time, a pause on a cluster-wide signal):
one reboot per UltraServer at a time, and none while more than ``SYSTEMIC_FRACTION`` of the UltraServer is failed.
The node is marked (``REBOOTED_ANNOTATION``) before its reboot, so no later run reboots it for the same failure; one
still or again failed after it is paged and left to its spare, never rebooted in a loop.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

try:
    from ultraserver.incluster.copied_facts import (
        REBOOT_AGAIN_HOURS,
        REBOOT_REASON_ANNOTATION,
        REBOOT_REASONS,
        REBOOTED_ANNOTATION,
        REPAIR_CONDITION,
        REPAIR_WAIT_MINUTES,
        SYSTEMIC_FRACTION,
    )
    from ultraserver.incluster.drain_watch import finding
    from ultraserver.incluster.spares import REPORT_HOURS, SpareGroup, failure, ultraserver_of
except ImportError:  # in the cluster: the mounted directory is on sys.path
    from copied_facts import (  # type: ignore[no-redef]
        REBOOT_AGAIN_HOURS,
        REBOOT_REASON_ANNOTATION,
        REBOOT_REASONS,
        REBOOTED_ANNOTATION,
        REPAIR_CONDITION,
        REPAIR_WAIT_MINUTES,
        SYSTEMIC_FRACTION,
    )
    from drain_watch import finding  # type: ignore[no-redef]
    from spares import REPORT_HOURS, SpareGroup, failure, ultraserver_of  # type: ignore[no-redef]

WAIT = timedelta(minutes=REPAIR_WAIT_MINUTES)
AGAIN = timedelta(hours=REBOOT_AGAIN_HOURS)


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(timezone.utc)


def _iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _meta(node: dict[str, Any]) -> dict[str, Any]:
    return node.get("metadata") or {}


def _rebooted(node: dict[str, Any]) -> datetime | None:
    """When the controller last rebooted the node; None when it never did, or a person took the mark off or wrote
    something else there (a reboot writes it afresh)."""
    value = (_meta(node).get("annotations") or {}).get(REBOOTED_ANNOTATION)
    try:
        return _utc(value) if value else None
    except ValueError:
        return None


def instance_of(node: dict[str, Any]) -> str | None:
    """The node's EC2 instance id, from its ``spec.providerID`` (``aws:///<zone>/i-...``)."""
    last = str((node.get("spec") or {}).get("providerID") or "").rsplit("/", 1)[-1]
    return last if last.startswith("i-") else None


def hardware_failure(node: dict[str, Any]) -> tuple[str, datetime] | None:
    """The reason AcceleratedHardwareReady is False and since when; None while it is not False."""
    for condition in (node.get("status") or {}).get("conditions") or []:
        if condition.get("type") == REPAIR_CONDITION and condition.get("status") == "False":
            since = condition.get("lastTransitionTime")
            if since:
                return str(condition.get("reason") or ""), _utc(since)
    return None


def _due(node: dict[str, Any], now: datetime) -> str | None:
    """The reason to reboot the node for now: a reboot reason, False for the wait, and no reboot yet for this failure
    (the last one came before it started) nor within ``AGAIN`` of its start; None otherwise."""
    found = hardware_failure(node)
    if found is None or instance_of(node) is None:
        return None
    reason, since = found
    last = _rebooted(node)
    if reason not in REBOOT_REASONS or since > now - WAIT or (last is not None and since < last + AGAIN):
        return None
    return reason


def _members(nodes: list[dict[str, Any]], groups: list[SpareGroup]) -> dict[str, list[dict[str, Any]]]:
    """The nodes of the groups the controller reboots, by UltraServer."""
    rebooted = {g.group: g for g in groups if g.reboot}
    members: dict[str, list[dict[str, Any]]] = {}
    for node in sorted(nodes, key=lambda n: _meta(n)["name"]):
        ultraserver = ultraserver_of(node, rebooted)
        if ultraserver is not None:
            members.setdefault(ultraserver, []).append(node)
    return members


def wanted(nodes: list[dict[str, Any]], groups: list[SpareGroup], now: datetime) -> list[dict[str, Any]]:
    """The reboots due at ``now``: at most one per UltraServer, none where another node was rebooted within the
    wait (one at a time) or where more than ``SYSTEMIC_FRACTION`` of the nodes are failed (a cluster-wide signal)."""
    found = []
    for ultraserver, ours in sorted(_members(nodes, groups).items()):
        if sum(1 for n in ours if failure(n, now) is not None) > SYSTEMIC_FRACTION * len(ours):
            continue
        if any((last := _rebooted(n)) is not None and last > now - WAIT for n in ours):
            continue
        for node in ours:
            reason = _due(node, now)
            if reason is not None:
                name, instance = _meta(node)["name"], instance_of(node)
                found.append(
                    {"kind": "reboot", "name": name, "instance": instance, "reason": reason, "ultraserver": ultraserver}
                )
                break
    return found


def marks(action: dict[str, Any], now: datetime) -> dict[str, str]:
    """The annotations a reboot leaves on its node (set before the reboot is asked for)."""
    return {REBOOTED_ANNOTATION: _iso(now), REBOOT_REASON_ANNOTATION: action["reason"]}


def findings(stack: str, nodes: list[dict[str, Any]], groups: list[SpareGroup], now: datetime) -> list[dict[str, str]]:
    """What a person must hear (``drain_watch.finding``'s shape): each reboot of the last ``REPORT_HOURS``, and each
    node a reboot did not help (still failed ``REPAIR_WAIT_MINUTES`` after it, or failed again within ``AGAIN``)."""
    found = []
    for ultraserver, ours in sorted(_members(nodes, groups).items()):
        for node in ours:
            last = _rebooted(node)
            if last is None:
                continue
            name, instance = _meta(node)["name"], instance_of(node) or "unknown instance"
            reason = (_meta(node).get("annotations") or {}).get(REBOOT_REASON_ANNOTATION) or "unknown reason"
            status = f"`ultraserver status --stack {stack}` shows the UltraServer"
            if last > now - timedelta(hours=REPORT_HOURS):
                message = (
                    f"Stack {stack}: rebooted node {name} (instance {instance}, reason {reason}) in UltraServer "
                    f"{ultraserver} at {_iso(last)}: its AcceleratedHardwareReady had been False for "
                    f"{REPAIR_WAIT_MINUTES} minutes with a reason a reboot can clear. Once it is healthy again it "
                    f"rejoins as a spare; if it is not, you hear again. {status}."
                )
                found.append(
                    finding(f"rebooted:{name}:{_iso(last)}", f"{stack}: rebooted node {name} ({reason})", message)
                )
            failed = hardware_failure(node)
            if failed is None:
                continue
            since = failed[1]
            if (since <= last and now >= last + WAIT) or last < since < last + AGAIN:
                message = (
                    f"Stack {stack}: node {name} (instance {instance}) of UltraServer {ultraserver} is still failed "
                    f"(AcceleratedHardwareReady False, {failed[0] or 'no reason'}) after its reboot at {_iso(last)} "
                    f"for {reason}; it is not rebooted again within {REBOOT_AGAIN_HOURS} hours and its spare, if "
                    f"any, has its place. Fix: replace the instance (or `kubectl annotate node {name} "
                    f"{REBOOTED_ANNOTATION}-` to allow one more reboot); {status}."
                )
                found.append(
                    finding(
                        f"reboot-failed:{name}:{_iso(last)}",
                        f"{stack}: node {name} still failed after its reboot",
                        message,
                    )
                )
    return found
