"""ReclaimWarnings: EC2's Capacity Block expiration warnings to an SQS queue the reclaim drain reads through Pod
Identity."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ultraserver.builders.iam import pod_identity_trust_policy
from ultraserver.builders.reclaim_warnings import warning_event_pattern, warning_queue_policy, warning_reader_policy
from ultraserver.resources.arguments import checked
from ultraserver.resources.child_options import child_options


@checked()
@dataclass
class ReclaimWarningsArgs:
    """Inputs of the drain's warning queue."""

    cluster_name: pulumi.Input[str]
    """EKS cluster whose drain pods get the role through Pod Identity."""
    namespace: str
    """The drain's namespace (ReclaimDrainArgs.namespace)."""
    service_account: str
    """The drain's service account (ReclaimDrainArgs.name)."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """AWS tags."""


class ReclaimWarnings(pulumi.ComponentResource):
    """SQS queue (SSE-SQS), the EventBridge rule feeding it, the queue policy naming that rule, and the drain's role
    and Pod Identity association (receive and delete on this queue only)."""

    queue: aws.sqs.Queue
    rule: aws.cloudwatch.EventRule
    role: aws.iam.Role
    association: aws.eks.PodIdentityAssociation

    def __init__(self, name: str, args: ReclaimWarningsArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:ReclaimWarnings", name, None, opts)
        child = child_options(self, opts)
        tags = dict(args.tags)
        # Short prefixes: AWS adds 26 characters to a name_prefix; role and rule names stop at 64.
        stem = name[:16].rstrip("-")
        # SSE-SQS: EventBridge cannot publish to a queue encrypted with the AWS managed KMS key (NodeTerminationQueue).
        self.queue = aws.sqs.Queue(
            name, name_prefix=f"{stem}-warn-", sqs_managed_sse_enabled=True, tags=tags, opts=child
        )
        self.rule = aws.cloudwatch.EventRule(
            name, name_prefix=f"{stem}-warn-", event_pattern=json.dumps(warning_event_pattern()), tags=tags, opts=child
        )
        policy = aws.sqs.QueuePolicy(
            name,
            queue_url=self.queue.url,
            policy=pulumi.Output.all(self.queue.arn, self.rule.arn).apply(
                lambda arns: json.dumps(warning_queue_policy(arns[0], arns[1]))
            ),
            opts=child,
        )
        aws.cloudwatch.EventTarget(
            name,
            rule=self.rule.name,
            arn=self.queue.arn,
            opts=child_options(self, opts, pulumi.ResourceOptions(depends_on=[policy])),
        )
        self.role = aws.iam.Role(
            f"{name}-drain",
            name_prefix=f"{stem}-warn-",
            assume_role_policy=json.dumps(pod_identity_trust_policy()),
            tags=tags,
            opts=child,
        )
        aws.iam.RolePolicy(
            f"{name}-drain",
            role=self.role.id,
            policy=self.queue.arn.apply(lambda arn: json.dumps(warning_reader_policy(arn))),
            opts=child,
        )
        self.association = aws.eks.PodIdentityAssociation(
            name,
            cluster_name=args.cluster_name,
            namespace=args.namespace,
            service_account=args.service_account,
            role_arn=self.role.arn,
            tags=tags,
            opts=child,
        )
        self.register_outputs({"queueUrl": self.queue.url, "roleArn": self.role.arn})
