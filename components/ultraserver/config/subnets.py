"""The subnet plan of a new VPC: how many addresses each zone needs and how the VPC CIDR blocks are carved.

A subnet lives inside one VPC CIDR block, and a block is at most a /16 (65,536 addresses), so a GPU zone that
needs more gets several subnets, spread over the VPC's secondary CIDR blocks (``network.secondaryVpcCidrs``).
That is how a fleet of 1,000 UltraServers (18,000 nodes) fits one cluster: EKS documents adding CIDR blocks to
the VPC when it runs out of addresses (facts/aws/network.py). Pods keep the VPC CNI default (same subnet as their
node), so no custom networking is needed. The CNI holds the planned pods plus 2 addresses per node instead of a
whole warm ENI (facts/aws/network.py), which is what this sizing assumes.
"""

from __future__ import annotations

import ipaddress
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ultraserver.facts.aws import limits, network
from ultraserver.problems import ConfigError, Problem, call_problems, count, strings

# AWS keeps five addresses of every subnet.
AWS_RESERVED_IPS = 5
# Room for a rolling replacement of every node in the zone.
HEADROOM = 2
# The largest GPU subnet (one whole VPC block) and the smallest (room for one UltraServer's interfaces).
_GPU_LARGEST, _GPU_SMALLEST = limits.VPC_PREFIX_LARGEST, 24


@dataclass(frozen=True)
class SubnetPlan:
    """One subnet to create."""

    name: str
    """Resource name suffix, e.g. private-us-east-1a."""
    kind: str
    """public, private (regional), gpu (the reservation's zone) or nat (a Local Zone's public subnet for its own NAT
    gateway, named public-<zone>; no load-balancer tags)."""
    zone: str
    """Availability zone or Local Zone."""
    cidr: str
    """IPv4 CIDR block."""
    vpc_block: str = ""
    """The VPC CIDR block holding the subnet (a secondary one must be associated before the subnet is made)."""


def ips_needed(nodes: int, pods_per_node: int, ips_per_node: int) -> int:
    """Addresses a zone's subnet needs: every node's interfaces and pods, with headroom.

    ConfigError naming the argument when one is not a whole number >= 0.
    """
    whole = "a whole number >= 0"
    checks = {"nodes": nodes, "pods_per_node": pods_per_node, "ips_per_node": ips_per_node}
    problems = call_problems("ips_needed", {name: (value, count, whole) for name, value in checks.items()})
    if problems:
        raise ConfigError(problems)
    return nodes * (pods_per_node + ips_per_node) * HEADROOM + AWS_RESERVED_IPS


def prefix_for(ip_count: int, largest: int = 16, smallest: int = 28) -> int:
    """The longest prefix (smallest subnet) that holds ip_count addresses."""
    return max(largest, min(smallest, 32 - math.ceil(math.log2(max(ip_count, 2)))))


def gpu_subnet_prefixes(ips: int) -> list[int]:
    """Prefixes of the subnets that together hold a GPU zone's addresses (one unless it needs more than a /16)."""
    prefixes, left = [], ips
    while left > 0:
        prefix = min(prefix_for(left, _GPU_LARGEST), _GPU_SMALLEST)
        prefixes.append(prefix)
        left -= 2 ** (32 - prefix) - AWS_RESERVED_IPS
    return prefixes


def _wanted(
    vpc: ipaddress.IPv4Network | ipaddress.IPv6Network,
    regional_zones: Sequence[str],
    gpu_ip_needs: Mapping[str, int],
    system_nodes: int,
    pods_per_node: int,
    nat_zones: Sequence[str] = (),
) -> list[tuple[str, str, str, int]]:
    """(name, kind, zone, prefix) of every subnet, largest first so blocks stay aligned."""
    private_prefix = min(prefix_for(ips_needed(system_nodes, pods_per_node, 1)), vpc.prefixlen + 3)
    wanted: list[tuple[str, str, str, int]] = []
    for zone, ips in gpu_ip_needs.items():
        for index, prefix in enumerate(gpu_subnet_prefixes(ips)):
            wanted.append((f"gpu-{zone}" + (f"-{index + 1}" if index else ""), "gpu", zone, prefix))
    for zone in regional_zones:
        wanted.append((f"private-{zone}", "private", zone, private_prefix))
        wanted.append((f"public-{zone}", "public", zone, max(vpc.prefixlen + 4, 24) if vpc.prefixlen <= 20 else 27))
    # A NAT gateway needs one address: the smallest subnet AWS allows (/28), placed last so no other subnet moves.
    wanted += [(f"public-{zone}", "nat", zone, limits.VPC_PREFIX_SMALLEST) for zone in nat_zones]
    wanted.sort(key=lambda w: w[3])
    return wanted


