"""Where pods land, judged from the plan alone (offline/value_placement.py): each release's placement values and the
Kueue Topology against the planned node groups, with no Helm."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from helpers.cli import copy_project, run_main
from ultraserver.offline import Plan
from ultraserver.offline.resource import HELM_RELEASE
from ultraserver.offline.value_placement import TOPOLOGY, placement_problems
from ultraserver.problems import ERROR, WARNING


def changed(plan: Plan, resource_type: str, suffix: str, change: Callable[[dict[str, Any]], None]) -> Plan:
    resources = []
    for resource in plan.resources:
        if resource.type == resource_type and resource.name.endswith(suffix):
            inputs = json.loads(json.dumps(resource.inputs))
            change(inputs)
            resource = replace(resource, inputs=inputs)
        resources.append(resource)
    return replace(plan, resources=resources)


@pytest.mark.parametrize("stack", ["gb200-x72", "gb200-x36", "gb200-x72-dra"])
def test_the_shipped_stacks_place_every_value_and_topology_level(
    stack: str, shipped_plan: Callable[[str], Plan]
) -> None:
    assert placement_problems(shipped_plan(stack)) == []


def test_a_kubelet_plugin_without_the_gpu_toleration_is_an_error_before_any_render(
    shipped_plan: Callable[[str], Plan],
) -> None:
    def untolerated(inputs: dict[str, Any]) -> None:
        inputs["values"]["kubeletPlugin"]["tolerations"] = [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]

    plan = changed(shipped_plan("gb200-x72"), HELM_RELEASE, "dra-driver", untolerated)
    (problem,) = placement_problems(plan)
    assert problem.key == "gb200-x72-k8s-dra-driver values.kubeletPlugin.tolerations/nodeSelector"
    assert problem.level == ERROR
    assert "gb200-x72-nvl72: taint nvidia.com/gpu=true:NoSchedule not tolerated" in str(problem.value)

    def off_gpu(inputs: dict[str, Any]) -> None:
        inputs["values"]["kubeletPlugin"]["nodeSelector"] = {"ultraserver.io/role": "system"}

    (problem,) = placement_problems(changed(shipped_plan("gb200-x72"), HELM_RELEASE, "dra-driver", off_gpu))
    assert "nodeSelector ultraserver.io/role=system not on its nodes" in str(problem.value)


def test_a_controller_off_the_system_nodes_is_an_error_or_a_warning_as_its_release_waits(
    shipped_plan: Callable[[str], Plan],
) -> None:
    def typo(inputs: dict[str, Any]) -> None:
        inputs["values"]["operator"]["nodeSelector"] = {"ultraserver.io/role": "system-nodes"}

    (problem,) = placement_problems(changed(shipped_plan("gb200-x72"), HELM_RELEASE, "gpu-operator", typo))
    assert problem.key == "gb200-x72-k8s-gpu-operator values.operator.tolerations/nodeSelector"
    assert problem.level == ERROR and "its pods miss the system node group" in str(problem.value)

    def on_gpu(inputs: dict[str, Any]) -> None:
        operator = inputs["values"]["operator"]
        operator["nodeSelector"] = {"nvidia.com/gpu.present": "true"}
        operator["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]

    # The operator's release skips the wait: on GPU nodes only it runs while a block is up.
    (problem,) = placement_problems(changed(shipped_plan("gb200-x72"), HELM_RELEASE, "gpu-operator", on_gpu))
    assert problem.level == WARNING


def test_a_topology_level_no_gpu_node_carries_is_an_error(shipped_plan: Callable[[str], Plan]) -> None:
    def extra_level(inputs: dict[str, Any]) -> None:
        inputs["spec"]["levels"].insert(0, {"nodeLabel": "cloud.provider.com/topology-block"})

    (problem,) = placement_problems(changed(shipped_plan("gb200-x72"), TOPOLOGY, "", extra_level))
    assert problem.key.endswith("level cloud.provider.com/topology-block") and problem.level == ERROR
    assert "pkg/util/tas/node.go:27-31" in problem.allowed


def test_plan_without_render_fails_on_a_misplaced_value(tmp_path: Any) -> None:
    project = copy_project(tmp_path / "project")
    stack_file = project / "stacks" / "Pulumi.gb200-x72.yaml"
    stack_file.write_text(
        stack_file.read_text()
        + "  ultraserver-eks:kubernetes:\n    draDriver:\n      values:\n        kubeletPlugin:\n"
        + "          tolerations: [{key: nvidia.com/gpu, operator: Equal, value: 'false'}]\n"
    )
    run = run_main("plan", "--stack", "gb200-x72", "--project-dir", str(project))
    assert run.code == 1, run.stdout[-2000:] + run.stderr
    assert "placement check(s) failed" in run.stderr
    # The finding names the key as the stack file writes it.
    assert "ultraserver-eks:kubernetes.draDriver.values.kubeletPlugin.tolerations " in " ".join(run.stdout.split())
