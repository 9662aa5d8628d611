"""EventBridge events about Capacity Blocks and Capacity Reservations, and what an SNS target of them needs.

Sources:
- EventBridge event reference, Amazon EC2 events (https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-ec2.html):
  lists "Capacity Block Delivered", "Capacity Block Expiration Warning" and "EC2 Capacity Reservation Active /
  Cancelled / Delayed / Expired / Failed / Scheduled / Unsupported" among the events EC2 sends directly.
- EC2 user guide, "Monitor Capacity Blocks using EventBridge"
  (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-monitor.html): the example events carry
  ``detail.capacity-reservation-id``; the English page writes the detail-type "Capacity Block Delivered", the
  China-region and translated pages "Capacity Block Reservation Delivered" (same for the expiration warning). The
  rules match both spellings; which one EC2 sends was not observed (unverified).
- EC2 user guide, "Monitor state changes for future-dated Capacity Reservations"
  (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/monitor-fcr-state.html): "EC2 Capacity Reservation <State>"
  events with ``detail.capacity-reservation-id`` and ``detail.state``. That Capacity Blocks send them too is
  unverified (the page is about future-dated reservations).
- EC2 user guide, "Monitor Capacity Reservation underutilization"
  (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/cr-eventbridge.html): AWS Health sends "AWS Health Event"
  with ``detail.eventTypeCode`` AWS_EC2_ODCR_UNDERUTILIZATION_NOTIFICATION (one reservation below 20 % over 24 hours,
  ``resources: ["cr-..."]``) and ..._SUMMARY (7 days, ``resources: ["cr-... | zone | type | platform | 0.0%"]``).
  Whether AWS Health sends them for Capacity Blocks is unverified.
"""

from __future__ import annotations

EC2_SOURCE = "aws.ec2"
HEALTH_SOURCE = "aws.health"
HEALTH_DETAIL_TYPE = "AWS Health Event"
HEALTH_SERVICE = "EC2"

CAPACITY_BLOCK_DETAIL_TYPES = (
    "Capacity Block Delivered",
    "Capacity Block Expiration Warning",
    "Capacity Block Reservation Delivered",
    "Capacity Block Reservation Expiration Warning",
)
RESERVATION_STATE_DETAIL_TYPES = tuple(
    f"EC2 Capacity Reservation {state}"
    for state in ("Scheduled", "Active", "Delayed", "Expired", "Failed", "Unsupported", "Cancelled")
)
RESERVATION_ID_FIELD = "capacity-reservation-id"
UNDERUTILIZATION_EVENT_CODES = (
    "AWS_EC2_ODCR_UNDERUTILIZATION_NOTIFICATION",
    "AWS_EC2_ODCR_UNDERUTILIZATION_NOTIFICATION_SUMMARY",
)

# Event pattern size: "Event pattern: 2048 characters maximum" (EventBridge user guide, "Amazon EventBridge quotas",
# https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-quota.html; awsdocs/amazon-eventbridge-user-guide
# doc_source/eb-quota.md) and the EventPattern shape of PutRule (botocore events 2014-02-03 service-2.json: max 2048).
# pulumi-aws (aws.cloudwatch.EventRule eventPattern) says it is adjustable to 4096 by a quota request; 2048 holds
# without one.
EVENT_PATTERN_MAX_CHARS = 2048

EVENTS_PRINCIPAL = "events.amazonaws.com"
# EventBridge user guide, "Using resource-based policies for Amazon EventBridge"
# (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html): EventBridge publishes to an
# SNS topic under the topic's resource-based policy, and an SNS target must not name a RoleArn ("event delivery may
# fail, particularly for Amazon SQS and Amazon SNS targets with AWS KMS encryption enabled").
# Its "Amazon SNS permissions" section (source: awsdocs/amazon-eventbridge-user-guide,
# doc_source/eb-use-resource-based.md) grants sns:Publish to events.amazonaws.com on the topic with no Condition and
# notes that Condition blocks cannot be used in SNS topic policies for EventBridge: a statement conditioned on
# aws:SourceArn / aws:SourceAccount would not match, and every delivery would fail silently (the rule's
# FailedInvocations metric is the only trace). So the topic statement has no Condition. The cost: an EventBridge rule
# of any account that knows the topic ARN could publish to it (noise, not access to anything). Whether EventBridge now
# fills aws:SourceArn for SNS targets was not tried against AWS (unverified), so the documented form is used.
# Re-checked for issue 23 §6, which asked for an aws:SourceArn / aws:SourceAccount condition: two more sources say it
# breaks delivery. The SNS developer guide, "Key management" (sns-key-management.html): "Adding the aws:SourceAccount
# and aws:SourceArn to a AWS KMS policy is not supported for EventBridge-to-encrypted topics" (quoted in
# awslabs/landing-zone-accelerator-on-aws#407, where such a condition made every invocation fail); and
# awsdocs/aws-cloudformation-user-guide#481 (2019): "SourceAccount is not supported for events sources, and if
# supplied, will cause invocations to silently fail". The statement therefore stays unconditioned. A scoped
# alternative, an IAM execution role on each target (the newer EventBridge guide allows one for SNS targets) with the
# topic policy naming only that role, was not tried against AWS (unverified) and is left for a verified change.
# For a KMS-encrypted topic the key policy must let events.amazonaws.com use the key: "Allow CWE to use the key" with
# exactly kms:Decrypt and kms:GenerateDataKey, Resource "*" (Amazon Q Developer in chat applications admin guide,
# troubleshooting, "The Amazon SNS topic has server-side encryption turned on", quoting it as the EventBridge example;
# the EventBridge guide gives the same statement for rules targeting encrypted SQS queues,
# awsdocs/amazon-eventbridge-user-guide). The AWS managed key alias/aws/sns cannot be used: "AWS managed service keys
# don't allow you to modify access policies" (same Q Developer page), so the toolkit makes its own key, keeping the
# account root statement (without it only this statement would govern the key and the deployer could no longer
# manage it; KMS developer guide, "Default key policy").
EVENTS_KMS_ACTIONS = ("kms:Decrypt", "kms:GenerateDataKey")
SNS_PUBLISH = "sns:Publish"
