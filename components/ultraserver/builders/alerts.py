"""Plain data of the Capacity Block alerts: EventBridge patterns, the SNS topic policy and its KMS key policy."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from ultraserver.builders.iam import account_administers
from ultraserver.facts.capacity import capacity_events as ev


def _capacity_block(ids: Sequence[str]) -> dict[str, Any]:
    pattern: dict[str, Any] = {"source": [ev.EC2_SOURCE], "detail-type": list(ev.CAPACITY_BLOCK_DETAIL_TYPES)}
    return {**pattern, "detail": {ev.RESERVATION_ID_FIELD: list(ids)}} if ids else pattern


def _reservation_state(ids: Sequence[str]) -> dict[str, Any]:
    pattern: dict[str, Any] = {"source": [ev.EC2_SOURCE], "detail-type": list(ev.RESERVATION_STATE_DETAIL_TYPES)}
    return {**pattern, "detail": {ev.RESERVATION_ID_FIELD: list(ids)}} if ids else pattern


def _underutilization(ids: Sequence[str]) -> dict[str, Any]:
    pattern: dict[str, Any] = {
        "source": [ev.HEALTH_SOURCE],
        "detail-type": [ev.HEALTH_DETAIL_TYPE],
        "detail": {"service": [ev.HEALTH_SERVICE], "eventTypeCode": list(ev.UNDERUTILIZATION_EVENT_CODES)},
    }
    # The 7-day summary lists "cr-... | zone | type | platform | percent" in resources: match by prefix.
    return {**pattern, "resources": [{"prefix": rid} for rid in ids]} if ids else pattern


PATTERNS: dict[str, Callable[[Sequence[str]], dict[str, Any]]] = {
    "capacity-block": _capacity_block,
    "reservation-state": _reservation_state,
    "underutilization": _underutilization,
}


def _chunks(ids: Sequence[str], build: Callable[[Sequence[str]], dict[str, Any]], limit: int) -> list[list[str]]:
    """The IDs split so that each chunk's pattern fits the EventBridge pattern size."""
    chunks: list[list[str]] = [[]]
    for rid in ids:
        if chunks[-1] and len(json.dumps(build([*chunks[-1], rid]))) > limit:
            chunks.append([])
        chunks[-1].append(rid)
    return chunks


def alert_patterns(
    reservation_ids: Sequence[str], limit: int = ev.EVENT_PATTERN_MAX_CHARS
) -> dict[str, dict[str, Any]]:
    """Rule name suffix -> event pattern, scoped to the reservations (several rules when the IDs do not fit one).

    No IDs (a stack with a capacity-reservation resource group, whose reservations the stack does not know) gives
    account-wide patterns.
    """
    ids = sorted(set(reservation_ids))
    out: dict[str, dict[str, Any]] = {}
    for suffix, build in PATTERNS.items():
        chunks = _chunks(ids, build, limit)
        for index, chunk in enumerate(chunks, start=1):
            out[suffix if len(chunks) == 1 else f"{suffix}-{index}"] = build(chunk)
    return out


def topic_policy(topic_arn: str) -> dict[str, Any]:
    """EventBridge may publish to the topic. No Condition: the EventBridge guide says Condition blocks cannot be used
    in SNS topic policies for EventBridge, and a condition it does not honour would drop every alert silently
    (facts/capacity/capacity_events.py weighs the sources)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "CapacityBlockAlerts",
                "Effect": "Allow",
                "Principal": {"Service": ev.EVENTS_PRINCIPAL},
                "Action": ev.SNS_PUBLISH,
                "Resource": topic_arn,
            }
        ],
    }


def key_policy(account_id: str, partition: str = "aws") -> dict[str, Any]:
    """The topic key: the account administers it through IAM (the default key policy); EventBridge may use it."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            account_administers(account_id, partition),
            {
                "Sid": "EventBridgePublishes",
                "Effect": "Allow",
                "Principal": {"Service": ev.EVENTS_PRINCIPAL},
                "Action": list(ev.EVENTS_KMS_ACTIONS),
                "Resource": "*",
            },
        ],
    }
