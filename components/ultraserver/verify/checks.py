"""The checks of ``ultraserver verify``: one verdict per UltraServer and per check, with evidence and a fix.

A failed check carries ``Problem``s (which node or job, what was found, what is expected, the fix). A check that
could not read what it needs fails too, with the API error as evidence: nothing is ever skipped as "passed".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import datetime
from typing import Any

from ultraserver.facts.hardware.devices import KUBELET_PLUGIN_SELECTOR
from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL
from ultraserver.facts.pins import gpu_operator
from ultraserver.verify.acceptance import stack_acceptance
from ultraserver.verify.clients import ClusterError, ClusterReader, ReadOnce
from ultraserver.verify.expect import StackExpectation
from ultraserver.verify.fabric import efa_verdict, nvlink_verdicts
from ultraserver.verify.nccl_check import nccl_verdict
from ultraserver.verify.node_facts import device_class_verdict, node_fact_verdicts
from ultraserver.verify.resource_slices import resource_slice_verdict
from ultraserver.verify.verdict import (
    ACROSS,
    CLUSTER,
    COVERAGE,
    DEVICE_CLASSES,
    EFA,
    FLEET,
    NCCL,
    NODE_FACTS,
    NVLINK,
    RESOURCE_SLICES,
    Verdict,
    api_problem,
)

NOT_JUDGED = "not judged: the Kubernetes API did not answer"
OUTSIDE_WINDOWS = "not judged: no full-size window (block start + join grace to the scale-down)"


def _read(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except ClusterError as err:
        return err


def planned_checks(expected: StackExpectation) -> list[tuple[str, str]]:
    """(UltraServer, check) pairs a run judges, as known before reading the cluster."""
    pairs = [(CLUSTER, DEVICE_CLASSES)]
    for group in expected.groups:
        pairs.append((group.name, FLEET if group.fleet else NODE_FACTS))
        if group.mode.dra:
            pairs.append((group.name, RESOURCE_SLICES))
        for index, _ in enumerate(group.nvlink_jobs, start=1):
            pairs.append((group.name if len(group.nvlink_jobs) == 1 else f"{group.name}#{index}", NVLINK))
        if group.fleet and group.nvlink_jobs:
            pairs.append((group.name, COVERAGE))
    if expected.efa_job:
        pairs.append((ACROSS, EFA))
    pairs += [(group, NCCL) for group, _ in expected.nccl_jobs]
    return pairs


def outside_windows(expected: StackExpectation, at: datetime) -> tuple[StackExpectation, list[Verdict]]:
    """What should run at ``at``, and a passing verdict for each check of the groups no block window holds then:
    they are at 0 nodes on purpose (before the block, in its join grace, after its scale-down), as the drift check
    and status say at the same moment. The EFA check is left out when any group it spans is."""
    idle = {g.name for g in expected.groups if not g.running(at)}
    if not idle:
        return expected, []
    efa_idle = bool(idle & set(expected.efa_node_groups))

    def part(wanted: bool) -> StackExpectation:
        return replace(
            expected,
            groups=tuple(g for g in expected.groups if (g.name in idle) == wanted),
            nccl_jobs=tuple(j for j in expected.nccl_jobs if (j[0] in idle) == wanted),
            efa_job=expected.efa_job if efa_idle == wanted else "",
        )

    evidence = (
        f"{OUTSIDE_WINDOWS} of the stack holds {at:%Y-%m-%dT%H:%MZ}: the group need not run now (the drift check "
        "skips it too; `ultraserver status` shows its blocks)"
    )
    return part(False), [Verdict(u, c, evidence) for u, c in planned_checks(part(True)) if u != CLUSTER]


def run_checks(
    reader: ClusterReader, expected: StackExpectation, node_facts_only: bool = False, at: datetime | None = None
) -> list[Verdict]:
    """Every check of the stack (at ``at``: of the groups a block window holds then, the others not judged). When
    the API cannot even list nodes, each planned check fails with that error."""
    expected, idle = outside_windows(expected, at) if at is not None else (expected, [])
    return run_checks_now(reader, expected, node_facts_only) + idle


def run_checks_now(reader: ClusterReader, expected: StackExpectation, node_facts_only: bool) -> list[Verdict]:
    """Every check of ``expected``'s groups."""
    try:
        nodes = reader.nodes()
    except ClusterError as err:
        problem = api_problem("nodes", err)
        return [Verdict(u, c, NOT_JUDGED, (problem,)) for u, c in planned_checks(expected)]
    plugin_pods = _read(lambda: reader.pods(expected.dra_namespace, KUBELET_PLUGIN_SELECTOR))
    operands = expected.gpu_operands
    operand_pods = (
        _read(lambda: reader.pods(expected.gpu_operator_namespace, gpu_operator.OPERAND_SELECTOR)) if operands else None
    )
    verdicts = [device_class_verdict(expected.device_classes, _read(reader.device_classes))]
    dra_groups = [g for g in expected.groups if g.mode.dra]
    slices = _read(reader.resource_slices) if dra_groups else []
    for group in expected.groups:
        verdicts.extend(node_fact_verdicts(group, nodes, plugin_pods, operand_pods, operands))
        if group.mode.dra:
            verdicts.append(resource_slice_verdict(group, nodes, slices))
    if not node_facts_only:
        verdicts.extend(nvlink_verdicts(reader, expected, nodes))
        if expected.efa_job:
            verdicts.append(efa_verdict(reader, expected, {n.name: n.labels.get(CLIQUE_LABEL, "") for n in nodes}))
        for ultraserver, job in expected.nccl_jobs:
            verdicts.append(
                nccl_verdict(reader, ultraserver, job, expected.nccl_namespace, expected.nccl_min_bus_bandwidth_gbytes)
            )
    return verdicts


def judge_cluster(
    reader: ClusterReader, expected: StackExpectation, at: datetime, node_facts_only: bool = False
) -> tuple[list[Verdict], dict[str, Any]]:
    """Every check of the stack and its block-start acceptance at ``at``, judged on one reading of the cluster."""
    once = ReadOnce(reader)
    return run_checks(once, expected, node_facts_only, at), stack_acceptance(once, expected, at)


def unreachable(verdicts: Iterable[Verdict]) -> bool:
    """Whether nothing was judged because the API did not answer (the command's 'API unreachable' exit)."""
    evidence = [v.evidence for v in verdicts if not v.evidence.startswith(OUTSIDE_WINDOWS)]
    return bool(evidence) and all(e == NOT_JUDGED for e in evidence)


def exit_code(verdicts: Iterable[Verdict]) -> int:
    """0 when every check passed, 1 otherwise."""
    return 0 if all(v.passed for v in verdicts) else 1
