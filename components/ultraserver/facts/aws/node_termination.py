"""AWS Node Termination Handler in queue mode: the AWS side its README asks for, at the pinned chart.

Source: aws/aws-node-termination-handler README, "Queue Processor" sections (infrastructure, IAM, EventBridge
rules), and config/helm/aws-node-termination-handler/values.yaml at tag v1.25.6 (commit 77ca841d).
EKS managed node groups drain on their own ("If you're using EKS managed node groups, you don't need the
aws-node-termination-handler", same README), so only self-managed groups need it; the EKS capacity-blocks guide
recommends it for self-managed capacity-block nodes.
"""

from __future__ import annotations

# The ASG lifecycle hook NTH completes after draining (README: put-lifecycle-hook ... EC2_INSTANCE_TERMINATING,
# --default-result=CONTINUE --heartbeat-timeout=300).
LIFECYCLE_TRANSITION = "autoscaling:EC2_INSTANCE_TERMINATING"
LIFECYCLE_DEFAULT_RESULT = "CONTINUE"
LIFECYCLE_HEARTBEAT_SECONDS = 300

# values.yaml `checkTagBeforeDraining: true` / `managedTag`: NTH ignores instances without this tag
# (README: "The value of the key does not matter").
MANAGED_TAG = "aws-node-termination-handler/managed"

# README example queue: `MessageRetentionPeriod: 300`. Encryption: SSE-SQS; SSE-KMS with the AWS managed key is
# not supported because EventBridge could not publish (the handler's README, SQS section).
MESSAGE_RETENTION_SECONDS = 300

# The EventBridge rules the README lists, all targeting the queue (name suffix -> event pattern).
EVENT_PATTERNS: dict[str, dict] = {
    "asg-terminate": {"source": ["aws.autoscaling"], "detail-type": ["EC2 Instance-terminate Lifecycle Action"]},
    "spot-interruption": {"source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]},
    "rebalance": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance Rebalance Recommendation"]},
    "state-change": {"source": ["aws.ec2"], "detail-type": ["EC2 Instance State-change Notification"]},
    "scheduled-change": {
        "source": ["aws.health"],
        "detail-type": ["AWS Health Event"],
        "detail": {"service": ["EC2"], "eventTypeCategory": ["scheduledChange"]},
    },
}

# The README's queue policy also lets sqs.amazonaws.com send; the queue policy here names only events.amazonaws.com,
# conditioned on the queue's own rules (builders/event_queue.py), which no other principal could match.

# The queue processor's permissions (README IAM policy, all on Resource "*"; the role here puts the two SQS actions
# on its queue only). `RecordLifecycleActionHeartbeat` would only be needed with heartbeatInterval, which the toolkit
# leaves off (-1).
POD_ACTIONS = (
    "autoscaling:CompleteLifecycleAction",
    "autoscaling:DescribeAutoScalingInstances",
    "autoscaling:DescribeTags",
    "ec2:DescribeInstances",
    "sqs:DeleteMessage",
    "sqs:ReceiveMessage",
)

# Where the release runs and the service account Pod Identity binds the role to. The queue processor is a
# Deployment without host networking (values.yaml), so it gets credentials from Pod Identity, not the node.
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "aws-node-termination-handler"
