"""Self-managed groups: Node Termination Handler in queue mode, desired 0 without a reservation window (item 5)."""

from __future__ import annotations

import copy
import json

import pytest
from helpers.plan_lookup import offline_arn, one
from helpers.stacks import ROOT, stack_config
from ultraserver.facts.aws import node_termination as nth
from ultraserver.facts.pins import charts
from ultraserver.offline import run_plan
from ultraserver.problems import ConfigError

SELF_MANAGED = "gb200-x36"
ALL_MANAGED = "gb200-x72"
RELEASE = "kubernetes:helm.sh/v3:Release"
NTH_TYPES = (
    "aws:sqs/queue:Queue",
    "aws:sqs/queuePolicy:QueuePolicy",
    "aws:cloudwatch/eventRule:EventRule",
    "aws:cloudwatch/eventTarget:EventTarget",
    "aws:autoscaling/lifecycleHook:LifecycleHook",
    "aws:eks/podIdentityAssociation:PodIdentityAssociation",
    "ultraserver:index:NodeTerminationHandler",
)


def handler_release(plan):  # type: ignore[no-untyped-def]
    return one(plan, RELEASE, "node-termination-handler")


def test_self_managed_stack_gets_the_queue_the_rules_and_the_lifecycle_hook(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan(SELF_MANAGED)
    queue = one(plan, "aws:sqs/queue:Queue", "termination")
    assert queue.inputs["sqsManagedSseEnabled"] is True
    assert queue.inputs["messageRetentionSeconds"] == nth.MESSAGE_RETENTION_SECONDS
    # The stack's other rules (the Capacity Block alerts) go to the alert topic.
    rules = [r for r in plan.of_type("aws:cloudwatch/eventRule:EventRule") if "-termination-" in r.name]
    assert sorted(json.loads(r.inputs["eventPattern"])["detail-type"][0] for r in rules) == sorted(
        p["detail-type"][0] for p in nth.EVENT_PATTERNS.values()
    )
    assert any(json.loads(r.inputs["eventPattern"]).get("detail", {}).get("service") == ["EC2"] for r in rules)
    targets = [t for t in plan.of_type("aws:cloudwatch/eventTarget:EventTarget") if "-termination-" in t.name]
    assert len(targets) == len(rules)
    assert all(t.property_dependencies["arn"] == [queue.urn] for t in targets)
    policy = json.loads(one(plan, "aws:sqs/queuePolicy:QueuePolicy", "termination").inputs["policy"])
    (statement,) = policy["Statement"]
    assert statement["Action"] == "sqs:SendMessage"
    assert statement["Principal"] == {"Service": "events.amazonaws.com"}
    # Only the handler's own rules may send (EventBridge guide, "Amazon SQS permissions": builders/event_queue.py).
    assert list(statement["Condition"]) == ["ArnEquals"] and list(statement["Condition"]["ArnEquals"]) == [
        "aws:SourceArn"
    ]
    assert sorted(statement["Condition"]["ArnEquals"]["aws:SourceArn"]) == sorted(offline_arn(r) for r in rules)
    hook = one(plan, "aws:autoscaling/lifecycleHook:LifecycleHook")
    assert hook.inputs["lifecycleTransition"] == "autoscaling:EC2_INSTANCE_TERMINATING"
    assert hook.inputs["defaultResult"] == "CONTINUE"
    group = one(plan, "aws:autoscaling/group:Group")
    assert group.urn in hook.dependencies
    managed_tag = {t["key"]: t for t in group.inputs["tags"]}[nth.MANAGED_TAG]
    assert managed_tag["propagateAtLaunch"] is True


def test_handler_role_through_pod_identity_with_only_the_readme_actions(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan(SELF_MANAGED)
    role = one(plan, "aws:iam/role:Role", "termination-handler")
    trust = json.loads(role.inputs["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert set(trust["Action"]) == {"sts:AssumeRole", "sts:TagSession"}
    statements = json.loads(one(plan, "aws:iam/rolePolicy:RolePolicy", "termination-handler").inputs["policy"])
    granted = {a: s["Resource"] for s in statements["Statement"] for a in s["Action"]}
    assert sorted(granted) == sorted(nth.POD_ACTIONS)
    # The README puts all six on "*"; its two SQS calls are granted on the handler's queue alone.
    queue_arn = offline_arn(one(plan, "aws:sqs/queue:Queue", "termination"))
    assert {a for a, where in granted.items() if where != "*"} == {"sqs:ReceiveMessage", "sqs:DeleteMessage"}
    assert {where for where in granted.values() if where != "*"} == {queue_arn}
    association = one(plan, "aws:eks/podIdentityAssociation:PodIdentityAssociation", "termination")
    assert (association.inputs["namespace"], association.inputs["serviceAccount"]) == (
        "kube-system",
        "aws-node-termination-handler",
    )


def test_handler_release_is_pinned_in_queue_mode_with_only_chart_keys(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan(SELF_MANAGED)
    release = handler_release(plan)
    pin = charts.pinned(charts.NODE_TERMINATION_HANDLER)
    assert (pin.version, pin.repo) == ("0.27.6", "oci://public.ecr.aws/aws-ec2/helm")
    assert release.inputs["chart"] == "oci://public.ecr.aws/aws-ec2/helm/aws-node-termination-handler"
    assert release.inputs["version"] == "0.27.6"
    assert "repositoryOpts" not in release.inputs
    values = release.inputs["values"]
    assert values["enableSqsTerminationDraining"] is True
    assert values["queueURL"].startswith("https://sqs.us-east-1.amazonaws.com/")
    assert values["awsRegion"] == "us-east-1"
    assert values["serviceAccount"]["name"] == nth.SERVICE_ACCOUNT
    assert charts.unknown_value_paths(charts.NODE_TERMINATION_HANDLER, values) == []
    queue = one(plan, "aws:sqs/queue:Queue", "termination")
    assert queue.urn in release.dependencies


def test_all_managed_stack_has_no_termination_handler(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan(ALL_MANAGED)
    for kind in NTH_TYPES:
        # The VPC CNI's pod identity is not the handler's.
        assert [r.name for r in plan.of_type(kind) if "termination" in r.name] == [], kind
    assert all("termination" not in r.name for r in plan.of_type(RELEASE))


def test_self_managed_group_starts_at_zero_without_a_reservation_window(shipped_plan, plan_with) -> None:  # type: ignore[no-untyped-def]
    group = one(shipped_plan(SELF_MANAGED), "aws:autoscaling/group:Group")
    assert (group.inputs["desiredCapacity"], group.inputs["maxSize"]) == (0, 9)  # before its shipped window
    groups = copy.deepcopy(stack_config(SELF_MANAGED)["ultraserver-eks:gpuNodeGroups"])
    del groups[0]["reservationWindow"]
    windowless = one(plan_with(SELF_MANAGED, {"gpuNodeGroups": groups}), "aws:autoscaling/group:Group")
    assert windowless.inputs["desiredCapacity"] == 0
    groups[0]["desiredSize"] = 9  # an explicit size (the block is active) is kept
    explicit = one(plan_with(SELF_MANAGED, {"gpuNodeGroups": groups}), "aws:autoscaling/group:Group")
    assert explicit.inputs["desiredCapacity"] == 9


def test_unknown_handler_value_is_a_settings_error(plan_with) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ConfigError, match=r"kubernetes\.nodeTerminationHandler\.values\.queueUrl"):
        plan_with(SELF_MANAGED, {"kubernetes": {"nodeTerminationHandler": {"values": {"queueUrl": "x"}}}})


def test_separate_stack_layer_reads_the_queue_url_from_the_platform_stack() -> None:
    groups = copy.deepcopy(stack_config("gb200-multi")["ultraserver-eks:gpuNodeGroups"])
    for group in groups:
        group["mode"] = "self-managed"
    overrides = {"ultraserver-eks:gpuNodeGroups": groups}
    platform = run_plan(ROOT, "gb200-multi", overrides)
    termination = [q for q in platform.of_type("aws:sqs/queue:Queue") if q.urn.endswith("-termination")]
    assert platform.of_type(RELEASE) == [] and len(termination) == 1  # beside it: the reclaim-warning queue
    layer = run_plan(ROOT / "kubernetes-layer", "gb200-multi", overrides)
    assert handler_release(layer).inputs["values"]["queueURL"].startswith("https://sqs.")
