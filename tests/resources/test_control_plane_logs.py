"""The control-plane log group: made before the cluster, with retention and its own KMS key; no unused OIDC provider."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import botocore.session
import pytest
from helpers.plan_lookup import one
from helpers.stacks import stack_config
from ultraserver.builders.iam import log_group_key_policy
from ultraserver.facts.aws import limits
from ultraserver.offline import Plan

LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"


def cluster(**changes: Any) -> dict[str, Any]:
    """gb200-x72's cluster settings with some keys changed."""
    return {"cluster": {**stack_config("gb200-x72")["ultraserver-eks:cluster"], **changes}}


def test_the_log_group_exists_before_the_cluster_with_retention_and_key(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("gb200-x72")
    group = one(plan, LOG_GROUP)
    assert group.inputs["name"] == "/aws/eks/gb200-x72/cluster"
    assert group.inputs["retentionInDays"] == 90
    key = next(r for r in plan.resources if r.type == "aws:kms/key:Key" and r.name == "gb200-x72-logs")
    assert key.urn in group.dependencies
    cluster = one(plan, "eks:index:Cluster")
    assert group.urn in cluster.dependencies
    policy = json.loads(key.inputs["policy"])
    (logs,) = [s for s in policy["Statement"] if s["Sid"] == "CloudWatchLogsEncrypts"]
    assert logs["Principal"] == {"Service": "logs.us-east-1.amazonaws.com"}
    assert logs["Condition"]["ArnEquals"]["kms:EncryptionContext:aws:logs:arn"].endswith(
        ":log-group:/aws/eks/gb200-x72/cluster"
    )


def test_retention_and_irsa_are_settings(plan_with: Callable[..., Plan]) -> None:
    plan = plan_with("gb200-x72", cluster(logRetentionDays=365, irsa=True))
    assert one(plan, LOG_GROUP).inputs["retentionInDays"] == 365
    assert one(plan, "eks:index:Cluster").inputs["createOidcProvider"] is True


def test_a_retention_cloudwatch_refuses_is_a_settings_error(plan_with: Callable[..., Plan]) -> None:
    from ultraserver.problems import ConfigError

    with pytest.raises(ConfigError, match="logRetentionDays"):
        plan_with("gb200-x72", cluster(logRetentionDays=100))


def test_no_log_types_means_no_log_group(plan_with: Callable[..., Plan]) -> None:
    plan = plan_with("gb200-x72", cluster(logTypes=[]))
    assert plan.of_type(LOG_GROUP) == []


def test_retention_values_are_the_ones_cloudwatch_documents() -> None:
    shape = botocore.session.get_session().get_service_model("logs").operation_model("PutRetentionPolicy")
    text = shape.input_shape.members["retentionInDays"].documentation
    listed = re.search(r"Possible values are: ([\d, and]+)\.", re.sub("<[^>]+>", "", text))
    assert listed is not None
    assert tuple(int(n) for n in re.findall(r"\d+", listed.group(1))) == limits.RETENTION_DAYS


def test_key_policy_keeps_the_account_root() -> None:
    policy: dict[str, Any] = log_group_key_policy("111122223333", "aws", "us-east-1", "arn:x")
    assert policy["Statement"][0]["Principal"] == {"AWS": "arn:aws:iam::111122223333:root"}
