"""A taint change on a running capacity-block group rolls every node (EKS replaces a managed group's nodes when its
taints change): the upgrade rule refuses it like a label change (issue 47 §7)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from helpers.stacks import ROOT, stack_config
from ultraserver.cli.plan import with_deployed_state
from ultraserver.offline import Plan, run_plan
from ultraserver.policy import evaluate
from ultraserver.policy.node_groups import UPGRADE_RULE

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


@pytest.fixture(scope="module")
def running_plan() -> Plan:
    """The x72 GPU group without a reservation window: it runs all 18 nodes now."""
    group = copy.deepcopy(stack_config("gb200-x72")["ultraserver-eks:gpuNodeGroups"][0])
    group.pop("reservationWindow")
    return run_plan(ROOT, "gb200-x72", {"ultraserver-eks:gpuNodeGroups": json.dumps([group])})


def deployed_with(plan: Plan, tmp_path: Path, taints: Any) -> Path:
    """The plan as deployed state, its GPU node group's taints replaced by ``taints``."""
    data = copy.deepcopy(plan.to_json())  # to_json shares the plan's own inputs
    # The node group and pulumi-eks's ManagedNodeGroup that declares it carry the same taints.
    groups = [r for r in data["resources"] if r["inputs"].get("taints")]
    assert {r["type"] for r in groups} >= {NODE_GROUP}
    for resource in groups:
        resource["inputs"]["taints"] = taints
    path = tmp_path / "deployed.json"
    path.write_text(json.dumps(data))
    return path


def upgrade_messages(plan: Plan, deployed: Path) -> list[str]:
    config, _ = with_deployed_state(None, deployed)
    return [v.message for v in evaluate(plan.resources, config) if v.policy == UPGRADE_RULE]


def test_a_taint_change_on_a_running_group_is_refused(running_plan: Plan, tmp_path: Path) -> None:
    [group] = [r for r in running_plan.resources if r.type == NODE_GROUP and "taints" in r.inputs]
    assert upgrade_messages(running_plan, deployed_with(running_plan, tmp_path, group.inputs["taints"])) == []
    other = [{"key": "team", "value": "ml", "effect": "NO_SCHEDULE"}]
    [message] = upgrade_messages(running_plan, deployed_with(running_plan, tmp_path, other))
    assert "taints" in message and "scaleToZeroForUpgrade" in message
