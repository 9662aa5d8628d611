"""Repair on self-managed GB200 groups, minute by minute: the reboots ``incluster.repair`` asks for over a failed GPU
(once per failure, after EKS's own 10 minutes, only for a reason a reboot clears, never on a managed group's node),
and the whole drain run (``drain_main.run``) making the call against the rehearsal's EC2, which records it."""

from __future__ import annotations

import copy
import json
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from ultraserver.facts.aws import node_repair
from ultraserver.facts.kubernetes.scheduling import ULTRASERVER_LABEL
from ultraserver.incluster import aws_query, drain_main, repair
from ultraserver.incluster.spares import SpareGroup
from ultraserver.rehearse.cloud import Cloud
from ultraserver.verify.clients import Node
from ultraserver.verify.spares import spare_view

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=timezone.utc)
NODES = 18
WAIT = 10
"""The EKS node-repair page: AcceleratedHardwareReady, "Repair after 10m"."""
REBOOTED = "NvidiaXID13Error"
"""A reason EKS reboots for (node monitoring agent page): the toolkit keeps Reboot."""
REPLACED = "NvidiaXID79Error"
"""A reason EKS replaces for (a GPU off the bus): the toolkit sets NoAction, the spare takes over."""
SELF_MANAGED = SpareGroup("fleet", 0, reboot=True)
MANAGED = SpareGroup("fleet", 0)


def iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def instance(index: int) -> str:
    return f"i-0{index:016x}"


def node(index: int) -> dict[str, Any]:
    """A Ready GB200 node of the fleet, healthy since an hour before T0."""
    return {
        "metadata": {"name": f"fleet-{index:02d}", "labels": {ULTRASERVER_LABEL: "fleet"}, "annotations": {}},
        "spec": {"providerID": f"aws:///us-east-1-dfw-2a/{instance(index)}"},
        "status": {
            "conditions": [
                {"type": "Ready", "status": "True", "lastTransitionTime": iso(T0 - timedelta(hours=1))},
                {"type": "AcceleratedHardwareReady", "status": "True", "reason": "", "lastTransitionTime": iso(T0)},
            ]
        },
    }


def set_gpu(target: dict[str, Any], status: str, reason: str, at: datetime) -> None:
    """The node monitoring agent sets AcceleratedHardwareReady."""
    for condition in target["status"]["conditions"]:
        if condition["type"] == "AcceleratedHardwareReady":
            condition.update(status=status, reason=reason, lastTransitionTime=iso(at))


def fleet() -> dict[str, dict[str, Any]]:
    return {n["metadata"]["name"]: n for n in (node(i) for i in range(NODES))}


def walk(
    nodes: dict[str, dict[str, Any]], group: SpareGroup, start: datetime, minutes: int, at: dict | None = None
) -> list[tuple[int, str, str]]:
    """Every minute: the changes due then, the reboots wanted, each marked on its node as drain_main marks it; the
    (minute, node, reason) of every reboot."""
    done = []
    for minute in range(minutes + 1):
        now = start + timedelta(minutes=minute)
        for change in (at or {}).get(minute, []):
            change(now)
        for action in repair.wanted(copy.deepcopy(list(nodes.values())), [group], now):
            nodes[action["name"]]["metadata"]["annotations"].update(repair.marks(action, now))
            done.append((minute, action["name"], action["reason"]))
    return done


def test_a_reboot_reason_reboots_the_node_once_after_ten_minutes() -> None:
    nodes = fleet()
    set_gpu(nodes["fleet-03"], "False", REBOOTED, T0)
    assert walk(nodes, SELF_MANAGED, T0, 3 * WAIT) == [(WAIT, "fleet-03", REBOOTED)]
    notes = nodes["fleet-03"]["metadata"]["annotations"]
    assert notes == {
        "ultraserver.io/rebooted-at": iso(T0 + timedelta(minutes=WAIT)),
        "ultraserver.io/reboot-reason": REBOOTED,
    }


def test_the_wanted_reboot_names_the_instance_of_the_node() -> None:
    nodes = fleet()
    set_gpu(nodes["fleet-05"], "False", REBOOTED, T0)
    (action,) = repair.wanted(list(nodes.values()), [SELF_MANAGED], T0 + timedelta(minutes=WAIT))
    assert (action["instance"], action["ultraserver"]) == (instance(5), "fleet")


@pytest.mark.parametrize(
    ("reason", "group"),
    [(REPLACED, SELF_MANAGED), ("NvidiaNVLinkError", SELF_MANAGED), (REBOOTED, MANAGED)],
    ids=["replace-only-xid", "nvlink", "managed-group"],
)
def test_no_reboot_where_only_a_replacement_helps_or_eks_repairs(reason: str, group: SpareGroup) -> None:
    nodes = fleet()
    set_gpu(nodes["fleet-03"], "False", reason, T0)
    assert walk(nodes, group, T0, 3 * WAIT) == []


