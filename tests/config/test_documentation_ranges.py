"""Documentation address ranges (RFC 5737, RFC 3849) in the endpoint's or the deployer's CIDRs warn like the other
shipped placeholders: nobody reaches an API endpoint limited to them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.stacks import stack_config
from ultraserver.config.examples import example_value_warnings
from ultraserver.config.settings import parse_settings
from ultraserver.facts.aws.network import in_documentation_range
from ultraserver.problems import WARNING


def warnings_with(**cluster: Any) -> dict[str, str]:
    config = stack_config("gb200-x72")
    config["ultraserver-eks:cluster"] = json.dumps({**config["ultraserver-eks:cluster"], **cluster})
    found = example_value_warnings(
        parse_settings({k: v if isinstance(v, str) else json.dumps(v) for k, v in config.items()})
    )
    assert {p.level for p in found} == {WARNING}
    return {p.key: str(p.value) for p in found if "Cidrs" in p.key}


@pytest.mark.parametrize("cidr", ["192.0.2.0/24", "198.51.100.7/32", "203.0.113.0/25", "2001:db8:1::/48"])
def test_each_documentation_range_warns_in_the_endpoint_cidrs(cidr: str) -> None:
    assert warnings_with(endpointPublicAccessCidrs=["198.18.0.0/24", cidr]) == {
        "ultraserver-eks:cluster.endpointPublicAccessCidrs[1]": cidr
    }


def test_a_documentation_range_warns_in_the_deployer_cidrs() -> None:
    found = warnings_with(endpointPublicAccessCidrs=["198.18.0.0/24"], deployerCidrs=["192.0.2.0/28"])
    assert found == {"ultraserver-eks:cluster.deployerCidrs[0]": "192.0.2.0/28"}


@pytest.mark.parametrize("cidr", ["203.0.112.0/24", "198.51.101.0/24", "10.0.0.0/8", "2001:db9::/32"])
def test_neighbouring_ranges_are_real_addresses(cidr: str) -> None:
    assert not in_documentation_range(cidr)


@pytest.mark.parametrize("cidr", ["203.0.0.0/16", "198.0.0.0/8", "0.0.0.0/0", "::/0", "2001::/16"])
def test_a_range_that_merely_holds_a_documentation_block_is_real_addresses(cidr: str) -> None:
    """Containment, not overlap: 0.0.0.0/0 holds 203.0.113.0/24 but is not the shipped example's value."""
    assert not in_documentation_range(cidr)


def test_the_whole_internet_asked_for_is_not_called_the_example_value() -> None:
    found = warnings_with(endpointPublicAccessCidrs=["0.0.0.0/0", "::/0"], allowPublicEndpointFromAnywhere=True)
    assert found == {}
