"""Rules of the network: control-plane zones regional and once each; a new VPC's CIDR blocks in ranges EKS documents,
AWS block sizes, no overlap, the block quota, and no subnet ids; an existing VPC's subnets listed once, two private
ones at least; NAT gateways in Local Zones only in the stack's GPU Local Zones, each flagged while AWS support there is
unverified.

``network_problems`` needs the network settings alone: the stack file's rules and the Network component's argument
check both run it. Rules that need more of the stack (the region, the GPU groups' zones) stay with the stack's rules.
"""

from __future__ import annotations

import ipaddress
from datetime import date

from ultraserver.config.argument_rules import private_subnet_problems
from ultraserver.config.model import Settings, key
from ultraserver.config.network_model import NetworkSettings
from ultraserver.facts.aws import aws_ids, limits, network
from ultraserver.problems import WARNING, Problem


def network_problems(n: NetworkSettings, at: str) -> list[Problem]:
    """Every rule that needs the network settings alone, keyed under ``at`` (a stack file's ``<project>:network``, a
    program's ``NetworkArgs.settings``)."""
    found = _zone_entries(n, at)
    if n.existing:
        return found + _repeated_subnets(n, at) + _private_subnets(n, at)
    return found + _subnets_without_vpc(n, at) + _vpc_blocks(n, at)


def _zone_entries(n: NetworkSettings, at: str) -> list[Problem]:
    """Control-plane zones: regional ones (Local Zones cannot host the EKS control plane), each once."""
    found = []
    for index, zone in enumerate(n.availability_zones):
        if aws_ids.matches(aws_ids.LOCAL_ZONE, zone):
            why = "a regional zone (Local Zones cannot host the EKS control plane)"
        elif n.availability_zones.index(zone) != index:
            why = "each zone once"
        else:
            continue
        found.append(Problem(f"{at}.availabilityZones[{index}]", zone, why, "correct the zone"))
    return found


def _private_subnets(n: NetworkSettings, at: str) -> list[Problem]:
    return private_subnet_problems(n.private_subnet_ids, f"{at}.privateSubnetIds")


def _subnets_without_vpc(n: NetworkSettings, at: str) -> list[Problem]:
    found = [
        Problem(f"{at}.{name}", list(value), "subnet ids only together with vpcId", "set vpcId too")
        for name, value in (("privateSubnetIds", n.private_subnet_ids), ("publicSubnetIds", n.public_subnet_ids))
        if value
    ]
    if n.gpu_subnet_ids:
        found.append(Problem(f"{at}.gpuSubnetIds", dict(n.gpu_subnet_ids), "only together with vpcId", "set vpcId too"))
    return found


