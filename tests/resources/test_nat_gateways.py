"""NAT gateways of a new VPC per setting: how many, in which zone, and which route table each private and
GPU subnet uses. ``natGateways: single | per-zone``; ``localZoneNatGateways`` gives a GPU Local Zone its own."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers.stacks import ROOT, stack_config
from ultraserver.builders.egress import egress_plan
from ultraserver.config.settings import parse_settings, settings_warnings
from ultraserver.config.subnets import ips_needed, plan_subnets
from ultraserver.offline import Plan, run_plan
from ultraserver.problems import ConfigError

NETWORK = "ultraserver-eks:network"
LZ, REGIONAL = "us-east-1-dfw-2a", ["us-east-1a", "us-east-1b"]
NAT, EIP = "aws:ec2/natGateway:NatGateway", "aws:ec2/eip:Eip"
SUBNET, TABLE = "aws:ec2/subnet:Subnet", "aws:ec2/routeTable:RouteTable"
ASSOCIATION = "aws:ec2/routeTableAssociation:RouteTableAssociation"


def subnets(nat_zones: tuple[str, ...] = ()) -> list[Any]:
    return plan_subnets("10.0.0.0/16", REGIONAL, {LZ: ips_needed(18, 32, 1)}, 4, 110, nat_zones=nat_zones)


def network(**changes: Any) -> dict[str, Any]:
    return {NETWORK: {**stack_config("gb200-x72")[NETWORK], **changes}}


def ids(plan: Plan, kind: str) -> dict[str, Any]:
    return {f"{r.name}-offline-id": r for r in plan.of_type(kind)}


def nat_zone_of_each_subnet(plan: Plan) -> dict[str, str]:
    """Subnet availability zone -> the zone of the NAT gateway its route table sends 0.0.0.0/0 to ('igw': public)."""
    subnets, tables, nats = (ids(plan, kind) for kind in (SUBNET, TABLE, NAT))  # offline ids repeat across types
    found = {}
    for association in plan.of_type(ASSOCIATION):
        subnet, table = subnets[association.inputs["subnetId"]], tables[association.inputs["routeTableId"]]
        route = table.inputs["routes"][0]
        target = nats[route["natGatewayId"]] if "natGatewayId" in route else None
        where = subnets[target.inputs["subnetId"]].inputs["availabilityZone"] if target else "igw"
        found[f"{subnet.inputs['availabilityZone']}:{subnet.name.rsplit('-net-', 1)[1].split('-')[0]}"] = where
    return found


def test_single_puts_one_nat_gateway_in_the_first_regional_zone_for_every_private_subnet() -> None:
    egress = egress_plan(subnets(), "single")
    assert [(g.zone, g.subnet, g.border_group) for g in egress.nat_gateways] == [
        ("us-east-1a", "public-us-east-1a", "")
    ]
    assert {t.name: t.nat_zone for t in egress.route_tables} == {
        "private-us-east-1a": "us-east-1a",
        "private-us-east-1b": "us-east-1a",
    }
    assert f"gpu-{LZ}" in egress.route_tables[0].subnets


def test_per_zone_gives_each_regional_zone_its_nat_and_the_local_zone_still_routes_through_the_first() -> None:
    egress = egress_plan(subnets(), "per-zone")
    assert [g.zone for g in egress.nat_gateways] == REGIONAL
    assert {t.name: t.nat_zone for t in egress.route_tables} == {
        "private-us-east-1a": "us-east-1a",
        "private-us-east-1b": "us-east-1b",
    }


def test_a_local_zone_nat_gets_a_small_public_subnet_in_the_zone_its_border_group_and_its_own_table() -> None:
    plans = subnets((LZ,))
    (nat_subnet,) = [p for p in plans if p.kind == "nat"]
    assert (nat_subnet.name, nat_subnet.zone, nat_subnet.cidr.endswith("/28")) == (f"public-{LZ}", LZ, True)
    # The other subnets keep their ranges: the NAT subnet is placed after them.
    assert [(p.name, p.cidr) for p in plans if p.kind != "nat"] == [(p.name, p.cidr) for p in subnets()]
    egress = egress_plan(plans, "single")
    assert [(g.zone, g.border_group) for g in egress.nat_gateways] == [("us-east-1a", ""), (LZ, "us-east-1-dfw-2")]
    assert {t.name: (t.nat_zone, t.subnets) for t in egress.route_tables}[f"private-{LZ}"] == (LZ, (f"gpu-{LZ}",))
    assert f"gpu-{LZ}" not in egress.route_tables[0].subnets
    assert f"public-{LZ}" in egress.public_subnets


@pytest.mark.parametrize(
    ("changes", "nat_zones", "routes"),
    [
        ({}, ["us-east-1a"], {"us-east-1a": "us-east-1a", "us-east-1b": "us-east-1a", LZ: "us-east-1a"}),
        (
            {"natGateways": "per-zone"},
            ["us-east-1a", "us-east-1b"],
            {"us-east-1a": "us-east-1a", "us-east-1b": "us-east-1b", LZ: "us-east-1a"},
        ),
        (
            {"natGateways": "per-zone", "localZoneNatGateways": [LZ]},
            ["us-east-1a", "us-east-1b", LZ],
            {"us-east-1a": "us-east-1a", "us-east-1b": "us-east-1b", LZ: LZ},
        ),
    ],
)
def test_the_plan_places_nat_gateways_and_routes_per_setting(
    changes: dict[str, Any], nat_zones: list[str], routes: dict[str, str]
) -> None:
    plan = run_plan(ROOT, "gb200-x72", network(**changes))
    placed = sorted(ids(plan, SUBNET)[n.inputs["subnetId"]].inputs["availabilityZone"] for n in plan.of_type(NAT))
    assert placed == sorted(nat_zones)
    # The public table, one per regional zone, and the Local Zone's own when it has a NAT gateway.
    assert len(plan.of_type(TABLE)) == 1 + len(REGIONAL) + (LZ in nat_zones)
    private = {k.split(":")[0]: v for k, v in nat_zone_of_each_subnet(plan).items() if not k.endswith(":public")}
    assert private == routes
    lz_eips = [e for e in plan.of_type(EIP) if e.inputs.get("networkBorderGroup")]
    assert [e.inputs["networkBorderGroup"] for e in lz_eips] == (["us-east-1-dfw-2"] if LZ in nat_zones else [])


def test_a_local_zone_nat_warns_while_unverified_and_refuses_zones_that_are_not_the_stacks_gpu_zones() -> None:
    config = {**stack_config("gb200-x72"), **network(localZoneNatGateways=[LZ])}
    (warning,) = [w for w in settings_warnings(parse_settings(config)) if "localZoneNatGateways" in w.key]
    assert "could not verify" in warning.allowed and "localzones/features" in warning.allowed
    bad = {**stack_config("gb200-x72"), **network(localZoneNatGateways=["us-east-1-chi-2a", "us-east-1a"])}
    with pytest.raises(ConfigError) as info:
        parse_settings(bad)
    text = str(info.value)
    assert "localZoneNatGateways[0]: got 'us-east-1-chi-2a'" in text and "localZoneNatGateways[1]" in text
    assert f"a Local Zone of a GPU node group ({LZ})" in text


def test_a_local_zone_nat_is_refused_with_an_existing_vpc() -> None:
    config = copy.deepcopy(stack_config("gb200-x36"))
    config[NETWORK]["localZoneNatGateways"] = [LZ]
    with pytest.raises(ConfigError, match=r"localZoneNatGateways\[0\].*only for a VPC the stack creates"):
        parse_settings(config)


def test_an_unknown_mode_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match=r"nat_gateways: got 'per-az'; allowed: single, per-zone"):
        egress_plan(subnets(), "per-az")


def test_the_old_single_nat_gateway_key_says_how_to_write_it_now() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config.setdefault("ultraserver-eks:network", {})["singleNatGateway"] = False
    with pytest.raises(ConfigError) as err:
        parse_settings(config)
    assert "network.singleNatGateway: got False" in str(err.value)
    assert "natGateways: per-zone for false" in str(err.value)
