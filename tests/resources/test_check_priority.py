"""The fabric checks made at each join go before users' older Workloads in the same ClusterQueue (issue 42 §5), and
Kueue's all-or-nothing wait is set for whole-UltraServer jobs.

Kueue 0.19.2 (kubernetes-sigs/kueue tag v0.19.2, read with ``git show v0.19.2:<file>``) orders a ClusterQueue's
pending Workloads in ``baseCompareFunc`` (pkg/cache/queue/cluster_queue.go): the sticky Workload first, then the
higher ``EffectivePriority`` (pkg/util/priority/priority.go: the Workload's spec.priority, 0 by default,
pkg/constants/constants.go DefaultPriority), then the earlier queue-order timestamp, then the UID. A job's
``kueue.x-k8s.io/priority-class`` label names the WorkloadPriorityClass whose ``value`` becomes that priority
(``ExtractPriority``, pkg/controller/jobframework/reconciler.go: a class it cannot get is an error, no Workload).
``kueue_order`` below is that comparison; everything it is given comes from the offline plan of a shipped stack.
"""

from __future__ import annotations

import json
import tarfile
from datetime import datetime, timedelta, timezone
from typing import Any

import jsonschema
import pytest
import yaml
from helpers.render import packaged_chart
from helpers.stacks import STACKS
from ultraserver.offline import Plan

from tests.resources.test_kueue_plan import layer_plan

KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
MPIJOB = "kubernetes:kubeflow.org/v2beta1:MPIJob"
RELEASE = "kubernetes:helm.sh/v3:Release"
CLASS_LABEL = "kueue.x-k8s.io/priority-class"
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
BLOCK_START = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)


def priority_classes(plan: Plan) -> dict[str, int]:
    return {r.inputs["metadata"]["name"]: r.inputs["value"] for r in plan.of_type(KUEUE + "WorkloadPriorityClass")}


def queued_checks(plan: Plan) -> list[Any]:
    return [j for j in plan.of_type(MPIJOB) if QUEUE_LABEL in (j.inputs["metadata"].get("labels") or {})]


def priority(labels: dict[str, str], classes: dict[str, int]) -> int:
    """The Workload's priority as ExtractPriority gives it (no class: 0)."""
    name = labels.get(CLASS_LABEL)
    if name is None:
        return 0
    assert name in classes, f"Kueue makes no Workload for a job naming the missing class {name}"
    return classes[name]


def kueue_order(pending: list[dict[str, Any]]) -> list[str]:
    """baseCompareFunc: higher priority first, then the earlier timestamp, then the UID (here the name)."""
    return [w["name"] for w in sorted(pending, key=lambda w: (-w["priority"], w["created"], w["name"]))]


@pytest.mark.parametrize("stack", ["gb200-x72", "gb200-x36", "gb200-x72-dra"])
def test_the_checks_of_a_new_block_are_admitted_before_older_user_workloads(shipped_plan: Any, stack: str) -> None:
    plan = shipped_plan(stack)
    classes = priority_classes(plan)
    checks = queued_checks(plan)
    assert checks, "the stack queues its fabric checks through Kueue"
    # A busy queue at the block's start: users' jobs waiting since the day before, the checks made at the join.
    users = [
        {"name": f"user-{n}", "priority": 0, "created": BLOCK_START - timedelta(days=1) + n * timedelta(minutes=3)}
        for n in range(5)
    ]
    made = [
        {
            "name": j.inputs["metadata"]["name"],
            "priority": priority(j.inputs["metadata"]["labels"], classes),
            "created": BLOCK_START + timedelta(minutes=20),
        }
        for j in checks
    ]
    order = kueue_order(users + made)
    # With room for one whole-UltraServer job at a time, every check goes before any user's job.
    assert set(order[: len(made)]) == {m["name"] for m in made}, order
    # And they outrank a team's own class named in the docs' example value range.
    assert all(m["priority"] > 100_000 for m in made)


