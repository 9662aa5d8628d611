"""EventQueue: every queue EventBridge feeds lets only its own rules send, its reader gets the policy asked for, and
its physical names fit AWS's limits."""

from __future__ import annotations

import json

import pytest
from helpers.plan_lookup import offline_arn, one
from helpers.stacks import STACKS
from ultraserver.builders.event_queue import READER_ACTIONS
from ultraserver.facts.aws import node_termination as nth
from ultraserver.offline import record
from ultraserver.problems import ConfigError
from ultraserver.resources.event_queue import EventQueue, EventQueueArgs

QUEUE_POLICY = "aws:sqs/queuePolicy:QueuePolicy"
RULE = "aws:cloudwatch/eventRule:EventRule"
TARGET = "aws:cloudwatch/eventTarget:EventTarget"
EVENTS = "events.amazonaws.com"


@pytest.mark.parametrize("stack", STACKS)
def test_every_queue_policy_lets_events_send_only_for_the_rules_that_target_the_queue(shipped_plan, stack) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan(stack)
    by_urn = plan.by_urn()
    policies = plan.of_type(QUEUE_POLICY)
    assert policies, "every shipped stack has a queue EventBridge feeds"
    for policy in policies:
        (queue_urn,) = policy.property_dependencies["queueUrl"]
        rules = [
            by_urn[t.property_dependencies["rule"][0]]
            for t in plan.of_type(TARGET)
            if t.property_dependencies["arn"] == [queue_urn]
        ]
        assert rules, policy.name
        for statement in json.loads(policy.inputs["policy"])["Statement"]:
            services = statement["Principal"]["Service"]
            assert EVENTS in (services if isinstance(services, list) else [services])
            arns = statement["Condition"]["ArnEquals"]["aws:SourceArn"]
            assert sorted(arns if isinstance(arns, list) else [arns]) == sorted(offline_arn(r) for r in rules)


def queue(name: str, **given) -> object:  # type: ignore[no-untyped-def]
    args = {"cluster_name": "c", "namespace": "ns", "service_account": "sa", "rules": nth.EVENT_PATTERNS}
    return record(lambda: EventQueue(name, EventQueueArgs(**{**args, "label": "nth", **given})))


def test_the_reader_gets_receive_and_delete_on_its_queue_unless_a_policy_is_given() -> None:
    plan = queue("q")
    (read,) = json.loads(one(plan, "aws:iam/rolePolicy:RolePolicy").inputs["policy"])["Statement"]
    assert (read["Action"], read["Resource"]) == (list(READER_ACTIONS), offline_arn(one(plan, "aws:sqs/queue:Queue")))
    given = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": ["sqs:ReceiveMessage"], "Resource": "*"}],
    }
    plan = queue("q", reader_policy=given, reader="handler")
    assert json.loads(one(plan, "aws:iam/rolePolicy:RolePolicy", "q-handler").inputs["policy"]) == given
    association = one(plan, "aws:eks/podIdentityAssociation:PodIdentityAssociation")
    assert (association.inputs["namespace"], association.inputs["serviceAccount"]) == ("ns", "sa")


def test_a_queue_without_rules_is_refused_naming_the_argument() -> None:
    with pytest.raises(ConfigError, match=r"EventQueueArgs\.rules"):
        queue("q", rules={})


def test_physical_names_fit_aws_limits_for_the_longest_cluster_name() -> None:
    long_name = "c" * 100
    plan = queue(f"{long_name}-reclaim-warnings")
    # AWS appends a 26-character unique suffix to name_prefix; role and rule names stop at 64, queue names at 80.
    for kind, limit in (("aws:iam/role:Role", 64), (RULE, 64), ("aws:sqs/queue:Queue", 80)):
        for resource in plan.of_type(kind):
            assert len(resource.inputs["namePrefix"]) + 26 <= limit, (kind, resource.inputs["namePrefix"])


def test_a_former_name_is_aliased_for_the_children_that_had_it() -> None:
    plan = queue("q", rules={"warn": {"source": ["aws.ec2"]}}, former_names={"q-warn": "q"})
    for kind in (RULE, TARGET):
        resource = one(plan, kind, "q-warn", exact=True)
        assert resource.aliases == [resource.urn.replace("::q-warn", "::q")]
    assert one(plan, "aws:sqs/queue:Queue").aliases == []
