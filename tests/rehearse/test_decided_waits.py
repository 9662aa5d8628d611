"""When a real-Kueue stage's wait is already decided (rehearse/kueue_reads.py): a failed node with no node free for
Kueue's replacement, which never comes. Nodes as the rehearsal serves them."""

from __future__ import annotations

import copy
from typing import Any

from helpers.stacks import ROOT, stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.incluster import spares
from ultraserver.rehearse.kueue_reads import free_nodes
from ultraserver.rehearse.run import build, default_moment, stack_plan
from ultraserver.verify.expect import expectation


def served_nodes(stack: str = "gb200-x72") -> dict[str, dict[str, Any]]:
    settings = parse_settings(stack_config(stack))
    moment = default_moment(expectation(settings))
    cluster, _ = build(settings, stack_plan(ROOT, stack, settings, moment), moment, [])
    return {n.name: n.to_api() for n in cluster.gpu_nodes}


def test_a_node_is_free_for_kueue_only_ready_schedulable_empty_and_without_a_taint_the_pod_does_not_tolerate() -> None:
    nodes = served_nodes()
    names = sorted(nodes)
    taken, standby, failed, cordoned, preferred, free = names[:6]
    # The served GPU nodes carry the stack's GPU taint: the job's pods tolerate it, by key or by key and value.
    (gpu_taint,) = nodes[free]["spec"]["taints"]
    changed = copy.deepcopy(nodes)
    changed[standby]["spec"]["taints"].append(spares.STANDBY_TAINT)
    changed[failed]["status"]["conditions"][0]["status"] = "Unknown"
    changed[cordoned]["spec"]["unschedulable"] = True
    # A soft taint keeps no pod off: Kueue places there.
    changed[preferred]["spec"]["taints"].append({"key": "example.com/soft", "effect": "PreferNoSchedule"})
    others = set(names[6:])
    system = {"metadata": {"name": "ip-system", "labels": {}}, "spec": {}, "status": changed[free]["status"]}
    everything = [*changed.values(), system]
    by_key = [{"key": gpu_taint["key"], "operator": "Exists"}]
    by_value = [{"key": gpu_taint["key"], "value": gpu_taint["value"], "effect": gpu_taint["effect"]}]
    for tolerations in (by_key, by_value):
        assert free_nodes(everything, {taken, *others}, tolerations) == sorted([preferred, free])
    assert free_nodes(everything, set(names) - {standby, failed, cordoned}, by_key) == []
    assert free_nodes(everything, {taken}, [{**by_value[0], "value": "other"}]) == []
    # Tolerating every taint (an empty key with Exists) frees the spare too.
    assert standby in free_nodes(everything, {taken}, [{"operator": "Exists"}])
