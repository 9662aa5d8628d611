"""Kueue 0.19.2's admission decision for DRA claims, replayed offline over a plan.

Kueue counts the devices of every ResourceClaimTemplate a queued pod set references and turns each DeviceClass into
a quota resource through the Configuration's ``resources.deviceClassMappings``. What it refuses, read in
kubernetes-sigs/kueue at tag v0.19.2 (commit 8eab6877):

- ``pkg/dra/claims.go`` ``countDevicesPerClass`` (lines 56-122): a request with ``firstAvailable``, without
  ``exactly``, with ``adminAccess`` or with ``allocationMode: All`` makes the workload inadmissible; an ``ExactCount``
  request counts ``count`` devices of its class (the API server defaults ``allocationMode`` to ExactCount and
  ``count`` to 1).
- ``pkg/dra/claims.go`` ``GetResourceRequestsForResourceClaimTemplates`` (lines 160-235): only
  ``resourceClaimTemplateName`` references are counted; a class missing from the mappings is inadmissible,
  "DeviceClass X is not mapped in DRA configuration for podset P" (line 217).
- ``pkg/controller/core/workload_controller.go`` (lines 431-434): with ``KueueDRAIntegration`` off and
  ``KueueDRARejectWorkloadsWhenDRADisabled`` on, a pending workload that uses DRA is rejected.
- ``pkg/features/kube_features.go`` (lines 745-755): both gates are Beta and on by default since 0.18.
- A resource that no resource group of the ClusterQueue covers, or asks for more than the queue's nominal quota,
  never fits (the flavor assigner, ``pkg/scheduler/flavorassigner``; docs/kueue.md).
- Topology-aware placement (TAS) sizes a pod from its pod spec's requests alone and never sees its claims
  (facts/hardware/allocatable.py cites the lines): ``placement_problems`` refuses a topology-aware pod set whose pods
  request
  nothing but claims (Kueue may put several on one node, where all but one wait for devices for good), and a pod set
  claiming whole nodes whose CPU request fits a node more than once, or not at all.

Everything here is plain data in, Problems out: the policy rule ``kueue-dra-admission`` and the tests run it over
the offline plan, so a changed Kueue default or a lost mapping fails before a job waits forever in a cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ultraserver.facts.hardware import allocatable, devices
from ultraserver.facts.kubernetes.kueue import DRA_FEATURE_GATES
from ultraserver.facts.pins.charts import KUEUE, pinned
from ultraserver.problems import Problem


@dataclass(frozen=True)
class PodSet:
    """One pod set of a queued workload: its name, pod count and the claim templates each pod references."""

    name: str
    count: int
    claim_templates: tuple[str, ...]
    """Names of the ResourceClaimTemplates (``resourceClaims[].resourceClaimTemplateName``) in the pod spec."""
    topology: bool = False
    """Whether the pod template asks Kueue for a topology (podset-required/preferred-topology annotation)."""
    requests: Mapping[str, Any] = field(default_factory=dict)
    """What one pod requests as TAS counts it (the containers' requests, limits where a request is unset)."""


@dataclass(frozen=True)
class Workload:
    """A job as Kueue sees it: where it is and its pod sets."""

    key: str
    """How a message names it (e.g. ``MPIJob default/imex-check``)."""
    namespace: str
    pod_sets: tuple[PodSet, ...]


@dataclass(frozen=True)
class Queue:
    """What admission reads of the Kueue install: the Configuration and the ClusterQueue's quota."""

    configuration: Mapping[str, Any]
    quota: Mapping[str, int] = field(default_factory=dict)
    """Nominal quota per covered resource, summed over the queue's flavors."""
    node_type: str = ""
    """Instance type of the nodes of the queue's topology flavor (its nodeLabels); empty when unknown."""


def gates(configuration: Mapping[str, Any]) -> dict[str, bool]:
    """The DRA feature gates in force: Kueue 0.19.2's defaults (on) overridden by the Configuration's featureGates."""
    overrides = configuration.get("featureGates") or {}
    return {gate: bool(overrides.get(gate, True)) for gate in DRA_FEATURE_GATES}


def mapped_resources(configuration: Mapping[str, Any]) -> dict[str, str]:
    """DeviceClass -> the quota resource it counts as (``resources.deviceClassMappings``)."""
    out: dict[str, str] = {}
    for mapping in (configuration.get("resources") or {}).get("deviceClassMappings") or []:
        for device_class in mapping.get("deviceClassNames") or []:
            out[str(device_class)] = str(mapping.get("name"))
    return out


def cluster_queue_quota(spec: Mapping[str, Any]) -> dict[str, int]:
    """Nominal quota per resource of a ClusterQueue spec, summed over its resource groups and flavors."""
    quota: dict[str, int] = {}
    for group in spec.get("resourceGroups") or []:
        for flavor in group.get("flavors") or []:
            for resource in flavor.get("resources") or []:
                name = str(resource.get("name"))
                quota[name] = quota.get(name, 0) + int(resource.get("nominalQuota") or 0)
    return quota


def devices_per_class(claim_spec: Mapping[str, Any]) -> tuple[dict[str, int], str | None]:
    """Devices a ResourceClaimSpec asks for, per DeviceClass, as countDevicesPerClass counts them; the second value
    says why Kueue refuses the claim (None when it counts it)."""
    counts: dict[str, int] = {}
    for index, request in enumerate((claim_spec.get("devices") or {}).get("requests") or []):
        where = f"devices.requests[{index}]"
        if request.get("firstAvailable") is not None:
            return {}, f"{where}: firstAvailable device selection is not supported"
        exactly = request.get("exactly")
        if exactly is None:
            return {}, f"{where}: exactly must be set if firstAvailable is nil"
        if exactly.get("adminAccess"):
            return {}, f"{where}.exactly.adminAccess is not supported"
        mode = exactly.get("allocationMode", "ExactCount")
        if mode != "ExactCount":
            return {}, f"{where}.exactly.allocationMode {mode!r} is not supported"
        device_class = str(exactly.get("deviceClassName") or "")
        if device_class:
            counts[device_class] = counts.get(device_class, 0) + int(exactly.get("count", 1))
    return counts, None


def admission_problems(
    workload: Workload, claim_templates: Mapping[tuple[str, str], Mapping[str, Any]], queue: Queue
) -> list[Problem]:
    """Why Kueue would never admit the workload (empty when it can): Kueue 0.19.2's rules listed above.

    `claim_templates` maps (namespace, name) to a template's ``spec.spec`` (a ResourceClaimSpec)."""
    on = gates(queue.configuration)
    referenced = [(ps, t) for ps in workload.pod_sets for t in ps.claim_templates]
    if not referenced or not on["KueueDRAIntegration"]:
        if referenced and on["KueueDRARejectWorkloadsWhenDRADisabled"]:
            return [
                _refused(
                    workload,
                    "featureGates",
                    "no DRA claim while KueueDRAIntegration is off and KueueDRARejectWorkloadsWhenDRADisabled on",
                    "map the claims' DeviceClasses (Kubernetes 1.34+), or turn both gates off",
                )
            ]
        return []
    mapped = mapped_resources(queue.configuration)
    wanted: dict[str, int] = {}
    out: list[Problem] = []
    for pod_set, name in referenced:
        spec = claim_templates.get((workload.namespace, name))
        if spec is None:
            out.append(_refused(workload, name, "claims from existing ResourceClaimTemplates", "create the template"))
            continue
        counts, refusal = devices_per_class(spec)
        if refusal:
            out.append(_refused(workload, refusal, "ExactCount requests only", "request an exact count of devices"))
        for device_class, count in counts.items():
            if device_class not in mapped:
                out.append(
                    _refused(
                        workload,
                        device_class,
                        f"DeviceClasses mapped in resources.deviceClassMappings (pod set {pod_set.name}: 'DeviceClass "
                        f"{device_class} is not mapped in DRA configuration', pkg/dra/claims.go:217)",
                        f"add {device_class} to the Kueue Configuration's resources.deviceClassMappings",
                    )
                )
                continue
            resource = mapped[device_class]
            wanted[resource] = wanted.get(resource, 0) + count * pod_set.count
    for resource, amount in sorted(wanted.items()):
        nominal = queue.quota.get(resource)
        if nominal is None:
            out.append(_refused(workload, resource, "resources a ClusterQueue resource group covers", "cover it"))
        elif amount > nominal:
            out.append(
                _refused(workload, f"{resource}: {amount}", f"at most the queue's quota ({nominal})", "raise it")
            )
    return out


def placement_problems(
    workload: Workload, claim_templates: Mapping[tuple[str, str], Mapping[str, Any]], queue: Queue
) -> list[Problem]:
    """Why Kueue's topology-aware placement could send the workload's pods where they cannot all start (empty when
    it places one whole-node pod per node): only topology-aware pod sets with claims are judged."""
    out: list[Problem] = []
    for pod_set in workload.pod_sets:
        if not (pod_set.topology and pod_set.claim_templates):
            continue
        counted = sorted(name for name, value in pod_set.requests.items() if _counted(value))
        if set(counted) <= _NOT_PER_NODE:
            # Memory or ephemeral storage alone do not keep TAS to one pod per node either: a node holds several
            # such requests. CPU (the toolkit's whole-node share) or a device-plugin GPU count does.
            asked = f"only {', '.join(counted)} and DRA claims" if counted else "only DRA claims"
            out.append(
                _refused(
                    workload,
                    f"pod set {pod_set.name}: requests {asked}",
                    "topology-aware pod sets by their pods' requests alone; claims are not counted, and without a CPU "
                    "request above half the node's several of these pods may be placed on one node",
                    "request CPU above half the node's allocatable (builders/device_claims.whole_node_resources)",
                )
            )
            continue
        per_node = _pods_per_node(pod_set, claim_templates, workload.namespace, queue.node_type)
        if per_node is not None and per_node != 1:
            out.append(
                _refused(
                    workload,
                    f"pod set {pod_set.name}: {per_node} whole-node pods per {queue.node_type} node",
                    f"one whole-node pod per node: a CPU request above half the node's allocatable "
                    f"({allocatable.allocatable_cpu_millicores(queue.node_type)}m) and not above it",
                    "use builders/device_claims.whole_node_resources",
                )
            )
    return out


_NOT_PER_NODE = {"memory", "ephemeral-storage"}
"""Requests that never bound a whole-node pod to one per node: every node's memory and disk hold several."""


def _counted(value: Any) -> bool:
    """Whether a request is one TAS counts (a positive quantity)."""
    return str(value).strip() not in ("", "0", "0m")


def _pods_per_node(
    pod_set: PodSet, claim_templates: Mapping[tuple[str, str], Mapping[str, Any]], namespace: str, node_type: str
) -> int | None:
    """How many of the pod set's pods TAS fits on one empty node by CPU, when each claims all the node's GPUs; None
    when that cannot be told (partial claims, no CPU request, or an unknown node)."""
    node_cpu = allocatable.allocatable_cpu_millicores(node_type)
    pod_cpu = allocatable.cpu_millicores(pod_set.requests.get("cpu"))
    if node_cpu is None or not pod_cpu:
        return None
    gpus = sum(
        devices_per_class(claim_templates.get((namespace, name)) or {})[0].get(devices.GPU_DEVICE_CLASS, 0)
        for name in pod_set.claim_templates
    )
    if gpus < devices.gpus_per_node(node_type):
        return None
    return node_cpu // pod_cpu


def _refused(workload: Workload, got: Any, allowed: str, fix: str) -> Problem:
    """A reason Kueue never admits the workload: what it has, what Kueue accepts instead, the fix."""
    return Problem(workload.key, got, f"Kueue {pinned(KUEUE).version} admits {allowed}", fix)
