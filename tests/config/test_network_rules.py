"""VPC CIDR blocks: only the ranges EKS documents, AWS sizes, no overlap, and fixes that can be followed."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers.stacks import stack_config
from ultraserver.config.settings import parse_settings, settings_warnings
from ultraserver.problems import ConfigError

STACK = "gb200-x72"


def settings_with(network: dict[str, Any], stack: str = STACK) -> Any:
    config = copy.deepcopy(stack_config(stack))
    config["ultraserver-eks:network"].update(network)
    return parse_settings(config, stack=stack)


def problems_with(network: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        settings_with(network)
    return [str(p) for p in info.value.items]


@pytest.mark.parametrize("cidr", ["8.8.0.0/16", "52.0.0.0/16", "198.18.0.0/16", "172.32.0.0/16"])
def test_public_and_undocumented_ranges_are_refused_by_key(cidr: str) -> None:
    problems = problems_with({"vpcCidr": cidr})
    assert any(f"network.vpcCidr: got '{cidr}'" in p and "100.64.0.0/10" in p for p in problems), problems


@pytest.mark.parametrize("cidr", ["10.1.0.0/16", "172.16.0.0/16", "192.168.0.0/16", "100.64.0.0/16", "198.19.0.0/16"])
def test_documented_ranges_are_accepted(cidr: str) -> None:
    assert settings_with({"vpcCidr": cidr}).network.vpc_cidr == cidr


def test_a_block_larger_than_a_16_points_at_secondary_blocks_not_at_itself() -> None:
    problems = problems_with({"vpcCidr": "10.0.0.0/8"})
    message = next(p for p in problems if "network.vpcCidr" in p)
    assert "a /16 to /28 block" in message and "secondaryVpcCidrs" in message


def test_secondary_blocks_are_checked_like_the_primary_and_may_not_overlap() -> None:
    problems = problems_with(
        {"vpcCidr": "10.0.0.0/16", "secondaryVpcCidrs": ["8.8.0.0/16", "10.0.128.0/17", "100.64.0.0/12"]}
    )
    text = "\n".join(problems)
    assert "network.secondaryVpcCidrs[0]: got '8.8.0.0/16'" in text
    assert "network.secondaryVpcCidrs[1]: got '10.0.128.0/17'" in text and "apart from" in text
    assert "network.secondaryVpcCidrs[2]: got '100.64.0.0/12'" in text and "/16 to /28" in text


def test_more_blocks_than_the_default_quota_warn_with_the_quota_request() -> None:
    blocks = [f"100.{64 + i}.0.0/16" for i in range(5)]
    warnings = [str(w) for w in settings_warnings(settings_with({"secondaryVpcCidrs": blocks}))]
    assert any("6 VPC CIDR blocks" in w and "--desired-value 6" in w for w in warnings), warnings
    assert not [w for w in settings_warnings(settings_with({"secondaryVpcCidrs": blocks[:4]})) if "VPC CIDR" in str(w)]


@pytest.mark.parametrize(
    ("primary", "secondary", "why"),
    [
        ("10.0.0.0/16", "172.20.0.0/16", "another RFC 1918 range"),
        ("192.168.0.0/16", "10.5.0.0/16", "another RFC 1918 range"),
        ("10.0.0.0/16", "198.19.0.0/16", "198.19.0.0/16 blocks cannot join"),
        ("100.64.0.0/16", "10.0.0.0/16", "outside RFC 1918"),
        ("172.20.0.0/16", "172.31.0.0/16", "172.31.0.0/16 blocks cannot join"),
        ("10.1.0.0/16", "10.0.0.0/16", "inside 10.0.0.0/15"),
    ],
)
def test_blocks_ec2_would_not_associate_are_refused(primary: str, secondary: str, why: str) -> None:
    problems = problems_with({"vpcCidr": primary, "secondaryVpcCidrs": [secondary]})
    [message] = [p for p in problems if "secondaryVpcCidrs[0]" in p]
    assert why in message and "use a block of 100.64.0.0/10" in message


@pytest.mark.parametrize(
    ("primary", "secondary"),
    [
        ("10.72.0.0/16", "10.73.0.0/16"),
        ("10.72.0.0/16", "100.64.0.0/16"),
        ("172.20.0.0/16", "100.127.0.0/16"),
        ("198.19.0.0/16", "100.64.0.0/16"),
        ("100.64.0.0/16", "100.65.0.0/16"),
    ],
)
def test_blocks_ec2_associates_are_accepted(primary: str, secondary: str) -> None:
    settings = settings_with({"vpcCidr": primary, "secondaryVpcCidrs": [secondary]})
    assert settings.network.secondary_vpc_cidrs == (secondary,)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        ({"privateSubnetIds": ["subnet-0aaaaaaaaaaaaaaa1", "subnet-0aaaaaaaaaaaaaaa1"]}, "privateSubnetIds[1]"),
        ({"publicSubnetIds": ["subnet-0aaaaaaaaaaaaaaa2"]}, "publicSubnetIds[0]"),
        ({"gpuSubnetIds": {"us-east-1-dfw-2a": ["subnet-0ccccccccccccccc1"] * 2}}, "gpuSubnetIds.us-east-1-dfw-2a[1]"),
    ],
)
def test_a_subnet_listed_twice_is_refused_by_its_key(change: dict[str, Any], key: str) -> None:
    config = copy.deepcopy(stack_config("gb200-x36"))
    config["ultraserver-eks:network"].update(change)
    with pytest.raises(ConfigError) as info:
        parse_settings(config, stack="gb200-x36")
    found = [p for p in info.value.items if p.key == f"ultraserver-eks:network.{key}"]
    assert found and found[0].allowed == "each subnet once across privateSubnetIds, publicSubnetIds and gpuSubnetIds"
    assert "node group" not in found[0].fix


def test_a_gpu_zone_listed_with_no_subnet_is_refused_by_its_key() -> None:
    # Found by tests/config/test_mutations.py: the empty list passed the settings and was refused only by the node
    # group's argument check, under an internal name (GpuNodeGroupArgs.subnet_ids) instead of the stack key.
    with pytest.raises(ConfigError) as info:
        settings_with({"gpuSubnetIds": {"us-east-1-dfw-2a": []}}, stack="gb200-x36")
    (problem,) = info.value.items
    assert problem.key == "ultraserver-eks:network.gpuSubnetIds.us-east-1-dfw-2a"
    assert "one subnet or more" in problem.allowed and "subnet-" in problem.fix
