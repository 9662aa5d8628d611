"""Where a new VPC's NAT gateways sit and which route table each private subnet uses: plain data for Network.

``natGateways: single`` puts one NAT gateway in the first regional zone and routes every private subnet through it;
``per-zone`` gives each regional zone its own. Either way a GPU subnet in a Local Zone routes through the first
regional zone's NAT gateway, across the link to the parent region, unless ``localZoneNatGateways`` lists its zone:
that zone then gets a small public subnet holding its own NAT gateway (its Elastic IP in the zone's network border
group) and a route table of its own. Sources: ``facts.aws.network`` (NAT gateways and Local Zones); docs/deploy.md, "GPU
subnets' egress".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ultraserver.config.subnets import SubnetPlan
from ultraserver.facts.aws.network import NAT_GATEWAY_MODES, network_border_group
from ultraserver.problems import ConfigError, Problem


@dataclass(frozen=True)
class NatGatewayPlan:
    """One NAT gateway: its zone, the public subnet it sits in, and the border group of its Elastic IP."""

    zone: str
    subnet: str
    """SubnetPlan.name of its public subnet."""
    border_group: str = ""
    """Network border group of its Elastic IP; empty for a regional zone (the region's own group)."""


@dataclass(frozen=True)
class RouteTablePlan:
    """One private route table: its name, the zone of the NAT gateway its default route uses, its subnets."""

    name: str
    nat_zone: str
    subnets: tuple[str, ...]


@dataclass(frozen=True)
class EgressPlan:
    """Every NAT gateway and private route table of a new VPC."""

    nat_gateways: tuple[NatGatewayPlan, ...]
    route_tables: tuple[RouteTablePlan, ...]
    public_subnets: tuple[str, ...]
    """Subnets routed to the internet gateway: the regional public subnets and the Local Zones' NAT subnets."""


def egress_plan(subnets: Sequence[SubnetPlan], mode: str = "single") -> EgressPlan:
    """NAT gateways and route tables for ``subnets`` (from plan_subnets): ``mode`` single or per-zone; a Local Zone
    with a ``nat`` subnet (plan_subnets' ``nat_zones``) gets its own NAT gateway and route table."""
    if mode not in NAT_GATEWAY_MODES:
        raise ConfigError(
            Problem("nat_gateways", mode, ", ".join(NAT_GATEWAY_MODES), "pick one (stack key network.natGateways)")
        )
    regional = [p.zone for p in subnets if p.kind == "private"]
    nat_subnets = {p.zone: p.name for p in subnets if p.kind == "nat"}
    gateways = [NatGatewayPlan(zone, f"public-{zone}") for zone in (regional if mode == "per-zone" else regional[:1])]
    gateways += [NatGatewayPlan(zone, name, network_border_group(zone)) for zone, name in nat_subnets.items()]
    tables = _route_tables(subnets, regional, nat_subnets, {g.zone for g in gateways})
    public = tuple(p.name for p in subnets if p.kind == "public") + tuple(nat_subnets.values())
    return EgressPlan(tuple(gateways), tuple(tables), public)


def _route_tables(
    subnets: Sequence[SubnetPlan], regional: list[str], nat_subnets: dict[str, str], own: set[str]
) -> list[RouteTablePlan]:
    """A private table per regional zone (through its own NAT gateway, else the first zone's), and one per Local Zone
    that has a NAT gateway of its own."""
    tables = [
        RouteTablePlan(f"private-{zone}", zone if zone in own else regional[0], (f"private-{zone}",))
        for zone in regional
    ]
    gpu_zones = list(dict.fromkeys(p.zone for p in subnets if p.kind == "gpu"))
    through_region = tuple(p.name for p in subnets if p.kind == "gpu" and p.zone not in nat_subnets)
    if through_region:
        # Without a NAT gateway of its own, a Local Zone routes out through the first regional zone's table.
        first = tables[0]
        tables[0] = RouteTablePlan(first.name, first.nat_zone, first.subnets + through_region)
    tables += [
        # Named private-<zone> like the regional tables (gpu-<zone> is the subnet's name).
        RouteTablePlan(f"private-{zone}", zone, tuple(p.name for p in subnets if p.kind == "gpu" and p.zone == zone))
        for zone in gpu_zones
        if zone in nat_subnets
    ]
    return tables
