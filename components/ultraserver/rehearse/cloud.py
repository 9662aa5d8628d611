"""EC2, Auto Scaling and SNS as a rehearsal serves them to the reclaim drain's whole run (``drain_main.run``): the
AWS side the cluster reads with nobody online.

Built from the plan: each reservation of the drain's BLOCKS with the dates the stack holds (a fault moves EC2's end),
each block's Auto Scaling group named as AWS names it (Pulumi's ``<name>-<7 hex>`` for a self-managed group; EKS's
``eks-<node group>-<uuid>`` for a managed one, whose node group Pulumi names ``<name>-<7 hex>``) with the plan's
scheduled actions (``aws:autoscaling/schedule:Schedule``) and, for a managed group, EKS's own scale-down 40 minutes
before the end (facts). Auto Scaling runs each due one-time action on the rehearsal's clock (``tick``); what the drain
publishes to the alert topic is kept (``published``), and each instance it reboots (``rebooted``). The answers are
the services' Query-protocol XML in the shapes of botocore's ec2, autoscaling and sns models, which
``incluster.aws_query`` parses.
"""

from __future__ import annotations

import hashlib
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ultraserver.facts.capacity.capacity_blocks import EKS_MANAGED_SCALEDOWN_ACTION, EKS_MANAGED_SCALEDOWN_LEAD
from ultraserver.incluster.aws_query import VERSIONS, QueryError
from ultraserver.incluster.drain import Block
from ultraserver.offline.engine import Plan

SCHEDULE = "aws:autoscaling/schedule:Schedule"
MANAGED_NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
AWS_TIME = "%Y-%m-%dT%H:%M:%S.000Z"


@dataclass
class AutoScalingGroup:
    """One Auto Scaling group: its sizes, its one-time scheduled actions (name -> (time, desired)), and the tag the
    drain finds it by (``kubernetes.io/cluster/<cluster>`` self-managed, ``eks:cluster-name`` managed)."""

    name: str
    stem: str
    desired: int
    max: int
    managed: bool
    actions: dict[str, tuple[datetime, int]] = field(default_factory=dict)


@dataclass
class Cloud:
    """What AWS holds for the stack, and what the drain did to it."""

    reservations: dict[str, dict[str, Any]] = field(default_factory=dict)
    groups: dict[str, AutoScalingGroup] = field(default_factory=dict)
    published: list[dict[str, str]] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)
    rebooted: list[str] = field(default_factory=list)
    """Each instance the drain rebooted (self-managed nodes, ``incluster.repair``), in order."""

    def group_of(self, stem: str) -> AutoScalingGroup:
        """The group of a node group's resource name (``Block.group``)."""
        return next(g for g in self.groups.values() if g.stem == stem)

    def tick(self, now: datetime) -> list[str]:
        """Auto Scaling runs each scheduled action due by ``now`` once (one-time actions), and forgets it."""
        ran = []
        for group in self.groups.values():
            for name, (at, desired) in sorted(group.actions.items(), key=lambda item: item[1][0]):
                if at <= now:
                    group.desired = desired
                    del group.actions[name]
                    ran.append(f"Auto Scaling ran {name} on {group.name}: desired {desired}")
        return ran

    def api(self, service: str) -> Service:
        """The client the drain's ``Aws`` takes for ``service`` (``drain_main.Aws``'s ``query``)."""
        return Service(self, service)


def aws_name(stem: str, managed: bool) -> str:
    """The group's name as AWS gives it: a resource named ``stem`` gets Pulumi's 7-hex suffix; EKS prefixes a managed
    node group's with ``eks-`` and suffixes a UUID."""
    named = f"{stem}-{hashlib.sha256(stem.encode()).hexdigest()[:7]}"
    return f"eks-{named}-{uuid.uuid5(uuid.NAMESPACE_URL, named)}" if managed else named


def cloud_of(plan: Plan, blocks: Sequence[Block], serving: Mapping[str, int], at: datetime) -> Cloud:
    """AWS at ``at`` for the drain's blocks: ``serving`` is how many nodes each UltraServer runs then."""
    cloud = Cloud()
    for block in blocks:
        state = "scheduled" if at < block.start else "active" if at < block.end else "expired"
        for rid in block.reservations:
            cloud.reservations[rid] = {"start": block.start, "end": block.end, "state": state}
    managed = {r.name for r in plan.resources if r.type == MANAGED_NODE_GROUP}
    for stem in sorted({b.group for b in blocks if b.group}):
        group = _group(plan, stem, [b for b in blocks if b.group == stem], serving, at, stem in managed)
        cloud.groups[group.name] = group
    return cloud


