"""Capacity Block alerts: the EventBridge patterns match the documented events of the stack's reservations only, and
every shipped stack's plan declares the rules, targets, encrypted topic and its policy by default."""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import botocore.session
import pytest
from helpers.plan_lookup import one
from helpers.stacks import STACKS, stack_config
from moto.events.models import EventPattern
from ultraserver.builders.alerts import alert_patterns, key_policy, topic_policy
from ultraserver.config.settings import parse_settings
from ultraserver.facts.aws import limits
from ultraserver.facts.capacity import capacity_events as ev
from ultraserver.offline import Plan, record, run_plan
from ultraserver.problems import ConfigError
from ultraserver.resources.alerts import Alerts, AlertsArgs

RULE = "aws:cloudwatch/eventRule:EventRule"
TARGET = "aws:cloudwatch/eventTarget:EventTarget"
TOPIC = "aws:sns/topic:Topic"
OURS = "cr-0aaaaaaaaaaaaaaaa"
OTHER = "cr-0ffffffffffffffff"


# The sample events the EC2 user guide documents, with its example reservation IDs and ARNs replaced by the test's:
# - Capacity Block Delivered / Expiration Warning: "Monitor Capacity Blocks using EventBridge"
#   (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-monitor.html). Its samples leave placeholders
#   ("[ODCR ARN]", "[ODCR ID]") and spell the envelope key "detail_type"; EventBridge envelopes carry "detail-type".
# - EC2 Capacity Reservation <State>: "Monitor state changes for future-dated Capacity Reservations"
#   (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/monitor-fcr-state.html).
# - AWS Health under-utilization, 24-hour and 7-day summary: "Monitor Capacity Reservation underutilization"
#   (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/cr-eventbridge.html).
def capacity_block_event(detail_type: str, reservation: str) -> dict[str, Any]:
    """capacity-blocks-monitor's Capacity Block event."""
    suffix = "delivered" if "Delivered" in detail_type else "approaching-expiry"
    return {
        "customer_event_id": f"{reservation}-{suffix}",
        "detail-type": detail_type,
        "source": "aws.ec2",
        "account": "123456789012",
        "time": "2026-12-01T11:30:00Z",
        "resources": [f"arn:aws:ec2:us-east-1:123456789012:capacity-reservation/{reservation}"],
        "detail": {"capacity-reservation-id": reservation, "end-date": "2026-12-15T11:30:00Z"},
    }


def state_event(detail_type: str, reservation: str) -> dict[str, Any]:
    """monitor-fcr-state's EC2 Capacity Reservation state-change event."""
    return {
        "version": "0",
        "id": "12345678-1234-1234-1234-123456789012",
        "detail-type": detail_type,
        "source": "aws.ec2",
        "account": "123456789012",
        "time": "2026-12-01T11:30:00Z",
        "region": "us-east-1",
        "resources": [f"arn:aws:ec2:us-east-1:123456789012:capacity-reservation/{reservation}"],
        "detail": {"capacity-reservation-id": reservation, "state": detail_type.rsplit(" ", 1)[1].lower()},
    }


def health_event(code: str, resources: list[str]) -> dict[str, Any]:
    """cr-eventbridge's AWS Health event (the 24-hour one names its reservation, the summary one line each)."""
    return {
        "version": "0",
        "id": "b3e00086-f271-12a1-a36c-55e8ddaa130a",
        "detail-type": "AWS Health Event",
        "source": "aws.health",
        "account": "123456789012",
        "time": "2023-03-10T12:03:38Z",
        "region": "ap-south-1",
        "resources": resources,
        "detail": {
            "eventArn": f"arn:aws:health:ap-south-1::event/EC2/{code}/{code}_6211-4d50-9286-0c9fbc243f04",
            "service": "EC2",
            "eventTypeCode": code,
            "eventTypeCategory": "accountNotification",
            "startTime": "Fri, 10 Mar 2023 12:03:38 GMT",
            "endTime": "Fri, 10 Mar 2023 12:03:38 GMT",
            "eventDescription": [{"language": "en_US", "latestDescription": "A description of the event"}],
            "affectedEntities": [{"entityValue": r.split(" ")[0]} for r in resources],
        },
    }


