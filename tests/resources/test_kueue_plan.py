"""Kueue in the offline plan of every shipped stack: the release, the queue objects after it, queued checks."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from helpers.stacks import ROOT, STACKS, stack_config
from ultraserver.offline import Plan, PlanResource, run_plan
from ultraserver.problems import ConfigError

RELEASE = "kubernetes:helm.sh/v3:Release"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
MPIJOB = "kubernetes:kubeflow.org/v2beta1:MPIJob"
GPUS = {"gb200-x72": 72, "gb200-x72-dra": 72, "gb200-x36": 36, "gb200-multi": 12 * 72}


def layer_plan(shipped_plan: Any, stack: str) -> Plan:
    """The plan that declares the stack's Kubernetes layer (the kubernetes-layer/ project for separate-stack)."""
    separate = (stack_config(stack).get("ultraserver-eks:kubernetes") or {}).get("layer") == "separate-stack"
    return run_plan(ROOT / "kubernetes-layer", stack) if separate else shipped_plan(stack)


def kueue_release(plan: Plan) -> PlanResource:
    (release,) = [r for r in plan.of_type(RELEASE) if r.inputs["chart"].endswith("/kueue")]
    return release


def by_kind(plan: Plan, kind: str) -> list[PlanResource]:
    return list(plan.of_type(KUEUE + kind))


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_stack_plans_kueue_with_its_gpus_as_quota(shipped_plan: Any, stack: str) -> None:
    plan = layer_plan(shipped_plan, stack)
    release = kueue_release(plan)
    assert release.inputs["chart"] == "oci://registry.k8s.io/kueue/charts/kueue"
    assert release.inputs["version"] == "0.19.2" and "repositoryOpts" not in release.inputs
    assert release.inputs["values"]["controllerManager"]["nodeSelector"] == {"ultraserver.io/role": "system"}
    (queue,) = by_kind(plan, "ClusterQueue")
    quota = {r["name"]: r["nominalQuota"] for r in queue.inputs["spec"]["resourceGroups"][0]["flavors"][0]["resources"]}
    assert quota["nvidia.com/gpu"] == GPUS[stack]
    objects = [*by_kind(plan, "Topology"), *by_kind(plan, "ResourceFlavor"), queue, *by_kind(plan, "LocalQueue")]
    assert len(objects) >= 4
    for resource in objects:
        # Kueue's CRDs and webhooks come with the release; its objects are created only after it is ready.
        assert release.urn in resource.dependencies, resource.name