def test_every_reboot_reason_of_the_table_and_no_other() -> None:
    """Each AcceleratedHardwareReady reason of the managed groups' overrides: Reboot reboots, NoAction does not."""
    for override in node_repair.OVERRIDES:
        nodes = fleet()
        set_gpu(nodes["fleet-00"], "False", override.reason, T0)
        wanted = repair.wanted(list(nodes.values()), [SELF_MANAGED], T0 + timedelta(minutes=WAIT))
        assert bool(wanted) == (override.action == "Reboot"), override.reason


def test_a_node_failed_again_soon_after_its_reboot_is_paged_not_rebooted_again() -> None:
    nodes = fleet()
    target = nodes["fleet-03"]
    set_gpu(target, "False", REBOOTED, T0)
    changes = {
        WAIT + 5: [lambda now: set_gpu(target, "True", "", now)],  # the reboot cleared it
        WAIT + 60: [lambda now: set_gpu(target, "False", "NvidiaXID31Error", now)],  # and it comes back
    }
    assert walk(nodes, SELF_MANAGED, T0, 4 * 60, changes) == [(WAIT, "fleet-03", REBOOTED)]
    found = repair.findings("gb200-multi", list(nodes.values()), [SELF_MANAGED], T0 + timedelta(hours=4))
    (again,) = [f for f in found if f["key"].startswith("reboot-failed:")]
    assert "fleet-03" in again["message"] and "ultraserver.io/rebooted-at-" in again["message"]


def test_a_reboot_that_did_not_help_is_paged_and_not_repeated() -> None:
    nodes = fleet()
    set_gpu(nodes["fleet-03"], "False", REBOOTED, T0)
    assert walk(nodes, SELF_MANAGED, T0, 90) == [(WAIT, "fleet-03", REBOOTED)]
    rebooted_at = T0 + timedelta(minutes=WAIT)
    early = repair.findings("s", list(nodes.values()), [SELF_MANAGED], rebooted_at + timedelta(minutes=WAIT - 1))
    assert [f["key"].split(":")[0] for f in early] == ["rebooted"]  # it may still be coming back
    late = repair.findings("s", list(nodes.values()), [SELF_MANAGED], rebooted_at + timedelta(minutes=WAIT))
    assert [f["key"] for f in late] == [
        f"rebooted:fleet-03:{iso(rebooted_at)}",
        f"reboot-failed:fleet-03:{iso(rebooted_at)}",
    ]


def test_a_new_failure_a_day_later_gets_its_own_reboot() -> None:
    nodes = fleet()
    target = nodes["fleet-03"]
    set_gpu(target, "False", REBOOTED, T0)
    day = 24 * 60
    changes = {
        WAIT + 5: [lambda now: set_gpu(target, "True", "", now)],
        WAIT + day: [lambda now: set_gpu(target, "False", "NvidiaXID119Error", now)],
    }
    found = walk(nodes, SELF_MANAGED, T0, 2 * WAIT + day + 5, changes)
    assert found == [(WAIT, "fleet-03", REBOOTED), (2 * WAIT + day, "fleet-03", "NvidiaXID119Error")]


def test_one_node_of_an_ultraserver_at_a_time() -> None:
    nodes = fleet()
    set_gpu(nodes["fleet-03"], "False", REBOOTED, T0)
    set_gpu(nodes["fleet-04"], "False", REBOOTED, T0)
    assert walk(nodes, SELF_MANAGED, T0, 4 * WAIT) == [(WAIT, "fleet-03", REBOOTED), (2 * WAIT, "fleet-04", REBOOTED)]