def summary_line(reservation: str) -> str:
    """One reservation of cr-eventbridge's 7-day summary event."""
    return f"{reservation} | us-east-1b | t3.medium | Linux/UNIX | 0.0%"


def matched(patterns: dict[str, dict[str, Any]], event: dict[str, Any]) -> list[str]:
    """Names of the rules whose pattern (loaded and validated as EventBridge would) matches the event."""
    return [name for name, p in patterns.items() if EventPattern.load(json.dumps(p)).matches_event(event)]


EVENTS = [
    *[(capacity_block_event(t, OURS), "capacity-block") for t in ev.CAPACITY_BLOCK_DETAIL_TYPES],
    *[(state_event(t, OURS), "reservation-state") for t in ev.RESERVATION_STATE_DETAIL_TYPES],
    (health_event(ev.UNDERUTILIZATION_EVENT_CODES[0], [OURS]), "underutilization"),
    # The summary lists every reservation of the account below 20 %: ours among others still matches.
    (health_event(ev.UNDERUTILIZATION_EVENT_CODES[1], [summary_line("cr-09876543210fedcba"), summary_line(OURS)]), ""),
]


@pytest.mark.parametrize(("event", "rule"), EVENTS)
def test_each_event_of_our_reservations_matches_one_rule_and_others_none(event: dict[str, Any], rule: str) -> None:
    patterns = alert_patterns([OURS, "cr-0bbbbbbbbbbbbbbbb"])
    assert matched(patterns, event) == [rule or "underutilization"]
    foreign = json.loads(json.dumps(event).replace(OURS, OTHER))
    assert matched(patterns, foreign) == []
    # Without known IDs (a resource group) the rules match the whole account.
    assert matched(alert_patterns([]), foreign) == [rule or "underutilization"]


def test_unrelated_events_match_nothing() -> None:
    patterns = alert_patterns([OURS])
    assert matched(patterns, state_event("EC2 Instance State-change Notification", OURS)) == []
    assert matched(patterns, health_event("AWS_EC2_INSTANCE_RETIREMENT_SCHEDULED", [OURS])) == []


def test_many_reservations_split_into_rules_within_the_pattern_size() -> None:
    ids = [f"cr-{n:017x}" for n in range(200)]
    patterns = alert_patterns(ids)
    assert all(len(json.dumps(p)) <= ev.EVENT_PATTERN_MAX_CHARS for p in patterns.values())
    for kind in ("capacity-block", "reservation-state", "underutilization"):
        chunks = [p for name, p in patterns.items() if name.startswith(f"{kind}-")]
        assert len(chunks) > 1
        covered = [m for p in chunks for m in json.dumps(p).split('"') if m.startswith("cr-")]
        assert sorted(covered) == ids


def test_the_topic_key_lets_eventbridge_use_it_and_the_account_administer_it() -> None:
    by_sid = {s["Sid"]: s for s in key_policy("111122223333")["Statement"]}
    assert by_sid["EventBridgePublishes"]["Principal"] == {"Service": "events.amazonaws.com"}
    assert set(by_sid["EventBridgePublishes"]["Action"]) == {"kms:Decrypt", "kms:GenerateDataKey"}
    assert by_sid["AccountAdministers"]["Principal"] == {"AWS": "arn:aws:iam::111122223333:root"}


def test_the_topic_policy_lets_eventbridge_publish_without_a_condition() -> None:
    # EventBridge guide, "Amazon SNS permissions": no Condition blocks in SNS topic policies for EventBridge; one on
    # aws:SourceArn would never match and every alert would be dropped.
    arn = "arn:aws:sns:us-east-1:111122223333:alerts"
    (statement,) = topic_policy(arn)["Statement"]
    assert statement == {
        "Sid": "CapacityBlockAlerts",
        "Effect": "Allow",
        "Principal": {"Service": "events.amazonaws.com"},
        "Action": "sns:Publish",
        "Resource": arn,
    }