def test_queued_imex_jobs_require_one_clique_and_wait_for_their_queue(shipped_plan: Any) -> None:
    plan = shipped_plan("gb200-x72")
    (job,) = plan.of_type(MPIJOB)
    check = {"kueue.x-k8s.io/queue-name": "gb200", "kueue.x-k8s.io/priority-class": "ultraserver-fabric-check"}
    assert job.inputs["metadata"]["labels"] == check
    worker = job.inputs["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["metadata"]
    assert worker["annotations"] == {"kueue.x-k8s.io/podset-required-topology": "nvidia.com/gpu.clique"}
    (local,) = [q for q in by_kind(plan, "LocalQueue") if q.inputs["metadata"]["namespace"] == "imex-check"]
    (queue,) = by_kind(plan, "ClusterQueue")
    assert {local.urn, queue.urn, kueue_release(plan).urn} <= set(job.dependencies)
    assert local.inputs["metadata"]["name"] == "gb200" and local.inputs["spec"] == {"clusterQueue": "gb200"}


def test_fleet_and_efa_check_jobs_bypass_kueue_and_say_why() -> None:
    plan = run_plan(ROOT / "kubernetes-layer", "gb200-multi")
    jobs = {j.inputs["metadata"]["name"]: j.inputs["metadata"] for j in plan.of_type(MPIJOB)}
    assert "kueue.x-k8s.io/queue-name" not in jobs["nccl-efa"].get("labels", {})
    assert "EFA" in jobs["nccl-efa"]["annotations"]["ultraserver.io/kueue-exempt"]
    assert "fleet" in jobs["nvbandwidth-fleet-1"]["annotations"]["ultraserver.io/kueue-exempt"]
    assert jobs["nvbandwidth-nvl72-1"]["labels"]["kueue.x-k8s.io/queue-name"] == "gb200"


def test_local_queue_namespaces_are_created_and_kueue_can_be_turned_off(plan_with: Any) -> None:
    plan = plan_with("gb200-x72", {"kubernetes": {"kueue": {"localQueueNamespaces": ["default", "team-a"]}}})
    queues = {q.inputs["metadata"]["namespace"]: q for q in by_kind(plan, "LocalQueue")}
    assert set(queues) == {"default", "team-a", "imex-check"}
    namespaces = [n for n in plan.of_type("kubernetes:core/v1:Namespace") if n.inputs["metadata"]["name"] == "team-a"]
    assert len(namespaces) == 1 and namespaces[0].urn in queues["team-a"].dependencies
    off = plan_with("gb200-x72", {"kubernetes": {"kueue": {"enabled": False}}})
    assert not [r for r in off.resources if r.type.startswith(KUEUE)]
    assert not [r for r in off.of_type(RELEASE) if r.inputs["chart"].endswith("/kueue")]
    (job,) = off.of_type(MPIJOB)
    assert "labels" not in job.inputs["metadata"]
    assert "annotations" not in job.inputs["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["metadata"]


@pytest.mark.parametrize("namespace", ["imex-check", "kueue-system", "gpu-operator"])
def test_a_local_queue_in_a_namespace_the_stack_creates_is_refused(plan_with: Any, namespace: str) -> None:
    with pytest.raises(ConfigError) as info:
        plan_with("gb200-x72", {"kubernetes": {"kueue": {"localQueueNamespaces": ["team-a", namespace]}}})
    (line,) = [str(p) for p in info.value.items]
    assert (
        line.startswith("ultraserver-eks:kubernetes.kueue.localQueueNamespaces")
        and namespace in line
        and "team-a" not in line.split(";")[0]
    )


def test_built_in_namespaces_get_a_queue_but_no_namespace_object(plan_with: Any) -> None:
    plan = plan_with("gb200-x72", {"kubernetes": {"kueue": {"localQueueNamespaces": ["kube-public"]}}})
    assert {q.inputs["metadata"]["namespace"] for q in by_kind(plan, "LocalQueue")} == {"kube-public", "imex-check"}
    names = {n.inputs["metadata"]["name"] for n in plan.of_type("kubernetes:core/v1:Namespace")}
    assert "kube-public" not in names


def test_the_stacks_own_namespaces_stay_out_of_kueues_webhooks(shipped_plan: Any) -> None:
    plan = shipped_plan("gb200-x72")
    config = yaml.safe_load(kueue_release(plan).inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    assert config["integrations"]["frameworks"] == ["batch/job", "kubeflow.org/mpijob"]
    (expression,) = config["managedJobsNamespaceSelector"]["matchExpressions"]
    left_out = set(expression["values"])
    namespaces = {n.inputs["metadata"]["name"] for n in plan.of_type("kubernetes:core/v1:Namespace")}
    releases = {r.inputs["namespace"] for r in plan.of_type(RELEASE)}
    # Every namespace the stack creates or installs into is left out, except the ones whose jobs are queued.
    assert {"kube-system", "kueue-system", "gpu-operator"} <= left_out
    assert (namespaces | releases) - {"imex-check"} <= left_out
    assert not {"imex-check", "default"} & left_out


def test_queued_mpijob_declares_none_of_the_fields_kueue_mutates(shipped_plan: Any) -> None:
    # pulumi-kubernetes diffs inputs and prunes a refreshed object to their shape: what Kueue sets on admission must
    # stay outside the inputs, or a `pulumi up --refresh` would replace (rerun) the check.
    plan = shipped_plan("gb200-x72")
    (job,) = plan.of_type(MPIJOB)
    assert "suspend" not in job.inputs["spec"]["runPolicy"]
    (flavor,) = [f for f in by_kind(plan, "ResourceFlavor") if "topologyName" in f.inputs["spec"]]
    for replica in job.inputs["spec"]["mpiReplicaSpecs"].values():
        pod = replica["template"]["spec"]
        assert "schedulingGates" not in pod
        selector = pod.get("nodeSelector", {})
        assert all(selector.get(k, v) == v for k, v in flavor.inputs["spec"]["nodeLabels"].items())
    worker = job.inputs["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
    assert worker["tolerations"] == flavor.inputs["spec"]["tolerations"]
