"""Capacity Block alerts: EventBridge rules for the stack's reservations, delivered to an encrypted SNS topic.

Rules (patterns in builders/alerts.py, event names and sources in facts/capacity/capacity_events.py): Capacity Block
delivered
and expiration warning, EC2 Capacity Reservation state changes, and AWS Health under-utilization, each scoped to the
stack's reservation IDs. The topic is the stack's own (a customer managed KMS key EventBridge may use, a topic policy
that lets EventBridge publish, with no Condition: facts/capacity/capacity_events.py) or an existing one, whose policy
the stack
leaves alone: it must already let events.amazonaws.com publish (docs/running-on-capacity-blocks.md).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ultraserver.arguments import checked, checked_component
from ultraserver.builders.alerts import alert_patterns, key_policy, topic_policy
from ultraserver.facts.aws import limits
from ultraserver.resources.child_options import child_options

# Lengths of the two parts of a rule's name_prefix, "<stem>-<suffix>-", which together fill EVENT_RULE_NAME_PREFIX.
RULE_STEM = 16
RULE_SUFFIX = limits.EVENT_RULE_NAME_PREFIX.maximum - RULE_STEM - 2


@checked()
@dataclass
class AlertsArgs:
    """Inputs of the alerts."""

    reservation_ids: Sequence[str] = ()
    """Reservations the rules match; empty matches every reservation of the account (e.g. with a resource group)."""
    sns_topic_arn: str = ""
    """An existing SNS topic; empty creates an encrypted topic."""
    email_subscriptions: Sequence[str] = ()
    """E-mail addresses subscribed to the topic (each confirms the subscription from its mail)."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """AWS tags."""


@checked_component
class Alerts(pulumi.ComponentResource):
    """EventBridge rules about the stack's Capacity Blocks and reservations, sent to an SNS topic."""

    topic_arn: pulumi.Output[str]
    key: aws.kms.Key | None
    topic: aws.sns.Topic | None
    rules: list[aws.cloudwatch.EventRule]

    def __init__(self, name: str, args: AlertsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:Alerts", name, None, opts)
        child = child_options(self, opts)
        tags = dict(args.tags)
        # Rule names: name_prefix + 26 characters fit limits.EVENT_RULE_NAME (64): the prefix "<stem>-<suffix>-" is at
        # most 16 + 1 + 20 + 1 = EVENT_RULE_NAME_PREFIX (38). The topic's "<stem>-alerts-" + 26 is far below
        # SNS_TOPIC_NAME. A cluster name holds only the characters both allow (EKS: letters, digits, - and _).
        stem = name[:RULE_STEM].rstrip("-")
        self.key = self.topic = None
        if args.sns_topic_arn:
            self.topic_arn = pulumi.Output.from_input(args.sns_topic_arn)
        else:
            identity = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self))
            partition = aws.get_partition_output(opts=pulumi.InvokeOutputOptions(parent=self))
            self.key = aws.kms.Key(
                f"{name}-topic",
                description=f"SNS topic of the Capacity Block alerts of {name}",
                enable_key_rotation=True,
                deletion_window_in_days=30,
                policy=pulumi.Output.all(identity.account_id, partition.partition).apply(
                    lambda values: json.dumps(key_policy(values[0], values[1]))
                ),
                tags=tags,
                opts=child,
            )
            self.topic = aws.sns.Topic(
                name, name_prefix=f"{stem}-alerts-", kms_master_key_id=self.key.arn, tags=tags, opts=child
            )
            self.topic_arn = self.topic.arn
        self.rules = []
        for suffix, pattern in alert_patterns(args.reservation_ids).items():
            rule = aws.cloudwatch.EventRule(
                f"{name}-{suffix}",
                name_prefix=f"{stem}-{suffix[:RULE_SUFFIX]}-",
                description=f"Capacity Block alerts of {name}: {suffix}",
                event_pattern=json.dumps(pattern),
                tags=tags,
                opts=child,
            )
            self.rules.append(rule)
        ready: list[pulumi.Resource] = []
        if self.topic is not None:
            policy = aws.sns.TopicPolicy(
                name,
                arn=self.topic.arn,
                policy=self.topic.arn.apply(lambda arn: json.dumps(topic_policy(arn))),
                opts=child,
            )
            ready.append(policy)
        for suffix, rule in zip(alert_patterns(args.reservation_ids), self.rules, strict=True):
            aws.cloudwatch.EventTarget(
                f"{name}-{suffix}",
                rule=rule.name,
                arn=self.topic_arn,
                opts=child_options(self, opts, pulumi.ResourceOptions(depends_on=ready)),
            )
        for address in args.email_subscriptions:
            aws.sns.TopicSubscription(
                f"{name}-{re.sub(r'[^A-Za-z0-9-]', '-', address)}",
                topic=self.topic_arn,
                protocol="email",
                endpoint=address,
                opts=child,
            )
        self.register_outputs({"topicArn": self.topic_arn})
