"""Rules of a new VPC's CIDR blocks: ranges EKS documents, AWS block sizes, no overlap, the block quota."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable

from ultraserver.config.model import NetworkSettings
from ultraserver.facts import limits, network
from ultraserver.problems import WARNING, Problem


def vpc_blocks(n: NetworkSettings, key: Callable[[str], str]) -> list[Problem]:
    """Each VPC CIDR block in a range EKS documents, /16 to /28, apart from the others, within the block quota."""
    found = []
    blocks = [("network.vpcCidr", n.vpc_cidr)]
    blocks += [(f"network.secondaryVpcCidrs[{i}]", c) for i, c in enumerate(n.secondary_vpc_cidrs)]
    seen: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for at, cidr in blocks:
        vpc = ipaddress.ip_network(cidr)
        if not network.in_vpc_ranges(cidr):
            allowed = ", ".join(network.VPC_RANGES)
            found.append(Problem(key(at), cidr, f"a block inside {allowed}", "use e.g. 10.0.0.0/16"))
        elif not limits.VPC_PREFIX_LARGEST <= vpc.prefixlen <= limits.VPC_PREFIX_SMALLEST:
            found.append(
                Problem(
                    key(at),
                    cidr,
                    f"a /{limits.VPC_PREFIX_LARGEST} to /{limits.VPC_PREFIX_SMALLEST} block (AWS VPC size limits)",
                    "use a /16; for more addresses add network.secondaryVpcCidrs",
                )
            )
        elif any(vpc.overlaps(other) for other in seen):
            found.append(Problem(key(at), cidr, "a block apart from the VPC's other blocks", "pick another /16"))
        elif why := next(filter(None, (network.association_restriction(str(o), cidr) for o in seen)), None):
            found.append(
                Problem(
                    key(at),
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
                key("network.secondaryVpcCidrs"),
                len(blocks) - 1,
                f"at most {limits.VPC_CIDR_BLOCKS_CEILING - 1} (the most the quota can be raised to)",
                "lower gpuPodsPerNode, or bring existing subnets (vpcId)",
            )
        )
    elif limits.over(quota, len(blocks)):
        found.append(
            Problem(
                key("network.secondaryVpcCidrs"),
                f"{len(blocks)} VPC CIDR blocks",
                f"at most {quota.maximum} by default ({quota.source})",
                "raise the quota: aws service-quotas request-service-quota-increase --service-code vpc "
                f"--quota-code {limits.VPC_CIDR_BLOCKS_QUOTA_CODE} --desired-value {len(blocks)}",
                WARNING,
            )
        )
    return found