def _group(
    plan: Plan, stem: str, blocks: Sequence[Block], serving: Mapping[str, int], at: datetime, managed: bool
) -> AutoScalingGroup:
    """The Auto Scaling group of the node group ``stem`` at ``at``, with the plan's scheduled actions still ahead."""
    desired = sum(serving.get(b.ultraserver, 0) for b in blocks)
    group = AutoScalingGroup(
        aws_name(stem, managed), stem, desired, max(desired, sum(b.nodes for b in blocks)), managed
    )
    for resource in plan.resources:
        inputs = resource.inputs
        if resource.type == SCHEDULE and resource.name == f"{stem}-{inputs['scheduledActionName']}":
            moment = datetime.fromisoformat(str(inputs["startTime"]).replace("Z", "+00:00"))
            if moment > at:
                group.actions[inputs["scheduledActionName"]] = (moment, int(inputs["desiredCapacity"]))
    ends = [b.end - EKS_MANAGED_SCALEDOWN_LEAD for b in blocks if b.end - EKS_MANAGED_SCALEDOWN_LEAD > at]
    if managed and ends:
        group.actions[EKS_MANAGED_SCALEDOWN_ACTION] = (min(ends), 0)
    return group


def _add(parent: ET.Element, tag: str, text: object = None) -> ET.Element:
    child = ET.SubElement(parent, tag)
    if text is not None:
        child.text = str(text)
    return child


class Service:
    """One AWS service of a Cloud, answering ``aws_query.QueryApi.call``."""

    def __init__(self, cloud: Cloud, service: str) -> None:
        self.cloud, self.service = cloud, service

    def call(self, action: str, params: dict[str, str], now: datetime) -> ET.Element:
        """The answer to ``action`` as the service's XML, or QueryError for an action it does not serve."""
        self.cloud.calls.append((self.service, action))
        answer = getattr(self, f"_{action}", None)
        if answer is None:
            raise QueryError(400, "InvalidAction", f"{action} is not served by the rehearsal's {self.service}")
        root = ET.Element(
            f"{action}Response", xmlns=f"http://{self.service}.amazonaws.com/doc/{VERSIONS[self.service]}/"
        )
        answer(root, params)
        return ET.fromstring(ET.tostring(root))

    def _DescribeCapacityReservations(self, root: ET.Element, params: dict[str, str]) -> None:  # noqa: N802
        wanted = {v for k, v in params.items() if k.startswith("CapacityReservationId.")}
        found = _add(root, "capacityReservationSet")
        for rid, held in sorted(self.cloud.reservations.items()):
            if rid in wanted:
                item = _add(found, "item")
                _add(item, "capacityReservationId", rid)
                _add(item, "startDate", held["start"].strftime(AWS_TIME))
                _add(item, "endDate", held["end"].strftime(AWS_TIME))
                _add(item, "state", held["state"])

    def _RebootInstances(self, root: ET.Element, params: dict[str, str]) -> None:  # noqa: N802
        self.cloud.rebooted += [v for k, v in sorted(params.items()) if k.startswith("InstanceId.")]
        _add(root, "return", "true")

    def _DescribeAutoScalingGroups(self, root: ET.Element, params: dict[str, str]) -> None:  # noqa: N802
        managed = params.get("Filters.member.1.Name") == "tag:eks:cluster-name"
        found = _add(_add(root, "DescribeAutoScalingGroupsResult"), "AutoScalingGroups")
        for group in self.cloud.groups.values():
            if group.managed == managed:
                member = _add(found, "member")
                _add(member, "AutoScalingGroupName", group.name)
                _add(member, "MinSize", 0)
                _add(member, "MaxSize", group.max)
                _add(member, "DesiredCapacity", group.desired)

    def _DescribeScheduledActions(self, root: ET.Element, params: dict[str, str]) -> None:  # noqa: N802
        group = self.cloud.groups[params["AutoScalingGroupName"]]
        found = _add(_add(root, "DescribeScheduledActionsResult"), "ScheduledUpdateGroupActions")
        for name, (at, desired) in group.actions.items():
            member = _add(found, "member")
            _add(member, "ScheduledActionName", name)
            _add(member, "StartTime", at.strftime(AWS_TIME))
            _add(member, "DesiredCapacity", desired)

    def _PutScheduledUpdateGroupAction(self, root: ET.Element, params: dict[str, str]) -> None:  # noqa: N802
        at = datetime.fromisoformat(params["StartTime"].replace("Z", "+00:00"))
        group = self.cloud.groups[params["AutoScalingGroupName"]]
        group.actions[params["ScheduledActionName"]] = (at, int(params["DesiredCapacity"]))

    def _SetDesiredCapacity(self, root: ET.Element, params: dict[str, str]) -> None:  # noqa: N802
        self.cloud.groups[params["AutoScalingGroupName"]].desired = int(params["DesiredCapacity"])

    def _Publish(self, root: ET.Element, params: dict[str, str]) -> None:  # noqa: N802
        self.cloud.published.append({k: params[k] for k in ("TopicArn", "Subject", "Message")})
        _add(_add(root, "PublishResult"), "MessageId", len(self.cloud.published))
