"""Rules for GPU workloads: a multi-node GB200 job joins a ComputeDomain and is submitted through Kueue."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from ultraserver.facts.hardware.devices import GPU_DEVICE_CLASS
from ultraserver.facts.kubernetes import kueue
from ultraserver.facts.kubernetes.scheduling import GPU_RESOURCE
from ultraserver.facts.pins import charts
from ultraserver.policy.model import COMPUTE_DOMAIN, PlanResource, Rule, as_int, as_list, get_path, releases_of
from ultraserver.problems import Described, Problem

KUEUE_TYPE_PREFIX = f"kubernetes:{kueue.API_GROUP}/"
CLAIM_TEMPLATE_PREFIX = "kubernetes:resource.k8s.io/"


def _count(value: Any, default: int = 1) -> int:
    number = as_int(value)
    return default if number is None else number


def pod_sets(kind: Any, spec: Mapping[str, Any]) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """(pods, pod template) of each pod set of an MPIJob, Job, JobSet or other object with a pod template."""
    if kind == "MPIJob":
        for replica in (get_path(spec, "mpiReplicaSpecs") or {}).values():
            if isinstance(replica, Mapping):
                yield _count(replica.get("replicas")), replica.get("template") or {}
    elif kind == "JobSet":
        for job in as_list(spec.get("replicatedJobs")):
            job_spec = get_path(job, "template", "spec") or {}
            pods = _count(get_path(job, "replicas")) * _count(job_spec.get("parallelism"))
            yield pods, job_spec.get("template") or {}
    elif kind == "Pod":
        yield 1, {"spec": spec}
    elif isinstance(spec.get("template"), Mapping):
        yield _count(spec.get("parallelism", spec.get("replicas"))), spec["template"]


def _requests_gpus(pod: Mapping[str, Any], gpu_claim_templates: set[str]) -> bool:
    """Whether a pod asks for GPUs: nvidia.com/gpu on a container, or a claim from a GPU ResourceClaimTemplate."""
    for container in [*as_list(pod.get("containers")), *as_list(pod.get("initContainers"))]:
        for part in ("limits", "requests"):
            if _count(get_path(container, "resources", part, GPU_RESOURCE), 0) > 0:
                return True
    return any(
        get_path(c, "resourceClaimTemplateName") in gpu_claim_templates for c in as_list(pod.get("resourceClaims"))
    )


def _gpu_claim_templates(resources: Sequence[PlanResource]) -> set[str]:
    """Names of the stack's ResourceClaimTemplates whose requests use the NVIDIA GPU DeviceClass."""
    names = set()
    for r in resources:
        if r.type.startswith(CLAIM_TEMPLATE_PREFIX) and r.type.endswith(":ResourceClaimTemplate"):
            for request in as_list(get_path(r.inputs, "spec", "spec", "devices", "requests")):
                classes = {get_path(request, "deviceClassName"), get_path(request, "exactly", "deviceClassName")}
                if GPU_DEVICE_CLASS in classes:
                    names.add(str(get_path(r.inputs, "metadata", "name")))
    return names


def _declares_kueue(resources: Sequence[PlanResource]) -> bool:
    """Whether the stack installs Kueue or declares its queues."""
    return any(r.type.startswith(KUEUE_TYPE_PREFIX) for r in resources) or bool(releases_of(resources, charts.KUEUE))


