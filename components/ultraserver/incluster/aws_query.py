"""EC2, Auto Scaling and SNS as the reclaim drain calls them from the cluster, with the standard library only.

Mounted beside ``drain_main.py`` in a stock Python image, like ``warning_queue.py``, whose SigV4 signer and Pod
Identity credentials it shares. These three services speak the AWS Query protocol: a form-encoded POST of
``Action``, ``Version`` and the parameters, answered in XML (botocore's service models, ``metadata.protocol``: ``ec2``
for EC2, ``query`` for Auto Scaling and SNS; tests/builders/test_aws_query.py serializes the same calls with botocore
and compares). The drain's role may call only what this file calls (``builders.reclaim_drain.drain_aws_statements``).
"""

from __future__ import annotations

import re
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from typing import Any

try:
    from ultraserver.incluster.warning_queue import sign
except ImportError:  # in the cluster: the mounted directory is on sys.path
    from warning_queue import sign  # type: ignore[no-redef]

VERSIONS = {"ec2": "2016-11-15", "autoscaling": "2011-01-01", "sns": "2010-03-31"}
"""API versions (botocore service models' ``metadata.apiVersion``)."""
_FORM = "application/x-www-form-urlencoded; charset=utf-8"
SUBJECT_MAX = 100
"""SNS Publish ``Subject``: "must be ASCII text that begins with a letter, number, or punctuation mark; must not
include line breaks or control characters; and must be less than 100 characters long" (botocore sns PublishInput)."""


def endpoint(service: str, region: str) -> str:
    """The service's regional endpoint (China regions end in .amazonaws.com.cn)."""
    suffix = "amazonaws.com.cn" if region.startswith("cn-") else "amazonaws.com"
    return f"https://{service}.{region}.{suffix}/"


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def children(element: ET.Element, name: str) -> list[ET.Element]:
    """Direct children named ``name``, whatever the XML namespace."""
    return [c for c in element if _local(c.tag) == name]


def text(element: ET.Element, name: str) -> str:
    """The text of the first direct child named ``name`` ('' when there is none)."""
    found = children(element, name)
    return (found[0].text or "") if found else ""


def token(root: ET.Element) -> str:
    """The answer's next-page token (EC2's ``nextToken``, Auto Scaling's ``NextToken``), '' on the last page."""
    found = [e for e in root.iter() if _local(e.tag) in ("nextToken", "NextToken")]
    return (found[0].text or "") if found else ""


def members(element: ET.Element, *path: str) -> list[ET.Element]:
    """The list items at ``path`` below ``element``: each step a child, the last one's ``member``/``item`` children."""
    for step in path:
        found = [c for c in element.iter() if _local(c.tag) == step]
        if not found:
            return []
        element = found[0]
    return [c for c in element if _local(c.tag) in ("member", "item")]


class QueryError(Exception):
    """An AWS answer other than 2xx: the HTTP status and AWS's error code and message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{status} {code}: {message}")
        self.status, self.code = status, code


class QueryApi:
    """One AWS service over the Query protocol, signed with the pod's credentials."""

    def __init__(self, service: str, region: str, creds: dict[str, str], url: str = "") -> None:
        self.service, self._region, self._creds = service, region, creds
        self._url = url or endpoint(service, region)

    def call(self, action: str, params: dict[str, str], now: datetime) -> ET.Element:
        """The parsed answer to ``action``; a QueryError for an AWS error, OSError when AWS cannot be reached."""
        body = urllib.parse.urlencode({"Action": action, "Version": VERSIONS[self.service], **params}).encode()
        headers = sign(self._url, {"Content-Type": _FORM}, body, self._region, self._creds, now, self.service)
        request = urllib.request.Request(self._url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=15) as response:
                return ET.fromstring(response.read())
        except urllib.error.HTTPError as err:
            raise _error(err.code, err.read()) from None


def _error(status: int, raw: bytes) -> QueryError:
    try:
        root = ET.fromstring(raw)
    except ET.ParseError:
        return QueryError(status, "", raw[:200].decode(errors="replace"))
    found = [e for e in root.iter() if _local(e.tag) == "Error"]
    error = found[0] if found else root
    return QueryError(status, text(error, "Code"), text(error, "Message"))


