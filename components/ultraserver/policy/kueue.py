"""Rule: every job the stack queues through Kueue is admissible, by Kueue 0.19.2's DRA rules (facts/kueue_admission).

The plan holds all Kueue reads: the Configuration (in the Kueue Helm release's values), the ClusterQueue, the
LocalQueues, the queued jobs and their claim templates, either declared as ResourceClaimTemplates or created by the
NVIDIA DRA driver for a ComputeDomain's channel (facts/dra.channel_claim_spec).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import yaml

from ultraserver.facts.hardware import allocatable, devices
from ultraserver.facts.kubernetes import kueue
from ultraserver.facts.kubernetes.kueue_admission import (
    PodSet,
    Queue,
    Workload,
    admission_problems,
    cluster_queue_quota,
    placement_problems,
)
from ultraserver.facts.kubernetes.scheduling import INSTANCE_TYPE_LABEL
from ultraserver.facts.pins import charts
from ultraserver.policy.model import COMPUTE_DOMAIN, PlanResource, Rule, as_list, get_path, releases_of
from ultraserver.policy.workloads import KUEUE_TYPE_PREFIX, pod_sets
from ultraserver.problems import Problem

CLAIM_TEMPLATE_KIND = "ResourceClaimTemplate"


def _kind(resource: PlanResource) -> str:
    return resource.type.rsplit(":", 1)[-1]


def _kueue_objects(resources: Sequence[PlanResource], kind: str) -> list[PlanResource]:
    """The plan's Kueue objects of one kind (ClusterQueue, LocalQueue, ResourceFlavor)."""
    return [r for r in resources if r.type.startswith(KUEUE_TYPE_PREFIX) and _kind(r) == kind]


def _namespace(inputs: Mapping[str, Any]) -> str:
    return str(get_path(inputs, "metadata", "namespace") or "default")


def kueue_configuration(resources: Sequence[PlanResource]) -> dict[str, Any] | None:
    """The Configuration the stack's Kueue release runs with, or None when the plan installs no Kueue."""
    for r in releases_of(resources, charts.KUEUE):
        text = get_path(r.inputs, "values", *kueue.CONFIG_VALUE.split("."))
        loaded = yaml.safe_load(text) if isinstance(text, str) else None
        return loaded if isinstance(loaded, dict) else {}
    return None


def queues(resources: Sequence[PlanResource], configuration: Mapping[str, Any]) -> dict[tuple[str, str], Queue]:
    """(namespace, LocalQueue name) -> what admission reads for a job submitted to it."""
    cluster_queues = {
        str(get_path(r.inputs, "metadata", "name")): cluster_queue_quota(get_path(r.inputs, "spec") or {})
        for r in _kueue_objects(resources, "ClusterQueue")
    }
    node_type = topology_node_type(resources)
    return {
        (_namespace(r.inputs), str(get_path(r.inputs, "metadata", "name"))): Queue(
            configuration, cluster_queues.get(str(get_path(r.inputs, "spec", "clusterQueue")), {}), node_type
        )
        for r in _kueue_objects(resources, "LocalQueue")
    }


def claim_templates(resources: Sequence[PlanResource]) -> dict[tuple[str, str], Mapping[str, Any]]:
    """(namespace, name) -> ResourceClaimSpec of every claim template the plan declares or a ComputeDomain makes."""
    out: dict[tuple[str, str], Mapping[str, Any]] = {}
    for r in resources:
        if r.type.startswith("kubernetes:resource.k8s.io/") and _kind(r) == CLAIM_TEMPLATE_KIND:
            out[(_namespace(r.inputs), str(get_path(r.inputs, "metadata", "name")))] = (
                get_path(r.inputs, "spec", "spec") or {}
            )
        elif r.type == COMPUTE_DOMAIN:
            name = get_path(r.inputs, "spec", "channel", "resourceClaimTemplate", "name")
            out[(_namespace(r.inputs), str(name))] = devices.channel_claim_spec()
    return out


def pod_requests(pod: Mapping[str, Any]) -> dict[str, Any]:
    """What one pod requests as Kueue's topology-aware placement counts it: each app container's requests (its
    limits where a request is unset, as the API server defaults them), CPU summed in millicores."""
    out: dict[str, Any] = {}
    cpu = 0
    for container in as_list(pod.get("containers")):
        resources = get_path(container, "resources") or {}
        merged = {**(resources.get("limits") or {}), **(resources.get("requests") or {})}
        cpu += allocatable.cpu_millicores(merged.pop("cpu", 0)) or 0
        out.update(merged)
    if cpu:
        out["cpu"] = f"{cpu}m"
    return out


