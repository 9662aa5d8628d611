"""IPv4 ranges a new VPC may use, the ranges the toolkit draws extra VPC CIDR blocks from, and the VPC CNI's warm
address targets.

Checked 2026-11-25.

- EKS (awsdocs/amazon-eks-user-guide latest/ug/networking/network-reqs.adoc, "VPC requirements and
  considerations", commit f60041409f8255b59682a2ca39382a2278e0e38b): when the VPC lacks addresses, associate
  additional CIDR blocks with it; nodes can use a new block at once, the control plane recognises it after a
  reconciliation of up to one hour.
- Amazon VPC User Guide, "VPC CIDR blocks" (https://docs.aws.amazon.com/vpc/latest/userguide/vpc-cidr-blocks.html;
  awsdocs/amazon-vpc-user-guide doc_source/vpc-cidr-blocks.md @06e98d97, sections "IPv4 VPC CIDR blocks" and
  "IPv4 CIDR block association restrictions"): IPv4 blocks are /16 to /28; AWS recommends the RFC 1918 private
  ranges; which further blocks a VPC may take depends on the blocks it has (``association_restriction``).
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


DOCUMENTATION_RANGES = ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24", "2001:db8::/32")
"""Blocks reserved for documentation, which no host on the internet uses: RFC 5737 section 3, "The blocks
192.0.2.0/24 (TEST-NET-1), 198.51.100.0/24 (TEST-NET-2), and 203.0.113.0/24 (TEST-NET-3) are provided for use in
documentation", and RFC 3849, the IPv6 prefix 2001:DB8::/32 reserved for documentation (both read 2026-11-27). An
endpoint limited to them admits nobody: the shipped stacks use them as placeholders."""


def in_documentation_range(cidr: str) -> bool:
    """Whether ``cidr`` lies inside a block reserved for documentation (a placeholder left in a copied stack); a
    larger range that merely holds one, such as 0.0.0.0/0 or 198.0.0.0/8, is real addresses."""
    return _inside(cidr, DOCUMENTATION_RANGES)


NOT_ON_THE_INTERNET = (
    *RFC1918,
    SHARED_ADDRESS_SPACE,
    "127.0.0.0/8",
    "169.254.0.0/16",
    "::1/128",
    "fc00::/7",
    "fe80::/10",
)
"""Source addresses the public internet never carries (RFC 1918 private, RFC 6598 carrier-grade NAT, loopback and
link-local, IPv6 unique-local RFC 4193): a request to a public endpoint arrives from the sender's public (NAT)
address, so a public-endpoint allow-list of these admits nobody."""


def not_on_the_internet(cidr: str) -> str | None:
    """The range of NOT_ON_THE_INTERNET that holds ``cidr``, or None."""
    net = ipaddress.ip_network(cidr, strict=False)
    return next((r for r in NOT_ON_THE_INTERNET if _inside(cidr, (r,))), None) if net.prefixlen else None


def _inside(cidr: str, ranges: tuple[str, ...]) -> bool:
    net = ipaddress.ip_network(cidr, strict=False)
    return any(
        net.subnet_of(block)  # type: ignore[arg-type]
        for block in map(ipaddress.ip_network, ranges)
        if block.version == net.version
    )


def in_vpc_ranges(cidr: str) -> bool:
    """Whether an IPv4 block lies wholly inside one of VPC_RANGES."""
    net = ipaddress.ip_network(cidr)
    return net.version == 4 and any(net.subnet_of(ipaddress.IPv4Network(r)) for r in VPC_RANGES)


def _family(net: ipaddress.IPv4Network) -> str:
    """The row of the association-restrictions table a block belongs to."""
    for rfc1918 in RFC1918:
        if net.subnet_of(ipaddress.IPv4Network(rfc1918)):
            return rfc1918
    return EKS_EXTRA_RANGE if net.subnet_of(ipaddress.IPv4Network(EKS_EXTRA_RANGE)) else "non-RFC 1918"


def association_restriction(existing: str, added: str) -> str | None:
    """Why EC2 refuses to add block ``added`` to a VPC that has ``existing`` (None when it is permitted).

    The VPC guide's "IPv4 CIDR block association restrictions" table: a VPC keeps to one RFC 1918 range; 198.19.0.0/16
    joins only 100.64.0.0/10 or public blocks; and the two special cases of 172.31.0.0/16 and 10.0.0.0/16.
    """
    have, new = ipaddress.IPv4Network(existing), ipaddress.IPv4Network(added)
    have_family, new_family = _family(have), _family(new)
    if have_family in RFC1918 and new_family in RFC1918 and have_family != new_family:
        return f"{added} is from another RFC 1918 range than {existing}"
    if new_family == EKS_EXTRA_RANGE and have_family != EKS_EXTRA_RANGE:
        return f"198.19.0.0/16 blocks cannot join a VPC with {existing}"
    if new_family in RFC1918 and have_family not in RFC1918:
        return f"RFC 1918 blocks cannot join a VPC whose block {existing} is outside RFC 1918"
    if have_family == "172.16.0.0/12" and new.subnet_of(ipaddress.IPv4Network("172.31.0.0/16")):
        return "172.31.0.0/16 blocks cannot join a VPC with a 172.16.0.0/12 block"
    if have.subnet_of(ipaddress.IPv4Network("10.0.0.0/15")) and new.subnet_of(ipaddress.IPv4Network("10.0.0.0/16")):
        return f"10.0.0.0/16 blocks cannot join a VPC with {existing} (inside 10.0.0.0/15)"
    return None


# ---------------------------------------------------------------- NAT gateways and Local Zones (checked 2026-11-25)
# - Amazon VPC user guide, "Subnets in AWS Local Zones" (https://docs.aws.amazon.com/vpc/latest/userguide/
#   local-zone.html): "Outbound internet traffic leaves a Local Zone from the Local Zone."; "You must provision public
#   IP addresses for use in a Local Zone. When you allocate addresses, you can specify the location from which the IP
#   address is advertised. We refer to this as a network border group"; Local Zone subnets "follow the same routing
#   rules as Availability Zone subnets, including route tables".
# - AWS Local Zones user guide, "NAT gateway connection in Local Zones" (local-zones-connectivity-nat.html): a NAT
#   gateway in a public subnet of the Local Zone serves its private subnets; "For a list of Local Zones that support
#   NAT gateways, see AWS Local Zones features" (https://aws.amazon.com/about-aws/global-infrastructure/localzones/
#   features/). That page could not be read here: which Local Zones (us-east-1-dfw-2a among them or not) support NAT
#   gateways is UNVERIFIED, so NAT_GATEWAY_LOCAL_ZONES is empty and a stack that asks for one gets a warning.
# - EC2 API reference (botocore 1.44.5, ec2 2016-11-15, CreateNatGateway): "the network border group of the EIPs must
#   match the network border group of the Availability Zone (AZ) that the public NAT gateway is in. If it's not the
#   same, the NAT gateway will fail to launch."
# - A Local Zone's network border group is its name without the zone letter (us-east-1-dfw-2a -> us-east-1-dfw-2): the
#   documented examples agree (AvailabilityZone.GroupName "Local Zones - us-west-2-lax-1"; ProvisionByoipCidr lists
#   the border group "us-east-1-dfw-2"), but no page states it as a rule (unverified; DescribeAvailabilityZones
#   NetworkBorderGroup tells).
NAT_GATEWAY_LOCAL_ZONES: tuple[str, ...] = ()
"""Local Zones the toolkit has verified offer NAT gateways (none yet: the features page was not read)."""
LOCAL_ZONES_FEATURES_URL = "https://aws.amazon.com/about-aws/global-infrastructure/localzones/features/"
NAT_GATEWAY_MODES = ("single", "per-zone")
"""single: one NAT gateway in the first regional zone for every private subnet; per-zone: one per regional zone."""


def network_border_group(zone: str) -> str:
    """The network border group of a Local Zone's addresses: its name without the zone letter (see above)."""
    return zone[:-1]


