"""Plain data of the drain's warning queue: the EventBridge rule's pattern, the queue policy and the drain's policy.

Capacity Block expiration warnings go to an SQS queue that only the rule may send to, and that only the drain's Pod
Identity role may read from and delete on (``warning_queue.py`` reads it in the cluster).
"""

from __future__ import annotations

from typing import Any

from ultraserver.facts.capacity import capacity_events as events

EXPIRATION_DETAIL_TYPES = tuple(t for t in events.CAPACITY_BLOCK_DETAIL_TYPES if "Expiration Warning" in t)
"""Both spellings of the expiration warning (which one EC2 sends is unverified: capacity_events)."""
READER_ACTIONS = ("sqs:ReceiveMessage", "sqs:DeleteMessage")
"""All the drain calls (``warning_queue.WarningQueue``)."""


def warning_event_pattern() -> dict[str, Any]:
    """Every Capacity Block expiration warning of the account and region: the script keeps those of its blocks (a
    reservation filter here would miss the blocks ``extend`` adds without a deploy)."""
    return {"source": [events.EC2_SOURCE], "detail-type": list(EXPIRATION_DETAIL_TYPES)}


def warning_queue_policy(queue_arn: str, rule_arn: str) -> dict[str, Any]:
    """Only the rule sends: EventBridge user guide (cross-service confused deputy prevention): "For EventBridge event
    bus rule targets, the value of aws:SourceArn must be the rule ARN"; its SQS permissions example conditions the
    statement the same way (capacity_events, EVENTS_PRINCIPAL)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": events.EVENTS_PRINCIPAL},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
                "Condition": {"ArnEquals": {"aws:SourceArn": rule_arn}},
            }
        ],
    }


def warning_reader_policy(queue_arn: str) -> dict[str, Any]:
    """The drain's role: receive and delete on this queue, nothing else."""
    return {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": list(READER_ACTIONS), "Resource": queue_arn}],
    }
