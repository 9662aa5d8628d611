"""The planned nodes as the scheduler sees them, and which pod specs land on them.

Nodes are read from the plan: every node group and Auto Scaling group with its launch template, the labels and taints
the launch template's kubelet flags register and the labels and taints the EKS node group API sets, plus the labels
every node gets (kubernetes.io/os, kubernetes.io/arch, node.kubernetes.io/instance-type, set by the kubelet) and, on a
GPU node (one that registers the GPU taint), the ones GPU Feature Discovery adds (nvidia.com/gpu.present, and on GB200
nvidia.com/gpu.clique: facts/kubernetes/scheduling.py), which selectors of GPU DaemonSets and check jobs use. Each
group has the desired size the plan gives it at the clock: a GPU group is at 0 outside its blocks.
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
from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL, GPU_PRESENT_LABEL, GPU_TAINT_KEY, INSTANCE_TYPE_LABEL
from ultraserver.offline.engine import Plan
from ultraserver.offline.resource import AUTOSCALING_GROUP, LAUNCH_TEMPLATE, NODE_GROUP, PlanResource

Taint = tuple[str, str, str]
"""(key, value, effect) in Kubernetes spelling."""
_LABELS_FLAG = "--node-labels="
_TAINTS_FLAG = "--register-with-taints="


_EKS_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}
"""The EKS node group API's taint effects in Kubernetes spelling."""


@dataclass(frozen=True)
class NodeKind:
    """The nodes of one launch template (the groups launched from it) as the scheduler sees them."""

    group: str
    """The launch template's resource name."""
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    gpu: bool = True
    """Whether the nodes register the GPU taint (capacity-block nodes, at 0 outside a block)."""
    size: int = 0
    """The desired size of its groups at the plan's clock: the nodes there when the pods are created."""


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


def _sizes(group: PlanResource) -> int:
    """The desired size of a managed node group or an Auto Scaling group."""
    if group.type == NODE_GROUP:
        return int((group.inputs.get("scalingConfig") or {}).get("desiredSize") or 0)
    return int(group.inputs.get("desiredCapacity") or 0)


def _group_taints(group: PlanResource) -> tuple[Taint, ...]:
    """The taints the EKS node group API puts on a managed group's nodes."""
    return tuple(
        (str(t.get("key")), str(t.get("value") or ""), _EKS_EFFECTS.get(str(t.get("effect")), str(t.get("effect"))))
        for t in group.inputs.get("taints") or []
    )


def planned_nodes(plan: Plan) -> list[NodeKind]:
    """Every kind of node the plan launches: one per launch template its node groups and Auto Scaling groups use,
    with their summed desired size at the plan's clock."""
    by_urn = plan.by_urn()
    groups: dict[str, list[PlanResource]] = {}
    for group in [*plan.of_type(NODE_GROUP), *plan.of_type(AUTOSCALING_GROUP)]:
        urn = next((d for d in group.dependencies if d in by_urn and by_urn[d].type == LAUNCH_TEMPLATE), group.urn)
        groups.setdefault(urn, []).append(group)
    found = []
    for key, members in groups.items():
        template = by_urn[key] if by_urn[key].type == LAUNCH_TEMPLATE else None
        inputs = template.inputs if template is not None else {}
        flags = _flags(str(inputs.get("userData") or ""))
        # The kubelet flags and the node group API may both register the GPU taint: one taint, once.
        taints = tuple(dict.fromkeys(_taints(flags) + tuple(t for m in members for t in _group_taints(m))))
        gpu = any(key == GPU_TAINT_KEY for key, _, _ in taints)
        types = [*(t for m in members for t in m.inputs.get("instanceTypes") or []), inputs.get("instanceType")]
        instance_type = str(next((t for t in types if t), ""))
        # GFD's clique value is known only once the node runs (one per UltraServer): any value stands for it.
        labels = {"kubernetes.io/os": "linux"} | ({GPU_PRESENT_LABEL: "true", CLIQUE_LABEL: "(GFD)"} if gpu else {})
        if instance_type:
            # The kubelet labels Go's GOARCH: amd64 where EC2 says x86_64.
            arch = {"x86_64": "amd64"}.get(architecture(instance_type), architecture(instance_type))
            labels |= {INSTANCE_TYPE_LABEL: instance_type, "kubernetes.io/arch": arch}
        for member in members:
            labels |= {str(k): str(v) for k, v in (member.inputs.get("labels") or {}).items()}
        for flag in flags:
            if flag.startswith(_LABELS_FLAG):
                labels |= dict(pair.partition("=")[::2] for pair in flag[len(_LABELS_FLAG) :].split(","))
        name = template.name if template is not None else members[0].name
        found.append(NodeKind(name, labels, taints, gpu, sum(_sizes(m) for m in members)))
    return found


def gpu_nodes(plan: Plan) -> list[NodeKind]:
    """The GPU node kinds of the plan (those that register the GPU taint)."""
    return [kind for kind in planned_nodes(plan) if kind.gpu]


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


def runs_on(pod_spec: Mapping[str, Any], nodes: NodeKind) -> bool:
    """Whether a DaemonSet with this pod spec places a pod on these nodes."""
    tolerations = pod_spec.get("tolerations") or []
    blocking = [t for t in nodes.taints if t[2] in ("NoSchedule", "NoExecute")]
    return all(tolerates(tolerations, t) for t in blocking) and selects(pod_spec, nodes.labels)


def daemonset_spec(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod spec of a DaemonSet (None for any other kind)."""
    if body.get("kind") != "DaemonSet":
        return None
    return ((body.get("spec") or {}).get("template") or {}).get("spec") or {}


def missed_groups(body: Mapping[str, Any], nodes: Sequence[NodeKind]) -> list[str]:
    """The GPU node groups a DaemonSet would not run on."""
    spec = daemonset_spec(body)
    return [] if spec is None else [n.group for n in nodes if not runs_on(spec, n)]


def on_gpu_nodes(bodies: Iterable[Mapping[str, Any]], nodes: Sequence[NodeKind]) -> list[Mapping[str, Any]]:
    """The DaemonSets among ``bodies`` that place a pod on some GPU node."""
    found = []
    for body in bodies:
        spec = daemonset_spec(body)
        if spec is not None and any(runs_on(spec, n) for n in nodes):
            found.append(body)
    return found
