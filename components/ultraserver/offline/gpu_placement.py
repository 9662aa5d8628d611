"""Which rendered DaemonSets land on the plan's GPU nodes, and what follows: the ones that must run there do, and a
release with any there skips Helm's wait and is not atomic.

GPU nodes are read from the plan: every launch template whose kubelet flags register the GPU taint (managed and
self-managed groups alike), with the labels and taints those flags register, plus the labels every node gets
(kubernetes.io/os, kubernetes.io/arch, node.kubernetes.io/instance-type, set by the kubelet) and the one GPU Feature
Discovery adds on a GPU node (nvidia.com/gpu.present, facts/kubernetes/scheduling.py), which selectors of GPU DaemonSets
use.
A DaemonSet runs on a node when it tolerates each NoSchedule/NoExecute taint and its nodeSelector and required node
affinity match the labels (https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/,
https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ultraserver.facts.hardware.instances import architecture
from ultraserver.facts.kubernetes.scheduling import GPU_PRESENT_LABEL, GPU_TAINT_KEY, INSTANCE_TYPE_LABEL
from ultraserver.offline.engine import Plan
from ultraserver.offline.resource import LAUNCH_TEMPLATE

Taint = tuple[str, str, str]
"""(key, value, effect) in Kubernetes spelling."""
_LABELS_FLAG = "--node-labels="
_TAINTS_FLAG = "--register-with-taints="


@dataclass(frozen=True)
class GpuNodes:
    """The nodes of one GPU launch template as the scheduler sees them."""

    group: str
    """The launch template's resource name."""
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]


def _flags(user_data: str) -> list[str]:
    try:
        text = base64.b64decode(user_data).decode()
    except (binascii.Error, UnicodeDecodeError):
        return []
    return [line.strip().removeprefix("- ") for line in text.splitlines() if line.strip().startswith("- --")]


def _taints(flags: Iterable[str]) -> tuple[Taint, ...]:
    found = []
    for flag in flags:
        if flag.startswith(_TAINTS_FLAG):
            for taint in flag[len(_TAINTS_FLAG) :].split(","):
                key_value, _, effect = taint.partition(":")
                key, _, value = key_value.partition("=")
                found.append((key, value, effect))
    return tuple(found)


def gpu_nodes(plan: Plan) -> list[GpuNodes]:
    """The GPU node kinds of the plan (one per launch template that registers the GPU taint)."""
    found = []
    for template in plan.of_type(LAUNCH_TEMPLATE):
        flags = _flags(str(template.inputs.get("userData") or ""))
        taints = _taints(flags)
        if not any(key == GPU_TAINT_KEY for key, _, _ in taints):
            continue
        instance_type = str(template.inputs.get("instanceType") or "")
        labels = {"kubernetes.io/os": "linux", GPU_PRESENT_LABEL: "true"}
        if instance_type:
            labels |= {INSTANCE_TYPE_LABEL: instance_type, "kubernetes.io/arch": architecture(instance_type)}
        for flag in flags:
            if flag.startswith(_LABELS_FLAG):
                labels |= dict(pair.partition("=")[::2] for pair in flag[len(_LABELS_FLAG) :].split(","))
        found.append(GpuNodes(template.name, labels, taints))
    return found


def tolerates(tolerations: Sequence[Mapping[str, Any]], taint: Taint) -> bool:
    """Whether one of the tolerations tolerates the taint."""
    key, value, effect = taint
    for toleration in tolerations:
        if toleration.get("effect") not in (None, "", effect):
            continue
        if toleration.get("operator") == "Exists":
            if toleration.get("key") in (None, "", key):
                return True
        elif toleration.get("key") == key and str(toleration.get("value", "")) == value:
            return True
    return False


def _expression(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, operator, values = expression.get("key"), expression.get("operator"), expression.get("values") or []
    have = labels.get(str(key))
    match operator:
        case "In":
            return have in values
        case "NotIn":
            return have not in values
        case "Exists":
            return have is not None
        case "DoesNotExist":
            return have is None
        case "Gt" | "Lt" if have is not None and have.isascii() and have.isdigit():
            return int(have) > int(values[0]) if operator == "Gt" else int(have) < int(values[0])
    return False


def selects(pod_spec: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """Whether the pod's nodeSelector and required node affinity match a node with these labels."""
    if any(labels.get(k) != v for k, v in (pod_spec.get("nodeSelector") or {}).items()):
        return False
    required = ((pod_spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms") or []
    # Terms are ORed, expressions within a term ANDed; matchFields (node names) are not judged here.
    return not terms or any(all(_expression(e, labels) for e in t.get("matchExpressions") or []) for t in terms)


def runs_on(pod_spec: Mapping[str, Any], nodes: GpuNodes) -> bool:
    """Whether a DaemonSet with this pod spec places a pod on these nodes."""
    tolerations = pod_spec.get("tolerations") or []
    blocking = [t for t in nodes.taints if t[2] in ("NoSchedule", "NoExecute")]
    return all(tolerates(tolerations, t) for t in blocking) and selects(pod_spec, nodes.labels)


def daemonset_spec(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod spec of a DaemonSet (None for any other kind)."""
    if body.get("kind") != "DaemonSet":
        return None
    return ((body.get("spec") or {}).get("template") or {}).get("spec") or {}


def missed_groups(body: Mapping[str, Any], nodes: Sequence[GpuNodes]) -> list[str]:
    """The GPU node groups a DaemonSet would not run on."""
    spec = daemonset_spec(body)
    return [] if spec is None else [n.group for n in nodes if not runs_on(spec, n)]


def on_gpu_nodes(bodies: Iterable[Mapping[str, Any]], nodes: Sequence[GpuNodes]) -> list[Mapping[str, Any]]:
    """The DaemonSets among ``bodies`` that place a pod on some GPU node."""
    found = []
    for body in bodies:
        spec = daemonset_spec(body)
        if spec is not None and any(runs_on(spec, n) for n in nodes):
            found.append(body)
    return found
