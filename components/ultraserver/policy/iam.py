"""Rules for IAM: no wildcard actions, node roles carry only allow-listed managed policies, EventBridge sends to a queue
only for named rules."""

from __future__ import annotations

import fnmatch
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ultraserver.facts.aws import aws_ids
from ultraserver.facts.aws.permissions import NODE_POLICY_ARNS
from ultraserver.facts.capacity.capacity_events import EVENTS_PRINCIPAL
from ultraserver.policy.model import (
    IAM_POLICY,
    IAM_ROLE,
    IAM_ROLE_POLICY,
    IAM_ROLE_POLICY_ATTACHMENT,
    SQS_QUEUE_POLICY,
    PlanResource,
    Rule,
    StackIndex,
    as_list,
    is_unknown,
)
from ultraserver.problems import Problem

SERVICE_WILDCARD = re.compile(r"[A-Za-z0-9-]+:\*")
EC2_SERVICE = "ec2.amazonaws.com"


def _values(value: Any) -> list[Any]:
    """A policy element's values: IAM takes one value or a list."""
    return list(value) if isinstance(value, list) else [value]


def policy_document(value: Any) -> Mapping[str, Any] | None:
    """A policy document from its JSON string (or an already-parsed dict); None when unreadable."""
    if isinstance(value, Mapping):
        return value
    if not isinstance(value, str):
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, Mapping) else None


def _unreadable(label: str, raw: Any) -> Problem:
    return Problem(label, raw, "a readable JSON policy document", "pass json.dumps(<policy dict>)")


def wildcard_actions(document: Mapping[str, Any]) -> list[str]:
    """Allowed actions that are "*" or "service:*", plus Allow statements that use NotAction."""
    found = []
    for statement in _values(document.get("Statement")):
        if not isinstance(statement, Mapping) or statement.get("Effect") != "Allow":
            continue
        if "NotAction" in statement:
            found.append("NotAction")
        for action in _values(statement.get("Action")):
            if isinstance(action, str) and (action == "*" or SERVICE_WILDCARD.fullmatch(action)):
                found.append(action)
    return found


