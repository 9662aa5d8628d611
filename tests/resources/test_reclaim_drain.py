"""The reclaim drain in the plan: a CronJob every minute on the system nodes with every block of the stack, the
least RBAC its calls need, and none for a stack whose groups have no window."""

from __future__ import annotations

import copy
import json

import kubernetes_validate
from helpers.plan_lookup import offline_arn, one
from helpers.stacks import ROOT, stack_config
from ultraserver.builders.layer_parts import reclaim_drain_args
from ultraserver.builders.reclaim_drain import DRAIN_READS, DRAIN_REBOOTS, DRAIN_SCALES
from ultraserver.config.settings import parse_settings
from ultraserver.incluster import drain as ds
from ultraserver.offline import run_plan

CRON = "kubernetes:batch/v1:CronJob"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
ROLE = "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole"


def test_the_x72_stack_plans_the_drain_with_its_block_and_queue() -> None:
    plan = run_plan(ROOT, "gb200-x72")
    (cron,) = [r.inputs for r in plan.resources if r.type == CRON and r.name.endswith("reclaim-drain-cron")]
    spec = cron["spec"]
    assert spec["schedule"] == "* * * * *" and spec["concurrencyPolicy"] == "Forbid"
    pod = spec["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["nodeSelector"]  # the system nodes, never the nodes it drains
    env = {e["name"]: e.get("value") or e["valueFrom"] for e in pod["containers"][0]["env"]}
    # BLOCKS comes from the blocks ConfigMap (which extend patches), resolved when each minute's pod starts.
    ref = env["BLOCKS"]["configMapKeyRef"]
    (config_map,) = [
        r.inputs for r in plan.resources if r.type == CONFIG_MAP and r.inputs["metadata"]["name"] == ref["name"]
    ]
    assert config_map["metadata"]["namespace"] == cron["metadata"]["namespace"]
    (block,) = [ds.Block.from_json(b) for b in json.loads(config_map["data"][ref["key"]])]
    assert (block.ultraserver, block.reservations) == ("nvl72", ("cr-0123456789abcdef0",))
    assert (block.end.isoformat(), block.lead_minutes) == ("2026-12-15T11:30:00+00:00", 65)
    assert env["CLUSTER_QUEUE"] in ("", "gb200")
    kubernetes_validate.validate({"apiVersion": "batch/v1", "kind": "CronJob", **cron}, "1.35", strict=True)
    (role,) = [r.inputs for r in plan.resources if r.type == ROLE and r.name.endswith("reclaim-drain-role")]
    rules = role["rules"]
    verbs = {(g, res): tuple(r["verbs"]) for r in rules for g in r["apiGroups"] for res in r["resources"]}
    assert verbs[("", "pods/eviction")] == ("create",) and verbs[("", "nodes")] == ("get", "list", "patch")
    assert ("", "secrets") not in verbs
    # The fabric check as deployed rides along, to be made again when the next block's nodes are all Ready.
    (check,) = json.loads(config_map["data"]["checks.json"])
    # ... read from the mounted ConfigMap (a file: an environment string is capped in size).
    volumes = {v["name"]: v["configMap"]["name"] for v in pod["volumes"]}
    mounts = {m["mountPath"]: volumes[m["name"]] for m in pod["containers"][0]["volumeMounts"]}
    folder, _, key = env["CHECKS_FILE"].rpartition("/")
    assert (mounts[folder], key) == (ref["name"], "checks.json")
    mpijobs = [r.inputs for r in plan.resources if r.type == "kubernetes:kubeflow.org/v2beta1:MPIJob"]
    assert [check["metadata"]["name"]] == [m["metadata"]["name"] for m in mpijobs] == ["nvbandwidth-nvl72"]
    assert check["spec"] == mpijobs[0]["spec"]
    # MPIJobs only in the check's namespace (anywhere, the operator would run any pod in any namespace for it).
    assert ("kubeflow.org", "mpijobs") not in verbs
    (bound,) = [
        r.inputs
        for r in plan.resources
        if r.type == "kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"
        and r.name.endswith("reclaim-drain-checks-imex-check")
    ]
    assert bound["metadata"]["namespace"] == check["metadata"]["namespace"] == "imex-check"
    (checks_role,) = [
        r.inputs for r in plan.resources if r.type == ROLE and r.name.endswith("reclaim-drain-checks-role")
    ]
    assert checks_role["metadata"]["name"] == bound["roleRef"]["name"]
    assert checks_role["rules"] == [
        {"apiGroups": ["kubeflow.org"], "resources": ["mpijobs"], "verbs": ["list", "create", "delete"]}
    ]


def test_a_stack_without_windows_plans_no_drain() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:gpuNodeGroups"][0].pop("reservationWindow")
    plan = run_plan(ROOT, "gb200-x72", {"ultraserver-eks:gpuNodeGroups": config["ultraserver-eks:gpuNodeGroups"]})
    assert not [r for r in plan.resources if r.type == CRON and "reclaim-drain" in r.name]


def test_the_shipped_fleet_stack_drains_every_group() -> None:
    """gb200-multi ships with windows: its 4 UltraServers and its 8-UltraServer fleet all get the drain (in its
    kubernetes-layer project), which pages through the platform's alert topic."""
    layer = run_plan(ROOT / "kubernetes-layer", "gb200-multi")
    (blocks,) = [r.inputs for r in layer.resources if r.type == CONFIG_MAP and r.name.endswith("reclaim-drain-blocks")]
    served = {b["ultraserver"] for b in json.loads(blocks["data"]["blocks.json"])}
    assert served == {"nvl72-1", "nvl72-2", "nvl72-3", "nvl72-4", "fleet"}
    (cron,) = [r.inputs for r in layer.resources if r.type == CRON and r.name.endswith("reclaim-drain-cron")]
    env = {e["name"] for e in cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert {"ALERT_TOPIC_ARN", "CLUSTER_NAME", "WARNING_QUEUE_URL"} <= env


def test_expiration_warnings_reach_the_drain_through_a_queue_only_the_rule_sends_to_and_only_the_drain_reads() -> None:
    plan = run_plan(ROOT, "gb200-x72")
    queue = one(plan, "aws:sqs/queue:Queue", "reclaim-warnings")
    assert queue.inputs["sqsManagedSseEnabled"] is True
    rule = one(plan, "aws:cloudwatch/eventRule:EventRule", "reclaim-warnings")
    assert json.loads(rule.inputs["eventPattern"]) == {
        "source": ["aws.ec2"],
        "detail-type": ["Capacity Block Expiration Warning", "Capacity Block Reservation Expiration Warning"],
    }
    target = one(plan, "aws:cloudwatch/eventTarget:EventTarget", "reclaim-warnings")
    assert target.property_dependencies["arn"] == [queue.urn]
    assert target.property_dependencies["rule"] == [rule.urn]
    policy = one(plan, "aws:sqs/queuePolicy:QueuePolicy", "reclaim-warnings")
    assert set(policy.property_dependencies["policy"]) == {queue.urn, rule.urn}
    (send,) = json.loads(policy.inputs["policy"])["Statement"]
    assert (send["Principal"], send["Action"]) == ({"Service": "events.amazonaws.com"}, "sqs:SendMessage")
    assert send["Condition"] == {"ArnEquals": {"aws:SourceArn": offline_arn(rule)}}
    role = one(plan, "aws:iam/role:Role", "reclaim-warnings")
    (trust,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    statements = json.loads(one(plan, "aws:iam/rolePolicy:RolePolicy", "reclaim-warnings").inputs["policy"])[
        "Statement"
    ]
    read, reads, *scoped = statements
    assert (read["Action"], read["Resource"]) == (["sqs:ReceiveMessage", "sqs:DeleteMessage"], send["Resource"])
    # Describe calls (no resource-level permissions); scaling only the cluster's own groups; publishing only to the
    # stack's topic with its key.
    assert (reads["Action"], reads["Resource"]) == (list(DRAIN_READS), "*")
    scales = [s for s in scoped if s["Action"] == list(DRAIN_SCALES)]
    assert [s["Condition"]["StringEquals"] for s in scales] == [
        {"autoscaling:ResourceTag/kubernetes.io/cluster/gb200-x72": "owned"},
        {"autoscaling:ResourceTag/eks:cluster-name": "gb200-x72"},
    ]
    assert not [s for s in scoped if s["Action"] == DRAIN_REBOOTS]  # a managed group's nodes are EKS's to repair
    topic = one(plan, "aws:sns/topic:Topic", "alerts")
    (publish,) = [s for s in scoped if s["Action"] == "sns:Publish"]
    assert publish["Resource"] == offline_arn(topic)
    (key_use,) = [s for s in scoped if s["Action"] == ["kms:GenerateDataKey*", "kms:Decrypt"]]
    assert key_use["Resource"] == offline_arn(one(plan, "aws:kms/key:Key", "alerts"))
    (cron,) = [r.inputs for r in plan.resources if r.type == CRON and r.name.endswith("reclaim-drain-cron")]
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    association = one(plan, "aws:eks/podIdentityAssociation:PodIdentityAssociation", "reclaim-warnings")
    assert (association.inputs["namespace"], association.inputs["serviceAccount"]) == (
        cron["metadata"]["namespace"],
        pod["serviceAccountName"],
    )
    assert association.property_dependencies["roleArn"] == [role.urn]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["AWS_REGION"] == "us-east-1" and env["WARNING_QUEUE_URL"].startswith("https://sqs.")
    # The script the CronJob runs is mounted with the client it imports.
    (scripts,) = [r.inputs for r in plan.resources if r.type == CONFIG_MAP and r.inputs["metadata"] == cron["metadata"]]
    assert "warning_queue.py" in scripts["data"]


def test_a_separate_stack_layer_reads_the_warning_queue_url_from_the_platform_stack() -> None:
    groups = copy.deepcopy(stack_config("gb200-multi")["ultraserver-eks:gpuNodeGroups"])
    groups[0]["reservationWindow"] = {"start": "2026-12-01T11:30:00Z", "end": "2026-12-15T11:30:00Z"}
    overrides = {"ultraserver-eks:gpuNodeGroups": groups}
    platform = run_plan(ROOT, "gb200-multi", overrides)
    one(platform, "aws:sqs/queue:Queue", "reclaim-warnings")
    assert not [r for r in platform.resources if r.type == CRON]
    layer = run_plan(ROOT / "kubernetes-layer", "gb200-multi", overrides)
    (cron,) = [r.inputs for r in layer.resources if r.type == CRON and r.name.endswith("reclaim-drain-cron")]
    env = {
        e["name"]: e.get("value")
        for e in cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["env"]
    }
    assert env["WARNING_QUEUE_URL"].startswith("https://sqs.") and env["AWS_REGION"]


def test_a_self_managed_group_lets_the_drain_reboot_the_instances_that_group_launches_only() -> None:
    plan = run_plan(ROOT, "gb200-multi")
    policy = one(plan, "aws:iam/rolePolicy:RolePolicy", "reclaim-warnings")
    (reboot,) = [s for s in json.loads(policy.inputs["policy"])["Statement"] if s["Action"] == DRAIN_REBOOTS]
    condition = reboot["Condition"]["StringEquals"]
    # Exactly the tags the self-managed group's Auto Scaling group puts on every instance it launches; the managed
    # node groups' and the system nodes' instances do not carry them all.
    group = one(plan, "aws:autoscaling/group:Group", "fleet")
    launched = {t["key"]: t["value"] for t in group.inputs["tags"] if t["propagateAtLaunch"]}
    assert {k.removeprefix("aws:ResourceTag/"): v for k, v in condition.items()} == launched
    assert launched["kubernetes.io/cluster/gb200-multi"] == "owned"
    # No launch template (the managed groups', the system nodes') tags its instances with the condition's keys.
    templates = [r for r in plan.resources if r.type == "aws:ec2/launchTemplate:LaunchTemplate"]
    tagged = {k for r in templates for spec in r.inputs.get("tagSpecifications") or [] for k in spec["tags"]}
    assert len(templates) == 6 and not tagged & set(launched)
    # The drain reboots the nodes of the self-managed group only (the layer is a separate stack here).
    layer = run_plan(ROOT / "kubernetes-layer", "gb200-multi")
    (cron,) = [r.inputs for r in layer.resources if r.type == CRON and r.name.endswith("reclaim-drain-cron")]
    container = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert [g["group"] for g in json.loads(env["SPARES"]) if g["reboot"]] == ["fleet"]


def test_a_self_managed_group_without_a_window_or_spares_still_gets_the_cronjob_that_reboots_its_nodes() -> None:
    config = copy.deepcopy(stack_config("gb200-multi"))
    (fleet,) = [g for g in config["ultraserver-eks:gpuNodeGroups"] if g["name"] == "fleet"]
    del fleet["reservationWindow"]
    config["ultraserver-eks:gpuNodeGroups"] = [fleet]
    drain = reclaim_drain_args(parse_settings(config))
    assert drain is not None and list(drain.blocks) == []
    assert [(g.group, g.reboot) for g in drain.spares] == [("fleet", True)]
    fleet["mode"] = "managed"  # the same group managed (EKS repairs it when asked): no CronJob for it
    del fleet["capacityReservationResourceGroupArn"], fleet["ultraserverCount"]
    fleet["capacityReservationIds"] = ["cr-0a00000000000000a"]
    assert reclaim_drain_args(parse_settings(config)) is None
