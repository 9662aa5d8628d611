"""The sqs-queue-events-source-arn rule reads a queue policy as IAM does: action names without regard to case and
with their wildcards, and a Principal of every AWS account ("AWS": "*") as letting EventBridge send too; it and
iam-no-wildcard-actions name a policy document they cannot read."""

from __future__ import annotations

import json
from typing import Any

import pytest
from ultraserver.policy.iam import check_no_wildcards, check_queue_senders

QUEUE = "arn:aws:sqs:us-east-1:111122223333:q"
RULE = "arn:aws:events:us-east-1:111122223333:rule/r"


def verdict(action: Any, principal: Any, condition: dict[str, Any] | None = None) -> list[Any]:
    statement = {"Effect": "Allow", "Principal": principal, "Action": action, "Resource": QUEUE}
    if condition:
        statement["Condition"] = condition
    policy = json.dumps({"Version": "2012-10-17", "Statement": [statement]})
    return check_queue_senders("aws:sqs/queuePolicy:QueuePolicy", {"policy": policy}, {})


@pytest.mark.parametrize(
    "action", ["SQS:SendMessage", "sqs:sendmessage", "sqs:Send*", "sqs:SendMessag?", ["s3:*", "*"]]
)
def test_any_spelling_of_the_send_action_counts(action: Any) -> None:
    assert verdict(action, {"Service": "events.amazonaws.com"}) != []
    assert verdict(action, {"Service": "events.amazonaws.com"}, {"ArnEquals": {"aws:SourceArn": RULE}}) == []


@pytest.mark.parametrize("principal", ["*", {"AWS": "*"}, {"AWS": ["arn:aws:iam::111122223333:root", "*"]}])
def test_every_principal_includes_eventbridge(principal: Any) -> None:
    assert verdict("sqs:SendMessage", principal) != []


@pytest.mark.parametrize(
    "action, principal",
    [
        ("sqs:ReceiveMessage", {"Service": "events.amazonaws.com"}),
        ("sqs:Receive*", "*"),
        ("sqs:SendMessage", {"Service": "sns.amazonaws.com"}),
        ("sqs:SendMessage", {"AWS": "arn:aws:iam::111122223333:root"}),
    ],
)
def test_other_actions_and_principals_are_not_its_business(action: Any, principal: Any) -> None:
    assert verdict(action, principal) == []


@pytest.mark.parametrize(
    "source",
    ["*", "arn:aws:events:*:*:rule/*", "arn:aws:events:us-east-1:*:rule/r", ["arn:aws:events:us-east-1:1111*:rule/r"]],
)
def test_a_source_arn_that_any_account_s_rule_matches_names_no_rule(source: Any) -> None:
    principal = {"Service": "events.amazonaws.com"}
    assert verdict("sqs:SendMessage", principal, {"ArnLike": {"aws:SourceArn": source}}) != []
    # A rule name pattern within one account still names that account's rules.
    own = "arn:aws:events:us-east-1:111122223333:rule/stack-warn-*"
    assert verdict("sqs:SendMessage", principal, {"ArnLike": {"aws:SourceArn": own}}) == []


@pytest.mark.parametrize(
    "check, resource_type, props, key",
    [
        (check_queue_senders, "aws:sqs/queuePolicy:QueuePolicy", {"policy": "{not json"}, "policy"),
        (check_no_wildcards, "aws:iam/policy:Policy", {"policy": "{not json"}, "policy"),
        (
            check_no_wildcards,
            "aws:iam/role:Role",
            {"inlinePolicies": [{"name": "p", "policy": "[1]"}]},
            "inline policy 'p'",
        ),
    ],
)
def test_an_unreadable_policy_document_is_named(check: Any, resource_type: str, props: Any, key: str) -> None:
    [problem] = check(resource_type, props, {})
    assert problem.key == key and problem.allowed == "a readable JSON policy document"
