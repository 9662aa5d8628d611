"""Every pod the plan creates, scheduled against the planned node groups (offline/gpu_placement.py).

A pod comes from a rendered release or from the toolkit's own objects: Deployments, StatefulSets, ReplicaSets, Jobs,
CronJobs, DaemonSets and bare Pods, Helm hooks included, and the GPU Operator's operands, which its operator creates
from the ClusterPolicy. A pod lands on a node kind when it tolerates each NoSchedule/NoExecute taint and its node
selector and required node affinity match the labels. What goes wrong:

- a pod no planned node group takes stays Pending forever (an error);
- a pod that only GPU nodes take waits for a block: capacity-block groups are at 0 outside one, so a release that
  waits for it (Helm waits when the release is not skipAwait or is atomic: facts/pins/charts.py `waits`; a hook always:
  helm/helm v3.20.2 pkg/action/hooks.go:90, `cfg.KubeClient.WatchUntilReady(resources, timeout)` in execHook) times out
  and fails or rolls back (an error), and a controller that does not ask for a GPU runs only while a block is up
  (a warning).

Not judged: CPU and memory requests against free capacity, pod (anti-)affinity, topology spread constraints and
`matchFields` (node names).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ultraserver.facts.kubernetes.scheduling import GPU_RESOURCE
from ultraserver.offline.engine import Plan
from ultraserver.offline.gpu_placement import NodeKind, selects, tolerates
from ultraserver.offline.resource import HELM_RELEASE
from ultraserver.problems import WARNING, Described, Problem

HOOK_ANNOTATION = "helm.sh/hook"
PULUMI_SKIP_AWAIT = "pulumi.com/skipAwait"
"""The annotation with which pulumi-kubernetes creates an object without waiting for it to become ready."""
OPERANDS = "GPU Operator operands"
CLUSTER_POLICY_COMPONENTS = ("devicePlugin", "gfd", "dcgmExporter", "nodeStatusExporter", "validator", "migManager")
"""ClusterPolicy spec sections whose operand DaemonSets run on every GPU node when enabled."""


@dataclass(frozen=True)
class PodSource:
    """One object that creates pods, with the pod spec they get."""

    name: str
    """Kind, namespace/name as a person looks it up (`Deployment kueue-system/kueue-controller-manager`)."""
    kind: str
    spec: Mapping[str, Any]
    waits: bool
    """Whether whoever creates the object waits for its pods (a failed wait fails the deploy)."""


def object_name(body: Mapping[str, Any]) -> str:
    """`Kind namespace/name` of an object, as a person looks it up."""
    meta = body.get("metadata") or {}
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{body.get('kind')} {where}{meta.get('name')}"


def pod_spec(body: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod spec of an object that creates pods (None for any other kind)."""
    spec = body.get("spec") or {}
    match body.get("kind"):
        case "Pod":
            return spec
        case "CronJob":
            return ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template", {}).get("spec") or {}
        case "Deployment" | "StatefulSet" | "ReplicaSet" | "DaemonSet" | "Job":
            return (spec.get("template") or {}).get("spec") or {}
    return None


def _hook(body: Mapping[str, Any]) -> bool:
    return HOOK_ANNOTATION in ((body.get("metadata") or {}).get("annotations") or {})


def release_pods(bodies: Iterable[Mapping[str, Any]], release_waits: bool) -> list[PodSource]:
    """The pod-creating objects of one rendered release; a hook is waited for whatever the release says."""
    found = []
    for body in bodies:
        spec = pod_spec(body)
        if spec is not None:
            waits = _hook(body) or (release_waits and body.get("kind") not in ("CronJob", "DaemonSet"))
            found.append(PodSource(object_name(body), str(body.get("kind")), spec, waits))
    return found


def toolkit_pods(bodies: Iterable[Mapping[str, Any]]) -> list[PodSource]:
    """The pod-creating objects the toolkit declares itself: pulumi-kubernetes waits for a Deployment, StatefulSet,
    ReplicaSet, Job or Pod to become ready unless it carries the skipAwait annotation (UNVERIFIED at the pinned
    provider: the await logic was not read at a tag)."""
    found = []
    for body in bodies:
        found += mpijob_pods(body)
        spec = pod_spec(body)
        if spec is None:
            continue
        skip = str(((body.get("metadata") or {}).get("annotations") or {}).get(PULUMI_SKIP_AWAIT, "")) == "true"
        waits = body.get("kind") not in ("CronJob", "DaemonSet") and not skip
        found.append(PodSource(object_name(body), str(body.get("kind")), spec, waits))
    return found


def mpijob_pods(body: Mapping[str, Any]) -> list[PodSource]:
    """The launcher's and the workers' pods of an MPIJob, from its replica specs' templates (mpi-operator creates
    them; pulumi-kubernetes does not wait for a custom resource's pods)."""
    if body.get("kind") != "MPIJob":
        return []
    replicas = (body.get("spec") or {}).get("mpiReplicaSpecs") or {}
    return [
        PodSource(
            f"{object_name(body)} {role.lower()}", "MPIJob", ((r or {}).get("template") or {}).get("spec") or {}, False
        )
        for role, r in replicas.items()
    ]