def topology_node_type(resources: Sequence[PlanResource]) -> str:
    """Instance type of the nodes of the plan's topology flavor (a ResourceFlavor with a topologyName), or ''."""
    for r in _kueue_objects(resources, "ResourceFlavor"):
        if get_path(r.inputs, "spec", "topologyName"):
            return str(get_path(r.inputs, "spec", "nodeLabels", INSTANCE_TYPE_LABEL) or "")
    return ""


def queued_workloads(resources: Sequence[PlanResource]) -> list[tuple[PlanResource, str, Workload]]:
    """(resource, its LocalQueue, the workload) of every job in the plan labelled with a Kueue queue name."""
    out = []
    for r in resources:
        spec = r.inputs.get("spec")
        queue = get_path(r.inputs, "metadata", "labels", kueue.QUEUE_NAME_LABEL)
        if not r.type.startswith("kubernetes:") or not isinstance(spec, Mapping) or not queue:
            continue
        sets = tuple(
            PodSet(
                f"podset-{index}",
                count,
                tuple(
                    str(c["resourceClaimTemplateName"])
                    for c in as_list(get_path(template, "spec", "resourceClaims"))
                    if isinstance(c, Mapping) and c.get("resourceClaimTemplateName")
                ),
                topology=bool(
                    set(get_path(template, "metadata", "annotations") or {}) & set(kueue.PODSET_TOPOLOGY_ANNOTATIONS)
                ),
                requests=pod_requests(get_path(template, "spec") or {}),
            )
            for index, (count, template) in enumerate(pod_sets(r.inputs.get("kind"), spec))
        )
        key = f"{r.inputs.get('kind')} {_namespace(r.inputs)}/{get_path(r.inputs, 'metadata', 'name')}"
        out.append((r, str(queue), Workload(key, _namespace(r.inputs), sets)))
    return out


Judge = Callable[[Workload, Mapping[tuple[str, str], Mapping[str, Any]], Queue], list[Problem]]
"""A replay of one Kueue decision over a workload, its claim templates and its queue
(facts/kubernetes/kueue_admission.py)."""


def _queued_problems(resources: Sequence[PlanResource], judge: Judge) -> list[Problem]:
    """What `judge` finds in each job queued to a LocalQueue of the stack, reported at the job's URN."""
    configuration = kueue_configuration(resources)
    if configuration is None:
        return []
    local_queues = queues(resources, configuration)
    templates = claim_templates(resources)
    out = []
    for resource, queue_name, workload in queued_workloads(resources):
        queue = local_queues.get((workload.namespace, queue_name))
        if queue is not None:
            # The workload's key (kind namespace/name) is what its URN names: report it at the URN.
            out += [dataclasses.replace(p, key=resource.urn) for p in judge(workload, templates, queue)]
    return out


def check_kueue_admission(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """Jobs queued to a LocalQueue of the stack that Kueue would never admit, with the reason."""
    return _queued_problems(resources, admission_problems)


def check_kueue_placement(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """Jobs queued to a LocalQueue of the stack whose topology-aware pod sets Kueue could stack on one node."""
    return _queued_problems(resources, placement_problems)


RULES: tuple[Rule, ...] = (
    Rule(
        name="kueue-dra-admission",
        description=(
            "Every job the stack submits to one of its LocalQueues is admissible by the pinned Kueue: each DeviceClass "
            "its claim templates use is mapped in resources.deviceClassMappings and covered by the ClusterQueue's "
            "quota, or Kueue's DRA gates are off."
        ),
        fix="Map the DeviceClass and give its quota resource nominal quota (the toolkit's Kueue does), or drop it.",
        check_stack=check_kueue_admission,
    ),
    Rule(
        name="kueue-tas-placement",
        description=(
            "Every topology-aware pod set the stack queues through Kueue is sized by requests Kueue's topology-aware "
            "placement counts: pods that ask only for DRA claims are refused (TAS does not count claims and may put "
            "several on one node), and pods claiming a whole node request CPU that fits a node exactly once."
        ),
        fix="Give each whole-node container the CPU share of builders/device_claims.whole_node_resources.",
        check_stack=check_kueue_placement,
    ),
)