def _vpc_blocks(n: NetworkSettings, at: str) -> list[Problem]:
    """Each VPC CIDR block in a range EKS documents, /16 to /28, apart from the others, within the block quota."""
    found = []
    blocks = [(f"{at}.vpcCidr", n.vpc_cidr)]
    blocks += [(f"{at}.secondaryVpcCidrs[{i}]", c) for i, c in enumerate(n.secondary_vpc_cidrs)]
    seen: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for where, cidr in blocks:
        vpc = ipaddress.ip_network(cidr)
        if not network.in_vpc_ranges(cidr):
            allowed = ", ".join(network.VPC_RANGES)
            found.append(Problem(where, cidr, f"a block inside {allowed}", "use e.g. 10.0.0.0/16"))
        elif not limits.VPC_PREFIX_LARGEST <= vpc.prefixlen <= limits.VPC_PREFIX_SMALLEST:
            found.append(
                Problem(
                    where,
                    cidr,
                    f"a /{limits.VPC_PREFIX_LARGEST} to /{limits.VPC_PREFIX_SMALLEST} block (AWS VPC size limits)",
                    "use a /16; for more addresses add network.secondaryVpcCidrs",
                )
            )
        elif any(vpc.overlaps(other) for other in seen):
            found.append(Problem(where, cidr, "a block apart from the VPC's other blocks", "pick another /16"))
        elif why := next(filter(None, (network.association_restriction(str(o), cidr) for o in seen)), None):
            found.append(
                Problem(
                    where,
                    cidr,
                    f"a block EC2 lets this VPC add ({why}; VPC guide, IPv4 CIDR block association restrictions)",
                    "use a block of 100.64.0.0/10, or one of the primary block's own range",
                )
            )
        seen.append(vpc)
    quota = limits.VPC_CIDR_BLOCKS
    if len(blocks) > limits.VPC_CIDR_BLOCKS_CEILING:
        found.append(
            Problem(
                f"{at}.secondaryVpcCidrs",
                len(blocks) - 1,
                f"at most {limits.VPC_CIDR_BLOCKS_CEILING - 1} (the most the quota can be raised to)",
                "lower gpuPodsPerNode, or bring existing subnets (vpcId)",
            )
        )
    elif limits.over(quota, len(blocks)):
        found.append(
            Problem(
                f"{at}.secondaryVpcCidrs",
                f"{len(blocks)} VPC CIDR blocks",
                f"at most {quota.maximum} by default ({quota.source})",
                "raise the quota: aws service-quotas request-service-quota-increase --service-code vpc "
                f"--quota-code {limits.VPC_CIDR_BLOCKS_QUOTA_CODE} --desired-value {len(blocks)}",
                WARNING,
            )
        )
    return found


def local_zone_nats(s: Settings, today: date) -> list[Problem]:
    """Each ``localZoneNatGateways`` entry: a new VPC, once, a Local Zone of a GPU group; warned while unverified."""
    n, found = s.network, []
    gpu_zones = sorted({g.availability_zone for g in s.gpu_node_groups})
    for index, zone in enumerate(n.local_zone_nat_gateways):
        at = key(s, f"network.localZoneNatGateways[{index}]")
        if n.existing:
            found.append(
                Problem(at, zone, "only for a VPC the stack creates", "add it to your own VPC, or remove the entry")
            )
        elif not aws_ids.matches(aws_ids.LOCAL_ZONE, zone) or zone not in gpu_zones:
            allowed = f"a Local Zone of a GPU node group ({', '.join(gpu_zones) or 'none'})"
            found.append(Problem(at, zone, allowed, "list the Local Zone of a gpuNodeGroups entry, or remove it"))
        elif n.local_zone_nat_gateways.index(zone) != index:
            found.append(Problem(at, zone, "each zone once", "remove the duplicate"))
        elif zone not in network.NAT_GATEWAY_LOCAL_ZONES:
            found.append(
                Problem(
                    at,
                    zone,
                    f"a Local Zone with NAT gateways; the toolkit could not verify that {zone} has them (AWS lists "
                    f"them on {network.LOCAL_ZONES_FEATURES_URL}); if it does not, CreateNatGateway fails at deploy",
                    "check the zone on that page before `pulumi up`; remove the entry if it is not listed",
                    WARNING,
                )
            )
    return found


def _repeated_subnets(n: NetworkSettings, at: str) -> list[Problem]:
    """A subnet listed twice: the toolkit tags each listed subnet for its role, so a repeat would tag it twice."""
    seen, found = set(), []
    listed = [("privateSubnetIds", i, v) for i, v in enumerate(n.private_subnet_ids)]
    listed += [("publicSubnetIds", i, v) for i, v in enumerate(n.public_subnet_ids)]
    listed += [(f"gpuSubnetIds.{zone}", i, v) for zone, ids in n.gpu_subnet_ids.items() for i, v in enumerate(ids)]
    for where, index, subnet in listed:
        if subnet in seen:
            found.append(
                Problem(
                    f"{at}.{where}[{index}]",
                    subnet,
                    "each subnet once across privateSubnetIds, publicSubnetIds and gpuSubnetIds",
                    f"remove the repeated {subnet}, or list the subnet you meant",
                )
            )
        seen.add(subnet)
    return found
