"""The rehearsal places Kueue's Workloads by the plan's Topology, and fails a level no GPU node carries."""

from __future__ import annotations

import copy
from datetime import datetime
from typing import Any

from helpers.stacks import ROOT, stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.offline.engine import Plan
from ultraserver.offline.value_placement import TOPOLOGY
from ultraserver.rehearse.reclaim import job_objects
from ultraserver.rehearse.report import format_rehearsal
from ultraserver.rehearse.run import build, default_moment, rehearse, stack_plan
from ultraserver.rehearse.topology import levels_of
from ultraserver.verify.expect import expectation

MISSING_LEVEL = "topology.k8s.aws/network-node-layer-1"


def _x72() -> tuple[Any, datetime, Plan]:
    settings = parse_settings(stack_config("gb200-x72"))
    moment = default_moment(expectation(settings))
    return settings, moment, stack_plan(ROOT, "gb200-x72", settings, moment)


def _with_levels(plan: Plan, levels: list[str]) -> Plan:
    changed = copy.deepcopy(plan)
    (topology,) = changed.of_type(TOPOLOGY)
    topology.inputs["spec"]["levels"] = [{"nodeLabel": label} for label in levels]
    return changed


def test_the_workload_is_placed_on_the_plans_topology_levels_read_from_the_nodes() -> None:
    settings, moment, plan = _x72()
    planned = [level["nodeLabel"] for level in plan.of_type(TOPOLOGY)[0].inputs["spec"]["levels"]]
    # A Topology of two levels (a toolkit change): the Workload follows it, not a constant of the rehearsal.
    for levels in (planned, planned[1:]):
        cluster, _ = build(settings, _with_levels(plan, levels), moment, ["reclaim"])
        assert levels_of(cluster.objects) == tuple(levels)
        nodes = cluster.running_job
        (workload,) = [o for o in job_objects(nodes, "q", moment, levels) if o["kind"] == "Workload"]
        (assigned,) = workload["status"]["admission"]["podSetAssignments"]
        topology = assigned["topologyAssignment"]
        assert topology["levels"] == levels
        values = topology["slices"][0]["valuesPerLevel"]
        for level, value in zip(levels[:-1], values[:-1], strict=True):
            assert value == {"universal": nodes[0].labels()[level]}
        assert values[-1] == {"individual": {"roots": [n.labels()[levels[-1]] for n in nodes]}}


def test_a_healthy_stack_passes_the_topology_stage() -> None:
    settings, moment, plan = _x72()
    rehearsal = rehearse(ROOT, "gb200-x72", settings, [], moment, plan)
    stage = next(s for s in rehearsal.stages if s.name == "kueue topology")
    assert stage.code == 0 and "18 node(s) carry every level" in stage.output, stage.output


def test_a_topology_level_no_gpu_node_carries_fails_the_rehearsal() -> None:
    settings, moment, plan = _x72()
    planned = [level["nodeLabel"] for level in plan.of_type(TOPOLOGY)[0].inputs["spec"]["levels"]]
    broken = _with_levels(plan, [MISSING_LEVEL, *planned])
    rehearsal = rehearse(ROOT, "gb200-x72", settings, [], moment, broken)
    assert rehearsal.code == 1, format_rehearsal(rehearsal)
    stage = next(s for s in rehearsal.stages if s.name == "kueue topology")
    assert stage.code == 1
    assert f"level {MISSING_LEVEL}: 18 of 18 node(s)" in stage.output and "fix:" in stage.output
