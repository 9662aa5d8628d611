"""EC2, Auto Scaling and SNS as the in-cluster drain sees them, answering its Query calls in the services' XML (the
shapes of botocore's ec2, autoscaling and sns models; tests/builders/test_aws_query.py checks the parsing against
moto's own answers): reservations whose dates a test moves (an extension confirmed late), Auto Scaling groups whose
desired size the drain changes and whose scheduled actions run on the test's clock, and the messages published."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ultraserver.incluster import aws_query

_NS = {
    "ec2": "http://ec2.amazonaws.com/doc/2016-11-15/",
    "autoscaling": "http://autoscaling.amazonaws.com/doc/2011-01-01/",
    "sns": "http://sns.amazonaws.com/doc/2010-03-31/",
}


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z")


@dataclass
class Group:
    """One Auto Scaling group: its sizes and its one-time scheduled actions (name -> (time, desired))."""

    name: str
    desired: int
    max: int
    actions: dict[str, tuple[datetime, int]] = field(default_factory=dict)


@dataclass
class FakeAws:
    reservations: dict[str, dict[str, Any]] = field(default_factory=dict)
    groups: dict[str, Group] = field(default_factory=dict)
    published: list[dict[str, str]] = field(default_factory=list)
    calls: list[tuple[str, str]] = field(default_factory=list)
    refuse: set[str] = field(default_factory=set)
    """Actions answered with 403 AccessDenied."""

    def tick(self, now: datetime) -> None:
        """Auto Scaling runs each scheduled action due by ``now`` once, then forgets it (one-time actions)."""
        for group in self.groups.values():
            for name, (at, desired) in list(group.actions.items()):
                if at <= now:
                    group.desired = desired
                    del group.actions[name]

    def api(self, service: str) -> FakeQuery:
        return FakeQuery(self, service)


class FakeQuery:
    """``aws_query.QueryApi`` over a FakeAws."""

    def __init__(self, world: FakeAws, service: str) -> None:
        self.world, self.service = world, service

    def call(self, action: str, params: dict[str, str], now: datetime) -> ET.Element:
        self.world.calls.append((self.service, action))
        if action in self.world.refuse:
            raise aws_query.QueryError(403, "AccessDenied", f"not authorized to perform {action}")
        body = getattr(self, f"_{action}")(params, now)
        ns = _NS[self.service]
        return ET.fromstring(f'<{action}Response xmlns="{ns}">{body}</{action}Response>')

    def _DescribeCapacityReservations(self, params: dict[str, str], now: datetime) -> str:  # noqa: N802
        ids = [v for k, v in params.items() if k.startswith("CapacityReservationId.")]
        items = "".join(
            f"<item><capacityReservationId>{rid}</capacityReservationId><startDate>{_iso(r['start'])}</startDate>"
            f"<endDate>{_iso(r['end'])}</endDate><state>{r['state']}</state></item>"
            for rid, r in self.world.reservations.items()
            if rid in ids
        )
        return f"<requestId>r</requestId><capacityReservationSet>{items}</capacityReservationSet>"

    def _DescribeAutoScalingGroups(self, params: dict[str, str], now: datetime) -> str:  # noqa: N802
        items = "".join(
            f"<member><AutoScalingGroupName>{g.name}</AutoScalingGroupName><MinSize>0</MinSize>"
            f"<MaxSize>{g.max}</MaxSize><DesiredCapacity>{g.desired}</DesiredCapacity></member>"
            for g in self.world.groups.values()
        )
        result = f"<AutoScalingGroups>{items}</AutoScalingGroups>"
        return f"<DescribeAutoScalingGroupsResult>{result}</DescribeAutoScalingGroupsResult>"

    def _DescribeScheduledActions(self, params: dict[str, str], now: datetime) -> str:  # noqa: N802
        group = self.world.groups[params["AutoScalingGroupName"]]
        items = "".join(
            f"<member><ScheduledActionName>{name}</ScheduledActionName><StartTime>{_iso(at)}</StartTime></member>"
            for name, (at, _) in group.actions.items()
        )
        return (
            "<DescribeScheduledActionsResult><ScheduledUpdateGroupActions>"
            f"{items}</ScheduledUpdateGroupActions></DescribeScheduledActionsResult>"
        )

    def _PutScheduledUpdateGroupAction(self, params: dict[str, str], now: datetime) -> str:  # noqa: N802
        at = datetime.fromisoformat(params["StartTime"].replace("Z", "+00:00"))
        group = self.world.groups[params["AutoScalingGroupName"]]
        group.actions[params["ScheduledActionName"]] = (at, int(params["DesiredCapacity"]))
        return ""

    def _SetDesiredCapacity(self, params: dict[str, str], now: datetime) -> str:  # noqa: N802
        self.world.groups[params["AutoScalingGroupName"]].desired = int(params["DesiredCapacity"])
        return ""

    def _Publish(self, params: dict[str, str], now: datetime) -> str:  # noqa: N802
        self.world.published.append({k: params[k] for k in ("TopicArn", "Subject", "Message")})
        return "<PublishResult><MessageId>m</MessageId></PublishResult>"
