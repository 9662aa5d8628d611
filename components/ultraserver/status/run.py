"""``ultraserver status``: read the cluster once and EC2 per group, then judge every UltraServer of the stack.

Per GPU group: the block current at ``now`` (``facts.capacity.capacity_blocks.current_block``); one UltraServer per
reservation of that block, matched to the node group of the same position (``<name>`` or ``<name>-<n>``). A group
over a capacity-reservation resource group has no reservation ids in the stack; its members are listed through
Resource Groups and judged against the one node group.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.settings import Settings
from ultraserver.config.views import node_group_names
from ultraserver.facts.capacity.capacity_blocks import current_block
from ultraserver.preflight.capacity import resource_group_reservation_ids
from ultraserver.preflight.clients import ApiFailure, PreflightClients
from ultraserver.problems import Problem, blocking
from ultraserver.status.aws import NOT_FOUND, Reservation, combined, read_reservations
from ultraserver.status.cluster import ClusterSide, read_cluster
from ultraserver.status.judge import Limits, UltraServerStatus, judge, stale_problems
from ultraserver.verify.acceptance import ultraserver_checks
from ultraserver.verify.clients import ClusterReader
from ultraserver.verify.expect import expectation


@dataclass(frozen=True)
class StatusReport:
    """Every UltraServer's status, and the problems of whole groups (stale blocks, AWS calls refused)."""

    ultraservers: tuple[UltraServerStatus, ...]
    problems: tuple[Problem, ...] = field(default=())
    cluster_unread: str = ""
    """Why the Kubernetes API could not be read ('' when it was): the report then holds the AWS side only."""

    @property
    def failed(self) -> bool:
        """Any error-level problem."""
        return bool(blocking([*self.problems, *(p for u in self.ultraservers for p in u.problems)]))


def run_status(
    settings: Settings, clients: PreflightClients, reader: ClusterReader | str, limits: Limits
) -> StatusReport:
    """Judge every UltraServer of the stack. Raises PreflightAccessError when AWS cannot be asked at all.

    ``reader`` is the cluster, or why there is none (no usable kubeconfig). Without the cluster (or when its API
    does not answer) the AWS side is still judged: reservations, blocks, interconnect, the end of each block.
    """
    expected = expectation(settings)
    sides: dict[str, ClusterSide] | None = None
    unread = reader if isinstance(reader, str) else ""
    if not isinstance(reader, str):
        checks = {g.name: ultraserver_checks(expected, g.name) for g in expected.groups}
        sides, unread = read_cluster(reader, expected.groups, checks, limits.now)
    rows: list[UltraServerStatus] = []
    problems: list[Problem] = []
    for number, group in enumerate(settings.gpu_node_groups):
        key = f"gpuNodeGroups[{number}]"
        try:
            group_rows, group_problems = _group_status(group, key, sides, clients, limits)
        except ApiFailure as exc:
            problems.append(Problem(f"{group.name}: AWS", str(exc), "an answer from EC2", exc.fix))
            continue
        rows += group_rows
        problems += group_problems
    return StatusReport(tuple(rows), tuple(problems), unread)


def _group_status(
    group: GpuNodeGroupSettings,
    key: str,
    sides: Mapping[str, ClusterSide] | None,
    clients: PreflightClients,
    limits: Limits,
) -> tuple[list[UltraServerStatus], list[Problem]]:
    blocks = group.blocks
    index = current_block(blocks, limits.now)
    names = node_group_names(group)
    if group.grouped:
        # One node group over the fleet: its nodes cannot be told apart by reservation, so it is judged as one.
        ids = resource_group_reservation_ids(group.capacity_reservation_resource_group_arn, clients.resource_groups)
        found = read_reservations(ids, clients.ec2)
        pairs = [(combined([found.get(i, Reservation(i, NOT_FOUND)) for i in ids]), names[0])]
    else:
        ids = list(blocks[index].reservation_ids)
        found = read_reservations(ids, clients.ec2)
        pairs = [(found.get(i, Reservation(i, NOT_FOUND)), name) for i, name in zip(ids, names, strict=False)]
    rows = []
    for reservation, node_group in pairs:
        side = None if sides is None else sides[node_group]
        switches = group.handover != "standby"
        rows.append(judge(group.name, node_group, blocks, index, reservation, side, limits, key, switches))
    others = [cr_id for i, b in enumerate(blocks) if i != index for cr_id in b.reservation_ids]
    found = read_reservations(others, clients.ec2, with_blocks=False) if others else {}
    return rows, stale_problems(group.name, key, blocks, index, found)
