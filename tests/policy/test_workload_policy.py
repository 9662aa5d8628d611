"""gb200-multi-node-job-placement on the real plan: the queue label is required where the stack declares Kueue."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace

from ultraserver.offline import Plan
from ultraserver.policy import PlanResource, evaluate
from ultraserver.policy.workloads import check_multi_node_placement, pod_sets

RULE = "gb200-multi-node-job-placement"
MPIJOB = "kubernetes:kubeflow.org/v2beta1:MPIJob"


def unlabelled(resources: list[PlanResource]) -> list[PlanResource]:
    """The stack with the queue label taken off its MPIJobs."""
    out = []
    for r in resources:
        if r.type == MPIJOB:
            inputs = copy.deepcopy(r.inputs)
            inputs["metadata"].pop("labels", None)
            r = replace(r, inputs=inputs)
        out.append(r)
    return out


def test_a_queued_check_without_its_queue_label_fails_where_kueue_is_declared(
    shipped_plan: Callable[[str], Plan],
) -> None:
    resources = shipped_plan("gb200-x72").resources
    assert not [v for v in evaluate(resources) if v.policy == RULE]
    found = [v for v in evaluate(unlabelled(resources)) if v.policy == RULE]
    assert len(found) == 1 and "kueue.x-k8s.io/queue-name" in found[0].message
    assert found[0].urn.endswith("::gb200-x72-k8s-imex-check-nvbandwidth-nvl72") and "MPIJob" in found[0].urn
    # A stack without Kueue objects does not need the label (unless requireQueueName is set).
    without_kueue = [r for r in unlabelled(resources) if "kueue" not in r.type and not r.name.endswith("-kueue")]
    assert not [v for v in evaluate(without_kueue) if v.policy == RULE]
    assert check_multi_node_placement(without_kueue, {"requireQueueName": True})


def test_pod_sets_count_pods_of_jobs_and_jobsets() -> None:
    template = {"spec": {"containers": [{"resources": {"limits": {"nvidia.com/gpu": 4}}}]}}
    assert [n for n, _ in pod_sets("Job", {"parallelism": 3, "template": template})] == [3]
    jobset = {"replicatedJobs": [{"replicas": 2, "template": {"spec": {"parallelism": 4, "template": template}}}]}
    assert [n for n, _ in pod_sets("JobSet", jobset)] == [8]
    assert [n for n, _ in pod_sets("Pod", {"containers": []})] == [1]


def test_a_queued_job_without_a_topology_annotation_on_its_gpu_pods_fails(
    shipped_plan: Callable[[str], Plan],
) -> None:
    # The queue is not topology-only, so Kueue gives a GPU pod set without a topology request no quota at all.
    out = []
    for r in shipped_plan("gb200-x72").resources:
        if r.type == MPIJOB:
            inputs = copy.deepcopy(r.inputs)
            inputs["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["metadata"].pop("annotations", None)
            r = replace(r, inputs=inputs)
        out.append(r)
    (found,) = [v for v in evaluate(out) if v.policy == RULE]
    assert "kueue.x-k8s.io/podset-required-topology or kueue.x-k8s.io/podset-preferred-topology" in found.message