@pytest.mark.parametrize("stack", STACKS)
def test_every_queued_check_names_a_class_the_stack_creates_first(shipped_plan: Any, stack: str) -> None:
    plan = layer_plan(shipped_plan, stack)
    classes = {r.inputs["metadata"]["name"]: r for r in plan.of_type(KUEUE + "WorkloadPriorityClass")}
    for job in queued_checks(plan):
        name = job.inputs["metadata"]["labels"][CLASS_LABEL]
        assert classes[name].urn in job.dependencies, job.name
    (release,) = [r for r in plan.of_type(RELEASE) if r.inputs["chart"].endswith("/kueue")]
    assert all(release.urn in c.dependencies for c in classes.values())


def test_the_priority_class_fits_kueue_s_crd(shipped_plan: Any) -> None:
    """Against the WorkloadPriorityClass CRD of the packaged Kueue 0.19.2 chart (templates/crd/)."""
    with tarfile.open(packaged_chart("kueue-0.19.2.tgz")) as chart:
        member = chart.extractfile("kueue/templates/crd/kueue.x-k8s.io_workloadpriorityclasses.yaml")
        assert member is not None
        text = member.read().decode()
    # The chart's template: its licence comment and template lines dropped, the CRD itself is plain YAML.
    body = text[text.index("apiVersion: apiextensions.k8s.io/v1") :]
    text = "\n".join(line for line in body.splitlines() if "{{" not in line)
    crd = yaml.safe_load(text)
    (version,) = [v for v in crd["spec"]["versions"] if v["name"] == "v1beta2"]
    schema = version["schema"]["openAPIV3Schema"]
    (manifest,) = [r.inputs for r in shipped_plan("gb200-x72").of_type(KUEUE + "WorkloadPriorityClass")]
    jsonschema.validate(manifest, schema)
    assert set(manifest) <= set(schema["properties"]) and -(2**31) <= manifest["value"] < 2**31  # int32


def test_kueue_waits_for_a_whole_ultraserver_job_s_pods_with_settings_of_its_own(shipped_plan: Any) -> None:
    """waitForPodsReady in the Configuration the release installs: a stuck job gives its quota back sooner than
    Kueue's 30-minute default (apis/config/v1beta2/defaults.go DefaultWaitForPodsReadyTimeout at v0.19.2), admission
    is not serialized over the queue, and a job that never starts stops being retried."""
    (release,) = [r for r in shipped_plan("gb200-x72").of_type(RELEASE) if r.inputs["chart"].endswith("/kueue")]
    config = yaml.safe_load(release.inputs["values"]["managerConfig"]["controllerManagerConfigYaml"])
    wait = config["waitForPodsReady"]
    minutes = int(wait["timeout"].removesuffix("m"))
    assert 0 < minutes < 30 and wait["recoveryTimeout"] == wait["timeout"]
    assert wait["blockAdmission"] is False
    assert wait["requeuingStrategy"]["backoffLimitCount"] >= 1
    assert wait["requeuingStrategy"]["timestamp"] == "Eviction"


def test_the_checks_the_drain_makes_again_at_each_join_keep_their_priority(shipped_plan: Any) -> None:
    """The in-cluster recheck creates the checks again from checks.json in the drain's ConfigMap: the same class."""
    plan = shipped_plan("gb200-x72")
    (blocks,) = [
        c for c in plan.of_type("kubernetes:core/v1:ConfigMap") if "checks.json" in (c.inputs.get("data") or {})
    ]
    checks = json.loads(blocks.inputs["data"]["checks.json"])
    queued = [c for c in checks if QUEUE_LABEL in c["metadata"].get("labels", {})]
    assert queued and all(c["metadata"]["labels"][CLASS_LABEL] in priority_classes(plan) for c in queued)


@pytest.mark.parametrize("stack", ["gb200-x72", "gb200-x72-dra"])
def test_a_deployed_check_gets_its_priority_class_by_being_made_again(shipped_plan: Any, stack: str) -> None:
    """Kueue's job webhook refuses adding the priority-class label to a job that is not suspended (a check that has
    run; ValidateUpdateForWorkloadPriorityClassName, pkg/controller/jobframework/validation.go at v0.19.2): a label
    change deletes and recreates the check instead of updating it."""
    for job in queued_checks(shipped_plan(stack)):
        assert "metadata.labels" in job.replace_on_changes and "spec" in job.replace_on_changes, job.name
