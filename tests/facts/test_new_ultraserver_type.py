"""A new UltraServer type is a few lines of facts: a GB300-like type on another instance type plans, and Kueue gives
its nodes a flavor of their own.

The subprocess adds the type the way docs/architecture.md ("A new UltraServer type") says a developer does: the
instance catalog gets the new instance type (here a copy of GB200's entry; scripts/regen_network_cards.py writes it from
EC2), facts/hardware/instances.py its vCPUs and zones, and facts/hardware/ultraservers.py the type itself (its source is
edited as text and run in place of the module, before anything else reads it). Then it plans a shipped stack with one
group of the new type added and prints the Kueue objects.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from helpers.stacks import ROOT, TEST_NOW, stack_config

NEW_TYPE, NEW_INSTANCE = "u-p6e-gb300x72", "p6e-gb300.36xlarge"
OLD_INSTANCE = "p6e-gb200.36xlarge"

PROGRAM = """
import copy, json, sys, types
from datetime import datetime
from pathlib import Path

import ultraserver.facts.hardware as hardware
from ultraserver.facts.hardware import efa, instances

new_type, new_instance, old_instance, root, group, now = sys.argv[1:7]
catalog = efa._catalog()
catalog[new_instance] = copy.deepcopy(catalog[old_instance])
instances.VCPUS[new_instance] = instances.VCPUS[old_instance]
instances.OFFERED_ZONES[new_instance] = instances.OFFERED_ZONES[old_instance]

source = Path(hardware.__file__).with_name("ultraservers.py").read_text()
source = source.replace(
    'Literal["u-p6e-gb200x36", "u-p6e-gb200x72"]', f'Literal["u-p6e-gb200x36", "u-p6e-gb200x72", "{new_type}"]'
).replace(
    'UltraServerType("u-p6e-gb200x72", nodes=18))',
    f'UltraServerType("u-p6e-gb200x72", nodes=18), UltraServerType("{new_type}", 18, "{new_instance}"))',
)
assert new_type in source.split("TYPES")[1], "the type table of facts/hardware/ultraservers.py changed shape"
module = types.ModuleType("ultraserver.facts.hardware.ultraservers")
module.__file__ = str(Path(hardware.__file__).with_name("ultraservers.py"))
sys.modules[module.__name__] = module
exec(compile(source, module.__file__, "exec"), module.__dict__)
hardware.ultraservers = module

from ultraserver.offline import run_plan

groups = json.loads(group)
plan = run_plan(root, "gb200-x72", {"ultraserver-eks:gpuNodeGroups": groups}, datetime.fromisoformat(now))
kinds = ("ResourceFlavor", "ClusterQueue")
print(json.dumps([r.inputs for r in plan.resources if r.inputs.get("kind") in kinds]))
"""


def plan_with_new_type() -> list[dict[str, Any]]:
    """The Kueue objects of gb200-x72 with a second group of the new type."""
    (group,) = stack_config("gb200-x72")["ultraserver-eks:gpuNodeGroups"]
    new = {
        **group,
        "name": "nvl72-next",
        "ultraserverType": NEW_TYPE,
        "capacityReservationIds": ["cr-0fedcba987654321f"],
    }
    arguments = [NEW_TYPE, NEW_INSTANCE, OLD_INSTANCE, str(ROOT), json.dumps([group, new]), TEST_NOW.isoformat()]
    run = subprocess.run(
        [sys.executable, "-c", PROGRAM, *arguments], capture_output=True, text=True, check=False, timeout=600
    )
    assert run.returncode == 0, run.stderr[-3000:]
    objects: list[dict[str, Any]] = json.loads(run.stdout.strip().splitlines()[-1])
    return objects


def test_a_new_type_on_another_instance_type_plans_with_a_flavor_of_its_own() -> None:
    objects = plan_with_new_type()
    flavors = {o["metadata"]["name"]: o["spec"] for o in objects if o["kind"] == "ResourceFlavor"}
    selected = {name: spec["nodeLabels"]["node.kubernetes.io/instance-type"] for name, spec in flavors.items()}
    # Each instance type's nodes are selected by a flavor of their own, placed and unplaced.
    assert sorted(selected.values()) == sorted([OLD_INSTANCE, OLD_INSTANCE, NEW_INSTANCE, NEW_INSTANCE])
    placed = {selected[n]: n for n, spec in flavors.items() if "topologyName" in spec}
    assert set(placed) == {OLD_INSTANCE, NEW_INSTANCE}
    (queue,) = [o for o in objects if o["kind"] == "ClusterQueue"]
    (group,) = queue["spec"]["resourceGroups"]
    quota = {f["name"]: {r["name"]: r["nominalQuota"] for r in f["resources"]} for f in group["flavors"]}
    # One u-*x72 UltraServer each: 18 nodes of 4 GPUs (the copied catalog entry), on its own flavor.
    for instance_type in (OLD_INSTANCE, NEW_INSTANCE):
        assert quota[placed[instance_type]]["nvidia.com/gpu"] == 18 * 4
    assert all(n == 0 for name, q in quota.items() if name not in placed.values() for n in q.values())
