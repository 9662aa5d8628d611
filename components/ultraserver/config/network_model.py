"""The network settings: a new VPC or an existing one, its subnets and its NAT gateways."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictInt

from ultraserver.config.fields import Cidr, Model, SubnetId, Zone, pattern
from ultraserver.facts.aws import aws_ids
from ultraserver.facts.aws import network as network_facts


class NetworkSettings(Model):
    """A new VPC (``vpcId`` empty) or an existing one."""

    vpc_cidr: Cidr = Field(
        "10.0.0.0/16", description="CIDR of a new VPC (/16 to /28; RFC 1918, 100.64.0.0/10 or 198.19.0.0/16)."
    )
    secondary_vpc_cidrs: tuple[Cidr, ...] = Field(
        (),
        description="More CIDR blocks of a new VPC, for GPU subnets beyond one /16 (e.g. [100.64.0.0/16]).",
    )
    availability_zones: tuple[Zone, ...] = Field(
        (), description="Regional zones for the control plane and system nodes (at least two)."
    )
    nat_gateways: Literal[network_facts.NAT_GATEWAY_MODES] = Field(  # type: ignore[valid-type]
        "single",
        description="single (one NAT gateway, cheaper) or per-zone (one per regional zone); docs/deploy.md, "
        "GPU subnets' egress.",
    )
    local_zone_nat_gateways: tuple[Zone, ...] = Field(
        (),
        description="GPU Local Zones that get their own NAT gateway; only zones the AWS Local Zones features page "
        "lists with NAT gateways (docs/deploy.md, GPU subnets' egress).",
    )
    pods_per_node: StrictInt = Field(110, ge=8, le=737, description="Planned pods per system node (subnet sizing).")
    gpu_pods_per_node: StrictInt = Field(32, ge=8, le=737, description="Planned pods per GPU node (subnet sizing).")
    vpc_id: Annotated[str, pattern(aws_ids.VPC_ID, "a VPC id like vpc-0123456789abcdef0", empty=True)] = Field(
        "", description="An existing VPC to use instead of creating one."
    )
    private_subnet_ids: tuple[SubnetId, ...] = Field(
        (), description="Existing private subnets (regional) for the control plane and system nodes."
    )
    public_subnet_ids: tuple[SubnetId, ...] = Field((), description="Existing public subnets for load balancers.")
    gpu_subnet_ids: dict[Zone, tuple[SubnetId, ...]] = Field(
        default_factory=dict, description="Existing GPU subnets by zone, e.g. {us-east-1-dfw-2a: [subnet-...]}."
    )

    @property
    def existing(self) -> bool:
        """Whether the stack uses an existing VPC."""
        return bool(self.vpc_id)
