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