# How many addresses the VPC CNI holds on each node, which the subnet sizing (config/subnets.py) must cover.
#
# aws/amazon-vpc-cni-k8s README.md (master b52188387, 2026-08-20; read 2026-11-27):
# - ``WARM_ENI_TARGET`` "Default: 1": ipamd keeps "1 elastic network interface and all of its IP addresses available
#   for pod assignment", a whole spare interface of addresses on every node; "If WARM_IP_TARGET is set, then this
#   environment variable is ignored". pulumi-eks sets WARM_ENI_TARGET to 1 unless told otherwise
#   (pulumi/pulumi-eks nodejs/eks/addons/cni-addon.ts:387-390 at v4.3.0).
# - ``MINIMUM_IP_TARGET``: "a target number for a floor on how many total IP addresses are allocated";
# ``WARM_IP_TARGET``
#   "the number of free IP addresses that the ipamd daemon should attempt to keep available"; "It is strongly suggested
#   to set MINIMUM_IP_TARGET when using WARM_IP_TARGET".
# Its docs/eni-and-ip-target.md: "If you plan to run around 10 pods, the advice is to set MINIMUM_IP_TARGET slightly
# higher than that, like 12, and have WARM_IP_TARGET=2"; it also warns that WARM_IP_TARGET adds EC2 calls (throttling)
# for
# clusters with high pod churn. GPU nodes run a fixed set of DaemonSets and few, long jobs (low churn), so the floor
# is the planned pods per GPU node (network.gpuPodsPerNode, which the subnets are sized for) and the warm pool 2: a
# node holds at most its pods plus 2 addresses, inside the sizing's headroom, instead of its pods plus a whole ENI.
WARM_IP_TARGET = 2
"""Free addresses ipamd keeps on a node beyond those in use (the eni-and-ip-target.md advice)."""


def configuration_values(minimum_ips: int) -> dict[str, dict[str, str]]:
    """The vpc-cni add-on's configurationValues: the warm pool by addresses, with ``minimum_ips`` per node from the
    start (the add-on's env values are strings)."""
    return {"env": {"WARM_IP_TARGET": str(WARM_IP_TARGET), "MINIMUM_IP_TARGET": str(minimum_ips)}}
