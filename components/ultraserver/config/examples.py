"""Placeholder values of the shipped example stacks, which a real stack must replace.

A stack copied from stacks/ that still holds them plans fine offline but fails at deploy time (no such
account or reservation, an API endpoint nobody can reach), so ``ultraserver plan`` warns about them without failing.
"""

from __future__ import annotations

from ultraserver.config.model import Settings
from ultraserver.facts.aws import network
from ultraserver.problems import WARNING, Problem

EXAMPLE_ACCOUNT_ID = "111122223333"
"""The account ID AWS documentation uses in examples (and the shipped stacks' ARNs)."""
EXAMPLE_RESERVATION_IDS = frozenset(
    {
        "cr-0123456789abcdef0",
        "cr-0fedcba9876543210",
        "cr-0a00000000000000a",
        "cr-0b00000000000000b",
        "cr-0c00000000000000c",
        "cr-0d00000000000000d",
    }
)
"""Capacity reservation IDs of the shipped stacks (a test keeps this list complete)."""


def example_value_warnings(s: Settings) -> list[Problem]:
    """A warning for every example account ID, reservation ID or documentation address range still in the stack."""
    found = documentation_cidr_warnings(s)
    for index, arn in enumerate(s.cluster.admin_principal_arns):
        if f":{EXAMPLE_ACCOUNT_ID}:" in arn:
            found.append(_warning(f"{s.project}:cluster.adminPrincipalArns[{index}]", arn, "your account's IAM ARN"))
    for index, group in enumerate(s.gpu_node_groups):
        at = f"{s.project}:gpuNodeGroups[{index}]"
        if f":{EXAMPLE_ACCOUNT_ID}:" in group.capacity_reservation_resource_group_arn:
            found.append(
                _warning(
                    f"{at}.capacityReservationResourceGroupArn",
                    group.capacity_reservation_resource_group_arn,
                    "your resource group's ARN",
                )
            )
        for b, block in enumerate(group.blocks):
            key = (
                f"{at}.capacityBlocks[{b}].capacityReservationIds"
                if group.capacity_blocks
                else (f"{at}.capacityReservationIds")
            )
            for n, rid in enumerate(block.reservation_ids):
                if rid in EXAMPLE_RESERVATION_IDS:
                    found.append(_warning(f"{key}[{n}]", rid, "your capacity block's cr-... id"))
    return found


def documentation_cidr_warnings(s: Settings) -> list[Problem]:
    """The API endpoint's and the deployer's CIDRs in a documentation range (RFC 5737, RFC 3849): the shipped stacks'
    203.0.113.0/24 builds the cluster (about 15 minutes) and then nobody reaches its API."""
    lists = (
        ("cluster.endpointPublicAccessCidrs", s.cluster.public_access_cidrs, "the deployer's public CIDRs"),
        ("cluster.deployerCidrs", s.cluster.deployer_cidrs, "the runner's CIDRs in the VPC"),
    )
    return [
        _warning(f"{s.project}:{field}[{index}]", cidr, f"{wanted}, not a documentation range")
        for field, cidrs, wanted in lists
        for index, cidr in enumerate(cidrs)
        if network.in_documentation_range(cidr)
    ]


def _warning(key: str, value: str, wanted: str) -> Problem:
    return Problem(
        key,
        value,
        f"{wanted} (this is the shipped example's value)",
        "replace it before `pulumi up`; the offline plan works with it, AWS will not",
        WARNING,
    )