def check_multi_node_placement(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """Multi-node GPU workloads join a ComputeDomain of their namespace and name a Kueue queue."""
    domains = {
        (
            get_path(cd.inputs, "metadata", "namespace") or "default",
            get_path(cd.inputs, "spec", "channel", "resourceClaimTemplate", "name"),
        )
        for cd in resources
        if cd.type == COMPUTE_DOMAIN
    }
    gpu_templates = _gpu_claim_templates(resources)
    need_queue = bool(opts["requireQueueName"]) or _declares_kueue(resources)
    out = []
    for r in resources:
        metadata, gpu_sets = _gpu_pod_sets(r, gpu_templates)
        if sum(n for n, _ in gpu_sets) < 2:
            continue
        missing = _missing_placement(metadata, gpu_sets, domains, need_queue)
        if missing:
            out.append(
                Problem(
                    r.urn,
                    Described(
                        f"{r.inputs.get('kind')} {metadata.get('name')!r} runs {sum(n for n, _ in gpu_sets)} GPU pods "
                        "across nodes"
                    ),
                    " and ".join(missing),
                    "add them (ultraserver's compute_domain_pod_pieces and queue_labels/podset_topology_annotations "
                    f"build them), or annotate it {kueue.EXEMPT_ANNOTATION}: <why> if it must bypass them",
                )
            )
    return out


def _gpu_pod_sets(
    r: PlanResource, gpu_templates: set[str]
) -> tuple[Mapping[str, Any], list[tuple[int, Mapping[str, Any]]]]:
    """A Kubernetes workload's metadata and its pod sets that request GPUs (none when exempt or not a workload)."""
    if not r.type.startswith("kubernetes:") or not isinstance(r.inputs.get("spec"), Mapping):
        return {}, []
    raw = r.inputs.get("metadata")
    metadata: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    if get_path(metadata, "annotations", kueue.EXEMPT_ANNOTATION):
        return metadata, []
    gpu_sets = [
        (n, t)
        for n, t in pod_sets(r.inputs.get("kind"), r.inputs["spec"])
        if _requests_gpus(t.get("spec") or {}, gpu_templates)
    ]
    return metadata, gpu_sets


def _missing_placement(
    metadata: Mapping[str, Any],
    gpu_sets: list[tuple[int, Mapping[str, Any]]],
    domains: set[tuple[Any, Any]],
    need_queue: bool,
) -> list[str]:
    """What a multi-node GPU workload lacks: a ComputeDomain claim, the queue-name label, a topology annotation."""
    namespace = metadata.get("namespace") or "default"
    missing = []
    for _, template in gpu_sets:
        claims = {
            get_path(c, "resourceClaimTemplateName") for c in as_list(get_path(template, "spec", "resourceClaims"))
        }
        if not any((namespace, claim) in domains for claim in claims):
            missing.append(
                "a ComputeDomain claim (resourceClaims[].resourceClaimTemplateName = the channel template of a "
                "ComputeDomain in its namespace, one ComputeDomain per job)"
            )
            break
    labels = {**(get_path(metadata, "labels") or {}), **(get_path(gpu_sets[0][1], "metadata", "labels") or {})}
    queued = bool(labels.get(kueue.QUEUE_NAME_LABEL))
    if need_queue and not queued:
        missing.append(f"the label {kueue.QUEUE_NAME_LABEL} naming a LocalQueue of its namespace")
    # The toolkit's ClusterQueue is not topology-only (builders.kueue.unplaced_name): a GPU pod set without
    # a topology annotation gets no GPU quota and waits for good.
    topology = (kueue.PODSET_REQUIRED_TOPOLOGY, kueue.PODSET_PREFERRED_TOPOLOGY)
    if queued and not all(any(get_path(t, "metadata", "annotations", a) for a in topology) for _, t in gpu_sets):
        missing.append(f"on each GPU pod template {' or '.join(topology)} (without one Kueue admits no GPUs)")
    return missing


RULES: tuple[Rule, ...] = (
    Rule(
        name="gb200-multi-node-job-placement",
        description=(
            "A GPU workload of more than one pod (MPIJob, Job, JobSet, pod template) claims a ComputeDomain of its "
            "namespace and, where the stack declares Kueue, carries the kueue.x-k8s.io/queue-name label; a queued one "
            "has a topology annotation on each GPU pod template."
        ),
        fix=(
            "Add the ComputeDomain claim, the queue-name label and the podset topology annotation, or annotate "
            "ultraserver.io/kueue-exempt with why."
        ),
        check_stack=check_multi_node_placement,
        config_schema={
            "requireQueueName": {
                "type": "boolean",
                "description": "Require the queue-name label even when the stack itself declares no Kueue objects.",
            }
        },
        defaults={"requireQueueName": False},
    ),
)
