"""EventBridge events about Capacity Blocks and Capacity Reservations, and what an SNS target of them needs.

Sources:
- EventBridge event reference, Amazon EC2 events
(https://docs.aws.amazon.com/eventbridge/latest/ref/events-ref-ec2.html):
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
# The SNS topic policy: why its events.amazonaws.com statement has no Condition (re-examined 2026-11-25,
# when aws:SourceArn / aws:SourceAccount were asked for). The topic policy and the KMS key policy are two questions:
# - Topic policy, for EventBridge specifically. EventBridge user guide, "Using resource-based policies for Amazon
#   EventBridge", section "Amazon SNS permissions" (awsdocs/amazon-eventbridge-user-guide, doc_source/
#   eb-use-resource-based.md at 4ddcc77a1f4b and at 10e936eebdd8; the repository was archived in 2023): "You can't use
#   of `Condition` blocks in Amazon SNS topic policies for EventBridge." Its statement grants sns:Publish to
#   events.amazonaws.com with no Condition, while the same page conditions the SQS, Lambda and API Gateway statements
#   on the rule ARN (aws:SourceArn): the SNS exception is deliberate. The live page
#   (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-use-resource-based.html) was read only up to its API
#   Gateway section; whether its SNS section still carries that note is UNVERIFIED.
# - Confused-deputy guidance. EventBridge user guide, "Cross-service confused deputy prevention in Amazon
#   EventBridge" (cross-service-confused-deputy-prevention.html): "We recommend using the aws:SourceArn and
#   aws:SourceAccount global condition context keys in resource policies to limit the permissions that Amazon
#   EventBridge gives another service to the resource" and "For EventBridge event bus rule targets, the value of
#   aws:SourceArn must be the rule ARN." What was read names no target service; its example policy could not be read,
#   so that it covers SNS topic policies is UNVERIFIED, and it does not override the SNS-specific note above.
# - KMS key policy, a different document. SNS developer guide, "Key management" (sns-key-management.html): "Adding the
#   aws:SourceAccount, aws:SourceArn, and aws:SourceOrgID to a AWS KMS policy is not supported for
#   EventBridge-to-encrypted topics" (the page itself was read only in part; the sentence as quoted in
#   awslabs/landing-zone-accelerator-on-aws#407, there without aws:SourceOrgID, where a conditioned key policy made
#   every invocation fail). It is about the key policy, so the key statement below has no Condition either; it says
#   nothing about the topic policy.
# - Third-party only: awsdocs/aws-cloudformation-user-guide#481 (2019, a community pull request, closed unmerged):
#   "SourceAccount is not supported for events sources, and if supplied, will cause invocations to silently fail";
#   it does not say which policy.
# Decision: no AWS document read shows a topic-policy condition supported for EventBridge -> SNS, and the one written
# for SNS topic policies says a Condition cannot be used, so the statement stays unconditioned. A wrong guess fails
# silently (every delivery dropped; the rule's FailedInvocations metric is the only trace), whereas the cost of no
# Condition is that an EventBridge rule of any account that knows the topic ARN could publish to it (noise, not access
# to anything). A scoped alternative, an IAM execution role on each target with the topic policy naming only that role,
# conflicts with the same guide's "do not specify a RoleArn" for SNS targets ("event delivery may fail, particularly
# for Amazon SQS and Amazon SNS targets with AWS KMS encryption enabled") and was not tried against AWS.
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
