"""Every physical AWS and Kubernetes name the program derives from the settings, checked against its limit.

A cluster name that fits EKS's 100 characters can still overflow a derived 63- or 64-character name, so the
checks compute each name as the components build it (resources/platform.py, cluster.py, gpu_node_group.py,
node_role.py, network.py, helm_release.py, imex_check.py) plus the suffix Pulumi's auto-naming or the
provider's name_prefix adds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ultraserver.config.blocks import standby_groups
from ultraserver.facts.aws import limits
from ultraserver.facts.pins import charts

if TYPE_CHECKING:
    from ultraserver.config.gpu_model import GpuNodeGroupSettings
    from ultraserver.config.model import Settings
from ultraserver.problems import Problem

HELM_RELEASES = (charts.GPU_OPERATOR, charts.DRA_DRIVER, charts.EFA_DEVICE_PLUGIN)
"""Helm release names: resources/helm_release.py names each release after its chart."""


def derived_names(s: Settings) -> list[tuple[str, str, limits.Limit, int]]:
    """(stack key, name, limit, physical length) of every derived name."""
    c = s.cluster.name
    at = f"{s.project}:cluster.name"
    names: list[tuple[str, str, limits.Limit, int]] = [
        # pulumi-eks: ServiceRole(`${name}-eksRole`) creates aws.iam.Role(`${name}-role`), auto-named
        # (pulumi/pulumi-eks nodejs/eks/cluster.ts and servicerole.ts; the "-role" suffix is UNVERIFIED).
        (at, f"{c}-eksRole-role", limits.IAM_ROLE_NAME, limits.autonamed(f"{c}-eksRole-role")),
        (at, f"{c}-system", limits.IAM_ROLE_NAME, limits.autonamed(f"{c}-system")),
        (at, f"{c}-system", limits.LAUNCH_TEMPLATE_NAME, limits.autonamed(f"{c}-system")),
        (at, f"{c}-system-", limits.NODE_GROUP_NAME_PREFIX, len(f"{c}-system-")),
        (at, f"{c}-net-efa", limits.SECURITY_GROUP_NAME, limits.autonamed(f"{c}-net-efa")),
    ]
    for index, group in enumerate(s.gpu_node_groups):
        where = f"{s.project}:gpuNodeGroups[{index}].name"
        for position, ng in enumerate(group.node_group_names):
            for base in _aws_bases(c, group, position, ng):
                names += _group_names(where, base, group.mode)
            if s.imex_check.enabled:
                names.append((where, ng, limits.IMEX_TARGET_NAME, len(ng)))
    for release in HELM_RELEASES:
        names.append((f"{s.project}:kubernetes", release, limits.HELM_RELEASE_NAME, len(release)))
    return names


def _aws_bases(cluster: str, group: GpuNodeGroupSettings, position: int, ng: str) -> list[str]:
    """Resource names of one node group: ``<cluster>-<group>``, or one per block under ``handover: standby``."""
    if group.handover == "standby" and group.capacity_blocks:
        return [f"{cluster}-{standby.name}" for standby in standby_groups(group, position, ng, None)]
    return [f"{cluster}-{ng}"]


def _group_names(where: str, base: str, mode: str) -> list[tuple[str, str, limits.Limit, int]]:
    """The derived AWS names of one node group resource ``base``."""
    names = [
        (where, f"{base}-node", limits.IAM_ROLE_NAME, limits.autonamed(f"{base}-node")),
        (where, base, limits.LAUNCH_TEMPLATE_NAME, limits.autonamed(base)),
    ]
    if mode == "managed":
        names.append((where, base, limits.NODE_GROUP_NAME, limits.autonamed(base)))
    else:
        names.append((where, base, limits.ASG_NAME, limits.autonamed(base)))
        names.append((where, f"{base}-node", limits.INSTANCE_PROFILE_NAME, limits.autonamed(f"{base}-node")))
    return names


def name_problems(s: Settings) -> list[Problem]:
    """One problem per derived name over its limit."""
    found: list[Problem] = []
    worst: dict[str, int] = {}
    for key, name, limit, length in sorted(derived_names(s), key=lambda n: n[2].maximum - n[3]):
        # One problem per stack key: the name that overflows most (shortening it fixes the others).
        if limits.over(limit, length) and key not in worst:
            worst[key] = length
            found.append(
                Problem(
                    key,
                    name,
                    f"a name whose derived {limit.what} fits {limit.maximum} characters (here {length} with the "
                    f"suffix AWS or Pulumi adds; {limit.source})",
                    f"shorten the name by {length - limit.maximum} characters",
                )
            )
    return found