@pytest.fixture(scope="module")
def plans() -> dict[str, Plan]:
    from helpers.stacks import ROOT

    return {stack: run_plan(ROOT, stack) for stack in STACKS}


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_stacks_declare_the_alerts_by_default(plans: dict[str, Plan], stack: str) -> None:
    plan = plans[stack]
    rules = [r for r in plan.of_type(RULE) if "-alerts-" in r.name]
    assert {r.name.split("-alerts-")[1] for r in rules} == {"capacity-block", "reservation-state", "underutilization"}
    topic = one(plan, TOPIC, "alerts")
    key = one(plan, "aws:kms/key:Key", "alerts")
    assert topic.property_dependencies["kmsMasterKeyId"] == [key.urn]
    events = next(s for s in json.loads(key.inputs["policy"])["Statement"] if s["Sid"] == "EventBridgePublishes")
    assert events["Principal"] == {"Service": "events.amazonaws.com"}
    targets = [t for t in plan.of_type(TARGET) if "-alerts-" in t.name]
    assert len(targets) == len(rules) and all(t.property_dependencies["arn"] == [topic.urn] for t in targets)
    # SNS targets go through the topic policy; a RoleArn may break delivery to an encrypted topic (EventBridge guide).
    assert all("roleArn" not in t.inputs for t in targets)
    policy = one(plan, "aws:sns/topicPolicy:TopicPolicy", "alerts")
    assert policy.property_dependencies["policy"] == [topic.urn]
    settings = parse_settings(stack_config(stack))
    for rule in rules:
        text = rule.inputs["eventPattern"]
        EventPattern.load(text)  # a valid pattern
        assert all(rid in text for rid in settings.alert_reservation_ids)


def alerts_plan(**alerts: Any) -> Plan:
    from helpers.stacks import ROOT

    return run_plan(ROOT, "gb200-x72", {"ultraserver-eks:alerts": alerts})


def test_an_existing_topic_gets_the_rules_and_subscriptions_but_keeps_its_policy() -> None:
    arn = "arn:aws:sns:us-east-1:111122223333:gpu-alerts"
    plan = alerts_plan(snsTopicArn=arn, emailSubscriptions=["ops@example.com"])
    assert plan.of_type(TOPIC) == [] and plan.of_type("aws:sns/topicPolicy:TopicPolicy") == []
    assert {t.inputs["arn"] for t in plan.of_type(TARGET) if "alerts" in t.name} == {arn}
    subscription = one(plan, "aws:sns/topicSubscription:TopicSubscription")
    assert subscription.inputs["protocol"] == "email" and subscription.inputs["endpoint"] == "ops@example.com"


def test_alerts_can_be_turned_off() -> None:
    plan = alerts_plan(enabled=False)
    assert not [r for r in plan.resources if "alerts" in r.name]


@pytest.mark.parametrize(
    ("alerts", "says"),
    [
        ({"snsTopicArn": "arn:aws:sqs:us-east-1:111122223333:q"}, "alerts.snsTopicArn"),
        ({"emailSubscriptions": ["not-an-address"]}, "alerts.emailSubscriptions[0]"),
        ({"snsTopicArn": "arn:aws:sns:eu-west-1:111122223333:gpu-alerts"}, "same region"),
    ],
)
def test_bad_alert_settings_are_refused_with_the_key(alerts: dict[str, Any], says: str) -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:alerts"] = alerts
    with pytest.raises(ConfigError) as info:
        parse_settings(config)
    assert says in "\n".join([str(p) for p in info.value.items])


def test_rule_and_topic_names_fit_the_api_for_the_longest_names() -> None:
    # The EventBridge model's RuleName (1-64 of [.-_A-Za-z0-9]); name_prefix adds a 26-character suffix of digits.
    shape = botocore.session.get_session().get_service_model("events").shape_for("RuleName")
    ids = [f"cr-{n:017x}" for n in range(300)]  # enough reservations for numbered rules (reservation-state-3, ...)
    name = "a" * (limits.EKS_CLUSTER_NAME.maximum - 1) + "_-alerts"
    plan = record(lambda: Alerts(name, AlertsArgs(reservation_ids=ids)))
    prefixes = [r.inputs["namePrefix"] for r in plan.of_type(RULE)]
    assert len(prefixes) > 3 and len(set(prefixes)) == len(prefixes)
    for prefix in prefixes:
        physical = prefix + "0" * limits.NAME_PREFIX_SUFFIX
        assert len(physical) <= shape.metadata["max"] and re.fullmatch(shape.metadata["pattern"], physical), prefix
    topic = one(plan, TOPIC).inputs["namePrefix"]
    assert len(topic) + limits.NAME_PREFIX_SUFFIX <= limits.SNS_TOPIC_NAME.maximum