def _place(wanted: Sequence[tuple[str, str, str, int]], blocks: Sequence[str]) -> list[SubnetPlan] | None:
    """First fit of each subnet into the blocks in order (primary first), or None when one does not fit."""
    nets = [ipaddress.ip_network(b) for b in blocks]
    cursors = [int(n.network_address) for n in nets]
    plans: list[SubnetPlan] = []
    for name, kind, zone, prefix in wanted:
        size = 2 ** (32 - prefix)
        for i, net in enumerate(nets):
            start = (cursors[i] + size - 1) // size * size
            if start + size <= int(net.broadcast_address) + 1:
                plans.append(SubnetPlan(name, kind, zone, str(ipaddress.ip_network((start, prefix))), blocks[i]))
                cursors[i] = start + size
                break
        else:
            return None
    return plans


def free_blocks(taken: Sequence[str], count: int) -> list[str]:
    """The first ``count`` /16 blocks of the shared address space 100.64.0.0/10 that overlap none of ``taken``."""
    used = [ipaddress.ip_network(t) for t in taken]
    space = ipaddress.IPv4Network(network.SHARED_ADDRESS_SPACE).subnets(new_prefix=limits.VPC_PREFIX_LARGEST)
    return [str(b) for b in space if not any(b.overlaps(u) for u in used)][:count]


def _too_small(vpc_cidr: str, wanted: Sequence[tuple[str, str, str, int]], blocks: Sequence[str]) -> ConfigError:
    """The error for a VPC too small, with a fix that works: the exact secondary blocks to add."""
    most = limits.VPC_CIDR_BLOCKS_CEILING - 1
    for extra in range(1, most + 1):
        more = free_blocks(blocks, extra)
        if len(more) == extra and _place(wanted, [*blocks, *more]) is not None:
            bigger = " (or a /16 vpcCidr)" if ipaddress.ip_network(vpc_cidr).prefixlen > 16 else ""
            fix = f"add network.secondaryVpcCidrs: [{', '.join([*blocks[1:], *more])}]{bigger}"
            break
    else:
        fix = f"lower gpuPodsPerNode, or bring existing subnets (vpcId): {most} extra /16 blocks are not enough"
    return ConfigError(
        Problem(
            "ultraserver-eks:network.vpcCidr",
            vpc_cidr,
            f"blocks large enough for {len(wanted)} subnets of /{wanted[-1][3]} to /{wanted[0][3]} (a subnet is at "
            f"most one /16 block); secondaryVpcCidrs now: {list(blocks[1:])}",
            fix,
        )
    )


def _ipv4_block(value: object) -> bool:
    try:
        return isinstance(value, str) and isinstance(ipaddress.ip_network(value), ipaddress.IPv4Network)
    except ValueError:
        return False


def _needs(value: object) -> bool:
    return isinstance(value, Mapping) and all(isinstance(k, str) and count(v) for k, v in value.items())


def plan_subnets(
    vpc_cidr: str,
    regional_zones: Sequence[str],
    gpu_ip_needs: Mapping[str, int],
    system_nodes: int,
    pods_per_node: int,
    secondary_cidrs: Sequence[str] = (),
    nat_zones: Sequence[str] = (),
) -> list[SubnetPlan]:
    """Carve the VPC's CIDR blocks into public, private and GPU subnets.

    ``gpu_ip_needs`` maps each GPU zone to the addresses its nodes and pods need; a zone that needs more than a
    /16 gets several subnets (``gpu-<zone>``, ``gpu-<zone>-2`` ...). Subnets fill the primary block first, then
    the ``secondary_cidrs`` in order. Each of ``nat_zones`` (Local Zones with their own NAT gateway) gets a /28 public
    subnet ``public-<zone>`` of kind nat.
    """
    problems = call_problems(
        "plan_subnets",
        {
            "vpc_cidr": (vpc_cidr, _ipv4_block, "an IPv4 CIDR block such as '10.0.0.0/16'"),
            "regional_zones": (regional_zones, strings, "a list of zone names"),
            "gpu_ip_needs": (gpu_ip_needs, _needs, "a mapping of zone names to whole numbers >= 0"),
            "system_nodes": (system_nodes, count, "a whole number >= 0"),
            "pods_per_node": (pods_per_node, count, "a whole number >= 0"),
            "secondary_cidrs": (
                secondary_cidrs,
                lambda v: strings(v) and all(map(_ipv4_block, v)),
                "a list of IPv4 CIDR blocks",
            ),
            "nat_zones": (nat_zones, strings, "a list of zone names"),
        },
    )
    if problems:
        raise ConfigError(problems)
    blocks = [vpc_cidr, *secondary_cidrs]
    wanted = _wanted(
        ipaddress.ip_network(vpc_cidr), regional_zones, gpu_ip_needs, system_nodes, pods_per_node, nat_zones
    )
    plans = _place(wanted, blocks)
    if plans is None:
        raise _too_small(vpc_cidr, wanted, blocks)
    return plans
