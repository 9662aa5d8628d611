"""The offline engine refuses what the real engine refuses: two resources with one URN."""

from __future__ import annotations

import pulumi
import pulumi_aws as aws
import pytest
from ultraserver.offline.engine import record
from ultraserver.problems import ConfigError


def test_two_resources_with_the_same_urn_fail_the_plan() -> None:
    def program() -> None:
        aws.ec2.Vpc("same", cidr_block="10.0.0.0/16")
        aws.ec2.Vpc("same", cidr_block="10.1.0.0/16")

    with pytest.raises(ConfigError, match="twice"):
        record(program)


def test_same_name_under_different_parents_is_fine() -> None:
    def program() -> None:
        first = pulumi.ComponentResource("test:index:A", "a")
        second = pulumi.ComponentResource("test:index:B", "b")
        aws.ec2.Vpc("same", cidr_block="10.0.0.0/16", opts=pulumi.ResourceOptions(parent=first))
        aws.ec2.Vpc("same", cidr_block="10.1.0.0/16", opts=pulumi.ResourceOptions(parent=second))

    assert len(record(program).of_type("aws:ec2/vpc:Vpc")) == 2