def _utc(value: str) -> str:
    """An AWS timestamp in the drain's form (2026-12-15T11:30:00Z)."""
    moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def capacity_reservations(ec2: QueryApi, ids: list[str], now: datetime) -> dict[str, dict[str, str]]:
    """Reservation id -> start, end and state, as EC2 holds them (DescribeCapacityReservations): an extension, a
    block cut short or cancelled shows here, whatever the stack file says."""
    params = {f"CapacityReservationId.{n}": rid for n, rid in enumerate(sorted(set(ids)), start=1)}
    found: dict[str, dict[str, str]] = {}
    while True:
        root = ec2.call("DescribeCapacityReservations", params, now)
        for item in members(root, "capacityReservationSet"):
            found[text(item, "capacityReservationId")] = {
                "start": _utc(text(item, "startDate")),
                "end": _utc(text(item, "endDate")) if text(item, "endDate") else "",
                "state": text(item, "state"),
            }
        following = token(root)
        if not following:
            return found
        params = {**params, "NextToken": following}


def publish(sns: QueryApi, topic_arn: str, subject: str, message: str, now: datetime) -> None:
    """One message on the alert topic (the subject cut to what SNS takes)."""
    clean = re.sub(r"[^\x20-\x7e]", " ", subject)[: SUBJECT_MAX - 1]
    sns.call("Publish", {"TopicArn": topic_arn, "Subject": clean, "Message": message}, now)


def cluster_groups(autoscaling: QueryApi, cluster: str, now: datetime) -> list[dict[str, Any]]:
    """The cluster's Auto Scaling groups (name, desired, max): self-managed ones carry ``kubernetes.io/cluster/
    <cluster>``, those EKS makes for managed node groups ``eks:cluster-name`` (status.extend_moves reads the same)."""
    groups: dict[str, dict[str, Any]] = {}
    for name, value in (("tag-key", f"kubernetes.io/cluster/{cluster}"), ("tag:eks:cluster-name", cluster)):
        params = {"Filters.member.1.Name": name, "Filters.member.1.Values.member.1": value}
        while True:
            root = autoscaling.call("DescribeAutoScalingGroups", params, now)
            for item in members(root, "AutoScalingGroups"):
                groups[text(item, "AutoScalingGroupName")] = {
                    "name": text(item, "AutoScalingGroupName"),
                    "desired": int(text(item, "DesiredCapacity") or 0),
                    "max": int(text(item, "MaxSize") or 0),
                }
            following = token(root)
            if not following:
                break
            params = {**params, "NextToken": following}
    return [groups[k] for k in sorted(groups)]


def scheduled_actions(autoscaling: QueryApi, group: str, now: datetime) -> dict[str, str]:
    """A group's scheduled actions: name -> start time (UTC, seconds)."""
    root = autoscaling.call("DescribeScheduledActions", {"AutoScalingGroupName": group}, now)
    return {
        text(item, "ScheduledActionName"): _utc(text(item, "StartTime"))
        for item in members(root, "ScheduledUpdateGroupActions")
    }


def put_scale_down(autoscaling: QueryApi, group: str, name: str, at: str, size: int, now: datetime) -> None:
    """The group's scale-down to 0 at ``at`` (one-time; PutScheduledUpdateGroupAction replaces one of that name)."""
    params = {
        "AutoScalingGroupName": group,
        "ScheduledActionName": name,
        "StartTime": at,
        "MinSize": "0",
        "MaxSize": str(size),
        "DesiredCapacity": "0",
    }
    autoscaling.call("PutScheduledUpdateGroupAction", params, now)


def set_desired(autoscaling: QueryApi, group: str, size: int, now: datetime) -> None:
    """The group's desired capacity, now."""
    params = {"AutoScalingGroupName": group, "DesiredCapacity": str(size), "HonorCooldown": "false"}
    autoscaling.call("SetDesiredCapacity", params, now)


def reboot_instance(ec2: QueryApi, instance: str, now: datetime) -> None:
    """Reboot one instance (RebootInstances, EC2 API reference: asynchronous, it "only queues a request to reboot";
    an instance that "does not cleanly shut down within a few minutes" is hard-rebooted)."""
    ec2.call("RebootInstances", {"InstanceId.1": instance}, now)
