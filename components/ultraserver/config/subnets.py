"""The subnet plan of a new VPC: how many addresses each zone needs and how the VPC CIDR is carved."""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ultraserver.problems import ConfigError

# AWS keeps five addresses of every subnet.
AWS_RESERVED_IPS = 5
# Room for a rolling replacement of every node in the zone.
HEADROOM = 2


@dataclass(frozen=True)
class SubnetPlan:
    """One subnet to create."""

    name: str
    """Resource name suffix, e.g. private-us-east-1a."""
    kind: str
    """public, private (regional) or gpu (the reservation's zone)."""
    zone: str
    """Availability zone or Local Zone."""
    cidr: str
    """IPv4 CIDR block."""


def ips_needed(nodes: int, pods_per_node: int, ips_per_node: int) -> int:
    """Addresses a zone's subnet needs: every node's interfaces and pods, with headroom."""
    return nodes * (pods_per_node + ips_per_node) * HEADROOM + AWS_RESERVED_IPS


def prefix_for(ip_count: int, largest: int = 16, smallest: int = 28) -> int:
    """The longest prefix (smallest subnet) that holds ip_count addresses."""
    return max(largest, min(smallest, 32 - math.ceil(math.log2(max(ip_count, 2)))))


def plan_subnets(
    vpc_cidr: str,
    regional_zones: Sequence[str],
    gpu_ip_needs: Mapping[str, int],
    system_nodes: int,
    pods_per_node: int,
) -> list[SubnetPlan]:
    """Carve the VPC into public, private and GPU subnets, largest first so blocks stay aligned.

    ``gpu_ip_needs`` maps each GPU zone to the addresses its nodes and pods need.
    """
    vpc = ipaddress.ip_network(vpc_cidr)
    private_prefix = min(prefix_for(ips_needed(system_nodes, pods_per_node, 1)), vpc.prefixlen + 3)
    wanted: list[tuple[str, str, str, int]] = []
    for zone, ips in gpu_ip_needs.items():
        wanted.append((f"gpu-{zone}", "gpu", zone, min(prefix_for(ips), 24)))
    for zone in regional_zones:
        wanted.append((f"private-{zone}", "private", zone, private_prefix))
        wanted.append((f"public-{zone}", "public", zone, max(vpc.prefixlen + 4, 24) if vpc.prefixlen <= 20 else 27))
    wanted.sort(key=lambda w: w[3])
    plans: list[SubnetPlan] = []
    cursor = int(vpc.network_address)
    end = int(vpc.broadcast_address) + 1
    for name, kind, zone, prefix in wanted:
        size = 2 ** (32 - prefix)
        cursor = (cursor + size - 1) // size * size
        if cursor + size > end:
            raise ConfigError(
                f"ultraserver-eks:network.vpcCidr: got {vpc_cidr!r}; allowed: a block large enough for "
                f"{len(wanted)} subnets (the GPU subnets alone need {dict(gpu_ip_needs)} addresses); "
                "fix: use a /16 vpcCidr, lower podsPerNode or gpuPodsPerNode, or bring existing subnets (vpcId)"
            )
        plans.append(SubnetPlan(name, kind, zone, str(ipaddress.ip_network((cursor, prefix)))))
        cursor += size
    return plans
