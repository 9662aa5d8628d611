"""IPv4 ranges a new VPC may use, and the ranges the toolkit draws extra VPC CIDR blocks from.

Checked 2026-11-25.

- EKS (awsdocs/amazon-eks-user-guide latest/ug/networking/network-reqs.adoc, "VPC requirements and
  considerations", commit f60041409f8255b59682a2ca39382a2278e0e38b): when the VPC lacks addresses, associate
  additional CIDR blocks with it; nodes can use a new block at once, the control plane recognises it after a
  reconciliation of up to one hour.
- Amazon VPC User Guide, "VPC CIDR blocks" (https://docs.aws.amazon.com/vpc/latest/userguide/vpc-cidr-blocks.html):
  IPv4 blocks are /16 to /28; AWS recommends the RFC 1918 private ranges.
- The shared address space 100.64.0.0/10 (RFC 6598) and 198.19.0.0/16 are the non-RFC 1918 ranges EKS names for
  additional VPC CIDR blocks (AWS What's New 2018-10, "Amazon EKS now supports additional VPC CIDR blocks",
  https://aws.amazon.com/about-aws/whats-new/2018/10/amazon-eks-now-supports-additional-vpc-cidr-blocks/).
  The VPC guide also lets a VPC hold publicly routable blocks; the toolkit refuses them: a VPC that claims
  someone else's internet addresses can no longer reach those hosts, and nothing here needs them.
"""

from __future__ import annotations

import ipaddress

RFC1918 = ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
"""Private IPv4 ranges (RFC 1918)."""
SHARED_ADDRESS_SPACE = "100.64.0.0/10"
"""RFC 6598 shared address space: 64 /16 blocks, the toolkit's source of extra VPC CIDR blocks."""
EKS_EXTRA_RANGE = "198.19.0.0/16"
"""The other non-RFC 1918 range EKS documents for additional VPC CIDR blocks."""
VPC_RANGES = (*RFC1918, SHARED_ADDRESS_SPACE, EKS_EXTRA_RANGE)
"""Every range a VPC CIDR block of ours may come from."""


def in_vpc_ranges(cidr: str) -> bool:
    """Whether an IPv4 block lies wholly inside one of VPC_RANGES."""
    net = ipaddress.ip_network(cidr)
    return net.version == 4 and any(net.subnet_of(ipaddress.IPv4Network(r)) for r in VPC_RANGES)
