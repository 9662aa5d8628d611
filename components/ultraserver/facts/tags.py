"""The ``ultraserver.io/*`` tags components write and the policy rules and plan report read.

Policies only see recorded inputs, so facts a rule needs that AWS would not show in the inputs
(which SSM path an AMI came from, the reservation's zone) travel as tags.
"""

AMI_RELEASE = "ultraserver.io/ami-release"
"""Pinned AMI release (vYYYYMMDD) or "recommended"."""
AMI_SSM_PARAMETER = "ultraserver.io/ami-ssm-parameter"
"""SSM parameter the launch template's image id was read from."""
EFA_LAYOUT = "ultraserver.io/efa-layout"
"""EFA preset name, or "custom"."""
RESERVATION_ZONE = "ultraserver.io/reservation-zone"
"""Zone of the group's capacity reservation."""
UPGRADE_SAFE = "ultraserver.io/upgrade-safe"
"""Set to "true" while a capacity-block group is held at 0 nodes for an upgrade."""
STACK = "ultraserver.io/stack"
"""Pulumi stack that owns the resource."""
PUBLIC_ENDPOINT_FROM_ANYWHERE = "ultraserver.io/public-endpoint-from-anywhere"
"""On the EKS cluster, "true" when the stack set allowPublicEndpointFromAnywhere: the policy honours the same opt-in."""

TOOLKIT_TAG_KEYS: tuple[str, ...] = (
    STACK,
    AMI_RELEASE,
    AMI_SSM_PARAMETER,
    EFA_LAYOUT,
    RESERVATION_ZONE,
    UPGRADE_SAFE,
    "Name",
    "kubernetes.io/cluster/<cluster>",
    "kubernetes.io/role/internal-elb",
)
"""The most tags the toolkit adds to one resource (GPU launch templates and groups; subnets add Name and the
Kubernetes subnet tags); user tags share the 50-tag budget with them."""
