"""EventQueue: EventBridge events into an SQS queue that one service account reads through Pod Identity.

Serves the Node Termination Handler (queue mode) and the reclaim drain's Capacity Block warnings; policies in
``builders/event_queue.py``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_aws as aws

from ultraserver.arguments import checked, checked_component
from ultraserver.builders.event_queue import READER_ACTIONS, queue_policy, reader_policy
from ultraserver.builders.iam import pod_identity_trust_policy
from ultraserver.problems import Described, Problem
from ultraserver.resources.child_options import child_options


@checked()
@dataclass
class EventQueueArgs:
    """Inputs of an EventBridge-fed queue and its reader."""

    cluster_name: pulumi.Input[str]
    """EKS cluster whose reader pods get the role through Pod Identity."""
    namespace: str
    """The reader's namespace."""
    service_account: str
    """The reader's service account."""
    rules: Mapping[str, Mapping[str, Any]]
    """EventBridge event patterns by key: rule and target ``<name>-<key>``, physical rule name ``<stem>-<key>-...``."""
    label: str
    """Physical-name infix of the queue and the role (``<stem>-<label>-``, stem: the name's first 16 characters)."""
    reader: str = "reader"
    """The reader's part of the role's and role policy's resource names (``<name>-<reader>``)."""
    unscoped_actions: Sequence[str] = ()
    """Actions the reader needs beyond receive and delete on its queue that name no queue (Resource "*")."""
    statements: Sequence[Mapping[str, Any]] = ()
    """Further statements of the reader's policy, scoped by their own Resource or Condition (values may be outputs)."""
    # SQS CreateQueue, MessageRetentionPeriod: "Default: 345,600 (4 days)" (botocore 1.44.5, sqs 2012-11-05 model).
    message_retention_seconds: int | None = None
    """How long SQS keeps a message; None: SQS's default (4 days)."""
    former_names: Mapping[str, str] = field(default_factory=dict)
    """Earlier resource names of children (name -> earlier name), aliased so an update keeps those resources."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """AWS tags."""

    def problems(self) -> list[Problem]:
        """A queue nothing feeds is a mistake: at least one rule. An SQS action on Resource "*" would reach every
        queue of the account."""
        found = []
        if not self.rules:
            found.append(
                Problem(
                    "EventQueueArgs.rules",
                    Described("no rules"),
                    "at least one EventBridge event pattern",
                    "give the patterns whose events the reader needs",
                )
            )
        stray = [a for a in self.unscoped_actions if a.lower().startswith("sqs:")]
        if stray:
            found.append(
                Problem(
                    "EventQueueArgs.unscoped_actions",
                    stray,
                    "actions that name no queue (the reader's receive and delete are granted on its queue)",
                    f"drop {', '.join(stray)}: {', '.join(READER_ACTIONS)} on the queue come with the component",
                )
            )
        return found


@checked_component
class EventQueue(pulumi.ComponentResource):
    """SQS queue (SSE-SQS), the EventBridge rules feeding it, a queue policy letting only those rules send, and the
    reader's role and Pod Identity association."""

    queue: aws.sqs.Queue
    rules: list[aws.cloudwatch.EventRule]
    role: aws.iam.Role
    association: aws.eks.PodIdentityAssociation

    def __init__(self, name: str, args: EventQueueArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:EventQueue", name, None, opts)
        tags = dict(args.tags)

        def options(child: str, extra: pulumi.ResourceOptions | None = None) -> pulumi.ResourceOptions:
            former = args.former_names.get(child)
            aliased = pulumi.ResourceOptions(aliases=[pulumi.Alias(name=former)] if former else None)
            return child_options(self, opts, pulumi.ResourceOptions.merge(aliased, extra) if extra else aliased)

        # Physical names from short prefixes: AWS adds 26 characters to a name_prefix, and IAM role and EventBridge
        # rule names stop at 64 (a 38-character prefix), whatever the cluster name's length (up to 100).
        stem = name[:16].rstrip("-")
        # SSE-SQS: EventBridge cannot publish to a queue encrypted with the AWS managed KMS key (Node Termination
        # Handler README, SQS section: facts/aws/node_termination.py).
        self.queue = aws.sqs.Queue(
            name,
            name_prefix=f"{stem}-{args.label}-",
            message_retention_seconds=args.message_retention_seconds,
            sqs_managed_sse_enabled=True,
            tags=tags,
            opts=options(name),
        )
        self.rules = [
            aws.cloudwatch.EventRule(
                f"{name}-{key}",
                name_prefix=f"{stem}-{key}-",
                event_pattern=json.dumps(pattern),
                tags=tags,
                opts=options(f"{name}-{key}"),
            )
            for key, pattern in args.rules.items()
        ]
        unscoped = list(args.unscoped_actions)
        policy = aws.sqs.QueuePolicy(
            name,
            queue_url=self.queue.url,
            policy=pulumi.Output.all(self.queue.arn, *[r.arn for r in self.rules]).apply(
                lambda arns: json.dumps(queue_policy(arns[0], arns[1:]))
            ),
            opts=options(name),
        )
        for key, rule in zip(args.rules, self.rules, strict=True):
            aws.cloudwatch.EventTarget(
                f"{name}-{key}",
                rule=rule.name,
                arn=self.queue.arn,
                opts=options(f"{name}-{key}", pulumi.ResourceOptions(depends_on=[policy])),
            )
        self.role = aws.iam.Role(
            f"{name}-{args.reader}",
            name_prefix=f"{stem}-{args.label}-",
            assume_role_policy=json.dumps(pod_identity_trust_policy()),
            tags=tags,
            opts=options(f"{name}-{args.reader}"),
        )
        aws.iam.RolePolicy(
            f"{name}-{args.reader}",
            role=self.role.id,
            policy=pulumi.Output.all(
                self.queue.arn, pulumi.Output.from_input([dict(x) for x in args.statements])
            ).apply(lambda v: json.dumps(reader_policy(v[0], unscoped, v[1]))),
            opts=options(f"{name}-{args.reader}"),
        )
        self.association = aws.eks.PodIdentityAssociation(
            name,
            cluster_name=args.cluster_name,
            namespace=args.namespace,
            service_account=args.service_account,
            role_arn=self.role.arn,
            tags=tags,
            opts=options(name),
        )
        self.register_outputs({"queueUrl": self.queue.url, "roleArn": self.role.arn})