def _documents(resource_type: str, props: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """(label, raw document) for each policy document the resource carries."""
    if resource_type == IAM_ROLE:
        return [
            (f"inline policy {p.get('name')!r}", p.get("policy"))
            for p in as_list(props.get("inlinePolicies"))
            if isinstance(p, Mapping)
        ]
    return [("policy", props.get("policy"))]


def check_no_wildcards(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """No IAM policy in the stack allows "*" or "service:*" actions."""
    out = []
    for label, raw in _documents(resource_type, props):
        if raw is None or is_unknown(raw):
            continue
        document = policy_document(raw)
        if document is None:
            out.append(_unreadable(label, raw))
            continue
        found = wildcard_actions(document)
        if found:
            out.append(
                Problem(
                    label,
                    sorted(set(found)),
                    'no "*" or "service:*" actions and no NotAction (least privilege)',
                    "list the exact actions the role needs",
                )
            )
    return out


def is_node_role(role: PlanResource) -> bool:
    """A role EC2 instances assume: a node role."""
    document = policy_document(role.inputs.get("assumeRolePolicy")) or {}
    for statement in _values(document.get("Statement")):
        principal = statement.get("Principal") if isinstance(statement, Mapping) else None
        services = principal.get("Service") if isinstance(principal, Mapping) else None
        if EC2_SERVICE in _values(services):
            return True
    return False


def check_node_role_policies(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """Node roles get only allow-listed AWS managed policies (or in-stack policies, which are wildcard-checked)."""
    index = StackIndex(resources)
    allowed = set(opts["allowedPolicyArns"])
    out = []
    for role in index.of_type(IAM_ROLE):
        if not is_node_role(role):
            continue
        for attachment in index.dependents(role, IAM_ROLE_POLICY_ATTACHMENT):
            arn = attachment.inputs.get("policyArn")
            if is_unknown(arn) or arn in allowed or index.deps(attachment, IAM_POLICY):
                continue
            out.append(
                Problem(
                    attachment.urn,
                    arn,
                    f"a policy of the allow-list on node role {role.name}: nodes need only the EKS worker and ECR "
                    "pull-only policies",
                    "give the VPC CNI and workloads their own roles through Pod Identity, or add the ARN to this "
                    "rule's allowedPolicyArns",
                )
            )
    return out


SOURCE_ARN_OPERATORS = ("ArnEquals", "ArnLike")
"""Condition operators that name the sending rules (builders/event_queue.py quotes the EventBridge guide's)."""


def _names_rules(condition: Any) -> bool:
    """The condition names the sending rules: aws:SourceArn (keys are case-insensitive) under an ARN operator, each
    value an ARN of one account. Both operators take * and ? in each of an ARN's colon-separated parts (AWS SDK for
    .NET, ConditionFactory.ArnComparisonType.ArnLike, read 2026-11-27), so a wildcard account lets any account's
    rules send."""
    operators = [condition.get(op) for op in SOURCE_ARN_OPERATORS] if isinstance(condition, Mapping) else []
    values = [v for op in operators if isinstance(op, Mapping) for k, v in op.items() if k.lower() == "aws:sourcearn"]
    arns = [str(arn) for value in values for arn in _values(value)]
    return bool(arns) and all(_one_account(arn) for arn in arns)


def _one_account(arn: str) -> bool:
    """The ARN names an account, not a pattern of accounts (arn:partition:service:region:account:resource)."""
    account = aws_ids.arn_account(arn) or ""
    return account != "" and not {"*", "?"} & set(account)


def _sends(actions: Any) -> bool:
    """The Action element covers sqs:SendMessage. IAM user guide, "IAM JSON policy elements: Action" (read
    2026-11-27): "The prefix and the action name are case insensitive", and an action may hold the wildcards * and ?."""
    return any(fnmatch.fnmatchcase("sqs:sendmessage", str(a).lower()) for a in _values(actions))


def _senders(principal: Any) -> set[str]:
    """The Principal element's services, with "*" for every principal ("*", or "AWS": "*", which the IAM user guide's
    "AWS JSON policy elements: Principal" gives as the same; that it takes in service principals is UNVERIFIED, so it
    is judged as if it did)."""
    if not isinstance(principal, Mapping):
        return {str(p) for p in _values(principal)}
    accounts = {"*"} & {str(a) for a in _values(principal.get("AWS"))}
    return accounts | {str(s) for s in _values(principal.get("Service"))}


def _unscoped_event_sends(document: Mapping[str, Any]) -> list[Any]:
    """Allow statements letting events.amazonaws.com (or anyone) send messages without naming the rules."""
    found = []
    for statement in _values(document.get("Statement")):
        if not isinstance(statement, Mapping) or statement.get("Effect") != "Allow":
            continue
        senders = _senders(statement.get("Principal"))
        if (
            _sends(statement.get("Action"))
            and {EVENTS_PRINCIPAL, "*"} & senders
            and not _names_rules(statement.get("Condition"))
        ):
            found.append(statement.get("Sid") or sorted(senders))
    return found


def check_queue_senders(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """A queue policy lets EventBridge send only for the rules it names (aws:SourceArn)."""
    raw = props.get("policy")
    if raw is None or is_unknown(raw):
        return []
    document = policy_document(raw)
    if document is None:
        return [_unreadable("policy", raw)]
    return [
        Problem(
            "policy",
            statement,
            f"sqs:SendMessage for {EVENTS_PRINCIPAL} only with an ArnEquals aws:SourceArn condition naming the "
            "queue's rules (any EventBridge rule could send otherwise)",
            'add "Condition": {"ArnEquals": {"aws:SourceArn": [<the rule ARNs>]}} (EventQueue does)',
        )
        for statement in _unscoped_event_sends(document)
    ]


RULES: tuple[Rule, ...] = (
    Rule(
        name="iam-no-wildcard-actions",
        description='IAM policies (node role policies included) allow no "*" or "service:*" actions.',
        fix="List the exact actions needed.",
        resource_types=(IAM_ROLE, IAM_ROLE_POLICY, IAM_POLICY),
        check_resource=check_no_wildcards,
    ),
    Rule(
        name="node-role-managed-policies",
        description="Node roles get only allow-listed AWS managed policies.",
        fix="Attach only the EKS worker and ECR pull-only policies; give the VPC CNI and workloads Pod Identity roles.",
        check_stack=check_node_role_policies,
        config_schema={
            "allowedPolicyArns": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Managed policy ARNs node roles may carry.",
            }
        },
        defaults={"allowedPolicyArns": list(NODE_POLICY_ARNS)},
    ),
    Rule(
        name="sqs-queue-events-source-arn",
        description="A queue policy lets events.amazonaws.com send only for the rules it names (aws:SourceArn).",
        fix='Condition the statement on "ArnEquals": {"aws:SourceArn": [<the queue\'s rule ARNs>]}.',
        resource_types=(SQS_QUEUE_POLICY,),
        check_resource=check_queue_senders,
    ),
)
