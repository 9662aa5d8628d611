"""Plain data of an SQS queue that EventBridge rules feed and one Pod Identity reads: the queue policy and the
reader's default policy.

Only the queue's own rules may send. EventBridge user guide, "Using resource-based policies for Amazon EventBridge",
section "Amazon SQS permissions" (awsdocs/amazon-eventbridge-user-guide doc_source/eb-use-resource-based.md at
10e936eebdd8, read 2026-11-27): "To allow an EventBridge rule to invoke an Amazon SQS queue", the statement to add
grants `sqs:SendMessage` to `events.amazonaws.com` on the queue with `"Condition": {"ArnEquals": {"aws:SourceArn":
"arn:aws:events:region:account-id:rule/rule-name"}}`; and "Cross-service confused deputy prevention in Amazon
EventBridge": "For EventBridge event bus rule targets, the value of aws:SourceArn must be the rule ARN"
(capacity_events, EVENTS_PRINCIPAL). Several rules: one key with several values matches any of them (IAM user guide,
"Conditions with multiple context keys or values", reference_policies_multi-value-conditions.html, read 2026-11-27:
"If a single condition operator includes multiple values for a context key, those values are evaluated using a
logical OR").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ultraserver.facts.capacity.capacity_events import EVENTS_PRINCIPAL

READER_ACTIONS = ("sqs:ReceiveMessage", "sqs:DeleteMessage")
"""What a reader of the queue calls: receive, and delete once handled."""


def _one_or_list(values: Sequence[str]) -> str | list[str]:
    """One value as a string, as the guide's statements write it; several as a list."""
    return values[0] if len(values) == 1 else list(values)


def queue_policy(queue_arn: str, rule_arns: Sequence[str]) -> dict[str, Any]:
    """The queue's policy: EventBridge may send, and only on behalf of these rules."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": EVENTS_PRINCIPAL},
                "Action": "sqs:SendMessage",
                "Resource": queue_arn,
                "Condition": {"ArnEquals": {"aws:SourceArn": _one_or_list(rule_arns)}},
            }
        ],
    }


def reader_policy(
    queue_arn: str, unscoped_actions: Sequence[str] = (), further: Sequence[dict[str, Any]] = ()
) -> dict[str, Any]:
    """The reader's role: receive and delete on this queue; ``unscoped_actions`` (calls that name no resource of the
    queue, such as Describe* calls, which take Resource "*") on any resource; then ``further`` statements as given."""
    statements: list[dict[str, Any]] = [{"Effect": "Allow", "Action": list(READER_ACTIONS), "Resource": queue_arn}]
    if unscoped_actions:
        statements.append({"Effect": "Allow", "Action": list(unscoped_actions), "Resource": "*"})
    statements += further
    return {"Version": "2012-10-17", "Statement": statements}