def operand_pods(bodies: Iterable[Mapping[str, Any]]) -> list[PodSource]:
    """The GPU Operator's operand DaemonSets as its operator creates them from a rendered ClusterPolicy (pruned as
    the API server stores it: offline/pruning.py): `spec.daemonsets.tolerations`, when set, replace each operand's
    own (NVIDIA/gpu-operator v26.7.0 controllers/object_controls.go 826-828, as issue 44 quotes it; not read here),
    and the operator puts every operand on the nodes it labels as GPU nodes (`nvidia.com/gpu.deploy.*`, set where
    GPU Feature Discovery's `nvidia.com/gpu.present` is). Without tolerations in the ClusterPolicy the operands keep
    their built-in ones, taken here to tolerate the GPU taint (UNVERIFIED: the operands' asset manifests were not
    read)."""
    found = []
    for body in bodies:
        if body.get("kind") != "ClusterPolicy":
            continue
        spec = body.get("spec") or {}
        enabled = [c for c in CLUSTER_POLICY_COMPONENTS if (spec.get(c) or {}).get("enabled", True) is not False]
        tolerations = (spec.get("daemonsets") or {}).get("tolerations")
        pod: dict[str, Any] = {"nodeSelector": {"nvidia.com/gpu.present": "true"}}
        pod["tolerations"] = tolerations if tolerations else [{"operator": "Exists"}]
        name = f"{OPERANDS} ({', '.join(enabled)}) of ClusterPolicy {(body.get('metadata') or {}).get('name')}"
        found.append(PodSource(name, "DaemonSet", pod, False))
    return found


def why_not(spec: Mapping[str, Any], kind: NodeKind) -> str:
    """Why a pod does not land on a node kind: the taints it does not tolerate, or its selector."""
    tolerations = spec.get("tolerations") or []
    untolerated = [t for t in kind.taints if t[2] in ("NoSchedule", "NoExecute") and not tolerates(tolerations, t)]
    if untolerated:
        return "taint " + ", ".join(f"{k}={v}:{e}" if v else f"{k}:{e}" for k, v, e in untolerated) + " not tolerated"
    selector = spec.get("nodeSelector") or {}
    unmatched = {k: v for k, v in selector.items() if kind.labels.get(k) != v}
    if unmatched:
        return "nodeSelector " + ", ".join(f"{k}={v}" for k, v in unmatched.items()) + " not on its nodes"
    return "required node affinity not matched by its labels"


def lands_on(spec: Mapping[str, Any], kinds: Sequence[NodeKind]) -> list[NodeKind]:
    """The node kinds a pod with this spec can be scheduled on."""
    blocking = ("NoSchedule", "NoExecute")
    tolerations = spec.get("tolerations") or []
    return [
        k
        for k in kinds
        if all(tolerates(tolerations, t) for t in k.taints if t[2] in blocking) and selects(spec, k.labels)
    ]


def _asks_for_gpu(spec: Mapping[str, Any]) -> bool:
    """Whether a pod requests GPUs (the device plugin's resource) or DRA devices (resource claims)."""
    if spec.get("resourceClaims"):
        return True
    containers = [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]
    return any(GPU_RESOURCE in ((c.get("resources") or {}).get("limits") or {}) for c in containers)


def placement_problems(owner: str, pods: Iterable[PodSource], kinds: Sequence[NodeKind]) -> list[Problem]:
    """What goes wrong where the pods of ``owner`` (a release or the toolkit's objects) would land."""
    found = []
    for pod in pods:
        landing = lands_on(pod.spec, kinds)
        key = f"{owner}: {pod.name}"
        if not landing:
            reasons = "; ".join(f"{k.group}: {why_not(pod.spec, k)}" for k in kinds) or "no node group planned"
            found.append(
                Problem(
                    key,
                    Described(f"lands on no planned node group ({reasons})"),
                    "pods that some planned node group tolerates and selects (the system group for controllers, "
                    "the GPU groups for GPU DaemonSets)",
                    "fix the values that set its nodeSelector, affinity and tolerations",
                )
            )
            continue
        if any(not k.gpu for k in landing):
            continue
        groups = ", ".join(k.group for k in landing)
        if pod.waits:
            found.append(
                Problem(
                    key,
                    Described(f"lands only on the GPU nodes of {groups}, and its creator waits for it"),
                    "a pod that is waited for lands on the system nodes: capacity-block groups are at 0 outside a "
                    "block, so the wait times out and the deploy fails (an atomic release rolls back)",
                    "select the system nodes (ultraserver.io/role: system) for it",
                )
            )
        elif pod.kind != "DaemonSet" and not _asks_for_gpu(pod.spec):
            sizes = ", ".join(f"{k.group} {k.size}" for k in landing)
            found.append(
                Problem(
                    key,
                    Described(f"lands only on the GPU nodes of {groups} (nodes now: {sizes})"),
                    "a controller that asks for no GPU runs on the system nodes, not only while a block is up",
                    "select the system nodes (ultraserver.io/role: system) for it",
                    WARNING,
                )
            )
    return found


def toolkit_objects(plan: Plan) -> list[Mapping[str, Any]]:
    """The Kubernetes objects the toolkit declares itself (not through Helm), as the API server gets them."""
    found: list[Mapping[str, Any]] = []
    for resource in plan.resources:
        if resource.type.startswith("kubernetes:") and resource.type != HELM_RELEASE:
            kind = resource.type.rsplit(":", 1)[-1]
            body = {"kind": kind, "metadata": resource.inputs.get("metadata") or {}, **_spec(resource.inputs)}
            if "apiVersion" in resource.inputs:
                body["apiVersion"] = resource.inputs["apiVersion"]
            found.append(body)
    return found


def _spec(inputs: Mapping[str, Any]) -> dict[str, Any]:
    return {"spec": inputs["spec"]} if isinstance(inputs.get("spec"), Mapping) else {}
