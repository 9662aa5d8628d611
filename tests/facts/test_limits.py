"""Every AWS/EKS/Kubernetes limit the settings check, its value and its source; and the derived-name checks."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers.stacks import stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.facts.aws import limits
from ultraserver.problems import ConfigError

# (limit, documented maximum, where the number is documented)
TABLE = [
    (limits.PULUMI_STACK_NAME, 100, "pkg/backend/diy/store.go"),
    (limits.EKS_CLUSTER_NAME, 100, "API_CreateCluster"),
    (limits.NODE_GROUP_NAME, 63, "API_CreateNodegroup"),
    (limits.NODE_GROUP_NAME_PREFIX, 37, "26-character unique suffix"),
    (limits.IAM_ROLE_NAME, 64, "reference_iam-quotas"),
    (limits.INSTANCE_PROFILE_NAME, 128, "reference_iam-quotas"),
    (limits.LAUNCH_TEMPLATE_NAME, 128, "API_CreateLaunchTemplate"),
    (limits.SECURITY_GROUP_NAME, 255, "API_CreateSecurityGroup"),
    (limits.ASG_NAME, 255, "API_CreateAutoScalingGroup"),
    (limits.HELM_RELEASE_NAME, 53, "helm"),
    (limits.KUBERNETES_LABEL_NAME, 63, "labels"),
    (limits.KUBERNETES_LABEL_PREFIX, 253, "labels"),
    (limits.PUBLIC_ACCESS_CIDRS, 40, "cluster-endpoint"),
    (limits.TAGS_PER_RESOURCE, 50, "tag-conventions"),
    (limits.TAG_KEY, 128, "tag-conventions"),
    (limits.TAG_VALUE, 256, "tag-conventions"),
    (limits.MANAGED_NODE_GROUPS_PER_CLUSTER, 30, "L-6D54EA21"),
    (limits.NODES_PER_MANAGED_NODE_GROUP, 450, "service-quotas"),
    (limits.VPC_CIDR_BLOCKS, 5, "amazon-vpc-limits"),
    (limits.AUTO_SCALING_GROUPS_PER_REGION, 500, "ec2-auto-scaling-quotas"),
    (limits.SCHEDULED_ACTION_NAME, 255, "API_PutScheduledUpdateGroupAction"),
    (limits.SCHEDULED_ACTIONS_PER_GROUP, 125, "ec2-auto-scaling-scheduled-scaling"),
    (limits.EVENT_RULE_NAME, 64, "API_PutRule"),
    (limits.EVENT_RULE_NAME_PREFIX, 38, "26-character unique suffix"),
    (limits.SNS_TOPIC_NAME, 256, "API_CreateTopic"),
]


@pytest.mark.parametrize(("limit", "maximum", "source"), TABLE, ids=[row[0].what for row in TABLE])
def test_limit_value_and_source(limit: limits.Limit, maximum: int, source: str) -> None:
    assert limit.maximum == maximum
    assert source in limit.source


def test_every_limit_is_in_the_table() -> None:
    assert {row[0] for row in TABLE} | {limits.IMEX_TARGET_NAME} == {
        v for v in vars(limits).values() if isinstance(v, limits.Limit)
    }


def test_autonaming_adds_eight_characters() -> None:
    assert limits.autonamed("gb200-x72-nvl72") == len("gb200-x72-nvl72") + 8


def refused(change: Any, stack: str = "gb200-x72") -> str:
    config = copy.deepcopy(stack_config(stack))
    change(config)
    with pytest.raises(ConfigError) as info:
        parse_settings(config)
    return "\n".join([str(p) for p in info.value.items])


@pytest.mark.parametrize(
    ("change", "says"),
    [
        # 30 + "-system-" (8) = 38 > 37: fits EKS's 100 but not the system node group's name_prefix.
        (lambda c: c["ultraserver-eks:cluster"].update(name="c" * 30), "name_prefix fits 37"),
        (lambda c: c["ultraserver-eks:cluster"].update(name="c" * 101), "at most 100 characters"),
        # 29 + 1 + 22 + "-node" (5) + 8 = 65 > 64: the GPU node role overflows first.
        (
            lambda c: (
                c["ultraserver-eks:cluster"].update(name="c" * 29),
                c["ultraserver-eks:gpuNodeGroups"][0].update(name="g" * 22),
            ),
            "IAM role name fits 64",
        ),
        (lambda c: c["ultraserver-eks:gpuNodeGroups"][0].update(name="g" * 31), "IMEX check UltraServer"),
        (
            lambda c: c["ultraserver-eks:cluster"].update(
                endpointPublicAccessCidrs=[f"198.18.{i}.0/24" for i in range(41)]
            ),
            "at most 40",
        ),
        (lambda c: c["ultraserver-eks:cluster"].update(tags={f"k{i}": "v" for i in range(42)}), "at most 41"),
        (lambda c: c["ultraserver-eks:cluster"].update(tags={"k" * 129: "v"}), "up to 128"),
        (lambda c: c["ultraserver-eks:cluster"].update(tags={"k": "v" * 257}), "up to 256"),
        (lambda c: c["ultraserver-eks:cluster"].update(tags={"aws:team": "x"}), "aws: prefix"),
    ],
)
def test_settings_refuse_what_breaks_a_limit(change: Any, says: str) -> None:
    assert says in refused(change)


def test_names_just_inside_the_limits_pass() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:cluster"]["name"] = "c" * 29
    config["ultraserver-eks:cluster"]["tags"] = {f"k{i}": "v" for i in range(41)}
    config["ultraserver-eks:gpuNodeGroups"][0]["name"] = "g" * 21
    assert parse_settings(config).cluster.name == "c" * 29
