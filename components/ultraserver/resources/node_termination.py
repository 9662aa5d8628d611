"""The AWS side of the Node Termination Handler in queue mode: queue, EventBridge rules, pod role.

The ASG lifecycle hooks belong to each self-managed group (GpuNodeGroup); the Helm release sits in the
Kubernetes layer (NodeTerminationHandler in helm_release.py) and reads this component's queue URL.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ultraserver.builders.iam import pod_identity_trust_policy
from ultraserver.builders.node_termination import handler_policy, queue_policy
from ultraserver.facts.aws import node_termination as nth
from ultraserver.resources.arguments import checked
from ultraserver.resources.child_options import child_options


@checked()
@dataclass
class NodeTerminationQueueArgs:
    """Inputs of the termination-event queue."""

    cluster_name: pulumi.Input[str]
    """EKS cluster whose handler pods get the role through Pod Identity."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """AWS tags."""


class NodeTerminationQueue(pulumi.ComponentResource):
    """SQS queue fed by the EventBridge rules the handler's README lists, and the handler's Pod Identity role."""

    queue: aws.sqs.Queue
    rules: list[aws.cloudwatch.EventRule]
    role: aws.iam.Role
    association: aws.eks.PodIdentityAssociation

    def __init__(self, name: str, args: NodeTerminationQueueArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:NodeTerminationQueue", name, None, opts)
        child = child_options(self, opts)
        tags = dict(args.tags)
        # Physical names from short prefixes: AWS adds 26 characters to a name_prefix, and IAM role and EventBridge
        # rule names stop at 64 (a 38-character prefix), whatever the cluster name's length (up to 100).
        stem = name[:16].rstrip("-")
        self.queue = aws.sqs.Queue(
            name,
            name_prefix=f"{stem}-nth-",
            message_retention_seconds=nth.MESSAGE_RETENTION_SECONDS,
            # SSE-SQS: EventBridge cannot publish to a queue encrypted with the AWS managed KMS key.
            sqs_managed_sse_enabled=True,
            tags=tags,
            opts=child,
        )
        policy = aws.sqs.QueuePolicy(
            name,
            queue_url=self.queue.url,
            policy=self.queue.arn.apply(lambda arn: json.dumps(queue_policy(arn))),
            opts=child,
        )
        self.rules = []
        for suffix, pattern in nth.EVENT_PATTERNS.items():
            rule = aws.cloudwatch.EventRule(
                f"{name}-{suffix}",
                name_prefix=f"{stem}-{suffix}-",
                event_pattern=json.dumps(pattern),
                tags=tags,
                opts=child,
            )
            aws.cloudwatch.EventTarget(
                f"{name}-{suffix}",
                rule=rule.name,
                arn=self.queue.arn,
                opts=child_options(self, opts, pulumi.ResourceOptions(depends_on=[policy])),
            )
            self.rules.append(rule)
        self.role = aws.iam.Role(
            f"{name}-handler",
            name_prefix=f"{stem}-nth-",
            assume_role_policy=json.dumps(pod_identity_trust_policy()),
            tags=tags,
            opts=child,
        )
        aws.iam.RolePolicy(f"{name}-handler", role=self.role.id, policy=json.dumps(handler_policy()), opts=child)
        self.association = aws.eks.PodIdentityAssociation(
            name,
            cluster_name=args.cluster_name,
            namespace=nth.NAMESPACE,
            service_account=nth.SERVICE_ACCOUNT,
            role_arn=self.role.arn,
            tags=tags,
            opts=child,
        )
        self.register_outputs({"queueUrl": self.queue.url, "roleArn": self.role.arn})