def test_half_an_ultraserver_failing_at_once_is_a_cluster_wide_signal_not_reboots() -> None:
    nodes = fleet()
    for index in range(NODES // 2 + 1):
        set_gpu(nodes[f"fleet-{index:02d}"], "False", REBOOTED, T0)
    assert walk(nodes, SELF_MANAGED, T0, 3 * WAIT) == []


class NotFound(Exception):
    """The API server's 404, as urllib raises it (``code``)."""

    code = 404


class Api:
    """The API server the drain's run reads: the fleet's nodes (JSON merge patches of their annotations), no pods,
    no Workloads, and its alert ConfigMap."""

    def __init__(self, nodes: dict[str, dict[str, Any]]) -> None:
        self.nodes, self.config_maps, self.patches = nodes, {}, []

    def get(self, path: str) -> dict[str, Any]:
        if path.startswith("/api/v1/nodes"):
            return {"items": copy.deepcopy(list(self.nodes.values()))}
        if "/configmaps/" in path:
            if path not in self.config_maps:
                raise NotFound(path)
            return copy.deepcopy(self.config_maps[path])
        return {"items": []}

    def patch(self, path: str, body: dict[str, Any]) -> None:
        if "/configmaps/" in path:
            self.config_maps[path]["data"].update(body["data"])
            return
        self.patches.append((path, body))
        target = self.nodes[path.rsplit("/", 1)[1]]["metadata"]
        merged = {**target["annotations"], **body["metadata"].get("annotations", {})}
        target["annotations"] = {k: v for k, v in merged.items() if v is not None}
        if "labels" in body["metadata"]:
            target["labels"] = {**target["labels"], **body["metadata"]["labels"]}
        if "spec" in body:
            self.nodes[path.rsplit("/", 1)[1]]["spec"].update(body["spec"])

    def post(self, path: str, body: dict[str, Any]) -> bool:
        self.config_maps[f"{path}/{body['metadata']['name']}"] = copy.deepcopy(body)
        return True

    def delete(self, path: str) -> None:
        raise AssertionError(path)


TOPIC = "arn:aws:sns:us-east-1:111122223333:gb200-multi-alerts"


def env(group: SpareGroup) -> dict[str, str]:
    return {
        "BLOCKS": "[]",
        "CLUSTER_NAME": "gb200-multi",
        "AWS_REGION": "us-east-1",
        "ALERT_TOPIC_ARN": TOPIC,
        "ALERT_STATE": "ultraserver-reclaim/reclaim-drain-alerted",
        "SPARES": json.dumps([group.to_json()]),
    }


def test_the_drain_run_reboots_the_instance_through_ec2_and_pages_once() -> None:
    nodes = fleet()
    set_gpu(nodes["fleet-07"], "False", REBOOTED, T0)
    api, cloud = Api(nodes), Cloud()
    for minute in range(3 * WAIT):
        now = T0 + timedelta(minutes=minute)
        taken, _ = drain_main.run(api, now, env(SELF_MANAGED), cloud.api)
        assert [a for a in taken if a["kind"] == "reboot"] == (
            [
                {
                    "kind": "reboot",
                    "name": "fleet-07",
                    "instance": instance(7),
                    "reason": REBOOTED,
                    "ultraserver": "fleet",
                }
            ]
            if minute == WAIT
            else []
        )
    assert cloud.rebooted == [instance(7)]
    assert [c for c in cloud.calls if c == ("ec2", "RebootInstances")] == [("ec2", "RebootInstances")]
    (page,) = [p for p in cloud.published if "rebooted node" in p["Message"]]
    assert page["TopicArn"] == TOPIC
    assert f"rebooted node fleet-07 (instance {instance(7)}, reason {REBOOTED}) in UltraServer fleet" in page["Message"]


def test_the_drain_run_leaves_a_managed_groups_node_to_eks() -> None:
    nodes = fleet()
    set_gpu(nodes["fleet-07"], "False", REBOOTED, T0)
    api, cloud = Api(nodes), Cloud()
    for minute in range(2 * WAIT):
        drain_main.run(api, T0 + timedelta(minutes=minute), env(MANAGED), cloud.api)
    assert cloud.rebooted == [] and ("ec2", "RebootInstances") not in cloud.calls
    assert not any("ultraserver.io/rebooted-at" in b["metadata"].get("annotations", {}) for _, b in api.patches)


def set_ready(target: dict[str, Any], status: str, at: datetime) -> None:
    for condition in target["status"]["conditions"]:
        if condition["type"] == "Ready":
            condition.update(status=status, lastTransitionTime=iso(at))


def test_with_a_spare_the_spare_takes_over_then_the_rebooted_node_becomes_the_spare() -> None:
    """The spares controller and the reboot together, minute by minute: the spare is promoted after 2 minutes, the
    failed node rebooted after 10, and once it is back and healthy it is the UltraServer's spare."""
    nodes = fleet()
    api, cloud = Api(nodes), Cloud()
    group = SpareGroup("fleet", 1, reboot=True)
    drain_main.run(api, T0 - timedelta(minutes=1), env(group), cloud.api)  # nodes labelled: fleet-17 is the spare
    assert nodes["fleet-17"]["metadata"]["labels"]["ultraserver.io/node-role"] == "spare"
    target = nodes["fleet-03"]
    set_gpu(target, "False", REBOOTED, T0)
    back = None
    for minute in range(40):
        now = T0 + timedelta(minutes=minute)
        if cloud.rebooted and back is None:  # the instance restarts: NotReady, then Ready with a healthy GPU
            set_ready(target, "False", now)
            back = minute + 4
        if minute == back:
            set_ready(target, "True", now)
            set_gpu(target, "True", "", now)
        drain_main.run(api, now, env(group), cloud.api)
        roles = {n: nodes[n]["metadata"]["labels"].get("ultraserver.io/node-role") for n in ("fleet-03", "fleet-17")}
        if minute == 2:
            assert roles == {"fleet-03": "failed", "fleet-17": "active"}
    assert cloud.rebooted == [instance(3)]
    assert roles == {"fleet-03": "spare", "fleet-17": "active"}
    assert [t["key"] for t in target["spec"]["taints"]] == ["ultraserver.io/spare"]
    # status and verify show the reboot beside the replacement.
    seen = [
        Node(n["metadata"]["name"], n["metadata"]["labels"], annotations=n["metadata"]["annotations"])
        for n in nodes.values()
    ]
    view = spare_view(seen, "fleet", 4, T0 + timedelta(minutes=40))
    assert view is not None and view.rebooted == ((("fleet-03", REBOOTED, T0 + timedelta(minutes=WAIT))),)
    assert f"rebooted: fleet-03 ({REBOOTED}, {(T0 + timedelta(minutes=WAIT)).isoformat()})" in "\n".join(view.lines())
    assert view.to_json()["rebooted"] == [
        {"node": "fleet-03", "reason": REBOOTED, "at": (T0 + timedelta(minutes=WAIT)).isoformat()}
    ]


class Refusing:
    """The rehearsal's AWS with RebootInstances refused while ``refuse`` holds (a role without the permission)."""

    def __init__(self, cloud: Cloud) -> None:
        self.cloud, self.refuse = cloud, True

    def api(self, service: str) -> RefusingService:
        return RefusingService(self, service)


class RefusingService:
    def __init__(self, aws: Refusing, service: str) -> None:
        self.aws, self.service = aws, service

    def call(self, action: str, params: dict[str, str], now: datetime) -> Any:
        if action == "RebootInstances" and self.aws.refuse:
            raise aws_query.QueryError(403, "UnauthorizedOperation", "not authorized")
        return self.aws.cloud.api(self.service).call(action, params, now)


def test_a_refused_reboot_is_paged_and_tried_again_the_next_minute() -> None:
    nodes = fleet()
    set_gpu(nodes["fleet-07"], "False", REBOOTED, T0)
    api, cloud = Api(nodes), Cloud()
    aws = Refusing(cloud)
    _, findings = drain_main.run(api, T0 + timedelta(minutes=WAIT), env(SELF_MANAGED), aws.api)
    assert cloud.rebooted == [] and "ultraserver.io/rebooted-at" not in nodes["fleet-07"]["metadata"]["annotations"]
    (refused,) = [f for f in findings if f["key"] == "call:reboot-instances:403"]
    # The fix is the drain's IAM role (the stack grants the action), not its Kubernetes RBAC.
    assert "IAM role" in refused["message"] and "RBAC" not in refused["message"]
    aws.refuse = False
    drain_main.run(api, T0 + timedelta(minutes=WAIT + 1), env(SELF_MANAGED), aws.api)
    assert cloud.rebooted == [instance(7)]


def test_a_mark_a_person_overwrote_is_read_as_no_reboot_and_written_afresh() -> None:
    nodes = fleet()
    nodes["fleet-03"]["metadata"]["annotations"]["ultraserver.io/rebooted-at"] = "yesterday"
    set_gpu(nodes["fleet-03"], "False", REBOOTED, T0)
    assert walk(nodes, SELF_MANAGED, T0, 2 * WAIT) == [(WAIT, "fleet-03", REBOOTED)]
    assert nodes["fleet-03"]["metadata"]["annotations"]["ultraserver.io/rebooted-at"] == iso(
        T0 + timedelta(minutes=WAIT)
    )


def test_status_shows_a_mark_a_person_overwrote_without_a_time() -> None:
    notes = {"ultraserver.io/rebooted-at": "yesterday", "ultraserver.io/reboot-reason": REBOOTED}
    seen = [Node("fleet-03", {ULTRASERVER_LABEL: "fleet", "ultraserver.io/node-role": "active"}, annotations=notes)]
    view = spare_view(seen, "fleet", 4, T0)
    assert view is not None and view.rebooted == (("fleet-03", REBOOTED, None),)
    assert f"rebooted: fleet-03 ({REBOOTED}, time unknown)" in "\n".join(view.lines())
