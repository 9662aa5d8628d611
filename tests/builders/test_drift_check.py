"""The drift CronJob: its standard-library script judges nodes like verify's node facts; manifests are valid 1.33."""

from __future__ import annotations

import json
from typing import Any

import kubernetes_validate
import pytest
from helpers.manifests import K8S_VERSION
from helpers.stacks import stack_config
from ultraserver.builders.drift_check import DriftCheckArgs, drift_manifests
from ultraserver.builders.expected_nodes import node_group_expectations
from ultraserver.builders.script_cron_job import package_script
from ultraserver.config.settings import parse_settings
from ultraserver.facts.pins.manifests import PYTHON_IMAGE
from ultraserver.incluster import drift

GROUP = {"name": "nvl72", "ultraservers": 1, "instances": 18, "nodes": 2, "gpus": 4, "efa": 4}


def node(name: str, efa: str = "4", clique: str | None = "u.1", ready: str = "True") -> dict[str, Any]:
    labels = {"ultraserver.io/ultraserver": "nvl72", **({"nvidia.com/gpu.clique": clique} if clique else {})}
    return {
        "metadata": {"name": name, "labels": labels},
        "status": {
            "allocatable": {"nvidia.com/gpu": "4", "vpc.amazonaws.com/efa": efa},
            "conditions": [{"type": "Ready", "status": ready}],
        },
    }


def test_healthy_nodes_show_no_drift() -> None:
    assert drift.drift([node("a"), node("b")], [GROUP]) == []


def test_a_node_that_lost_efa_devices_is_reported() -> None:
    assert drift.drift([node("a"), node("b", efa="2")], [GROUP]) == [
        "node b: allocatable vpc.amazonaws.com/efa 2, expected 4"
    ]


def test_dra_mode_nodes_without_plugin_resources_show_no_drift() -> None:
    """A DRA-mode node advertises no nvidia.com/gpu or vpc.amazonaws.com/efa; its expectation says so."""
    config = stack_config("gb200-x72-dra")
    (group,) = [g.to_json() for g in node_group_expectations(parse_settings(config))]
    assert group["allocatable"] is False
    bare = [node("a"), node("b")]
    for n in bare:
        n["status"]["allocatable"] = {}
    group["nodes"] = 2
    assert drift.drift(bare, [group]) == []
    assert drift.drift(bare, [GROUP])  # the same nodes drift against a plugins-mode expectation


@pytest.mark.parametrize(
    ("nodes", "line"),
    [
        ([node("a")], "group nvl72: 1 nodes, expected 2"),
        ([node("a"), node("b", clique=None)], "node b: no nvidia.com/gpu.clique label"),
        ([node("a"), node("b", clique="v.2")], "group nvl72: 2 cliques, expected 1"),
        ([node("a"), node("b", ready="False")], "node b: NotReady"),
    ],
)
def test_other_drift_is_reported(nodes: list[dict[str, Any]], line: str) -> None:
    assert line in drift.drift(nodes, [GROUP])


def test_manifests_validate_and_carry_the_stacks_expectation() -> None:
    settings = parse_settings(stack_config("gb200-multi"), stack="gb200-multi")
    args = DriftCheckArgs(node_group_expectations(settings), node_selector={"ultraserver.io/role": "system"})
    manifests = drift_manifests(args)
    assert [m["kind"] for m in manifests] == [
        "Namespace",
        "ServiceAccount",
        "ClusterRole",
        "ClusterRoleBinding",
        "ConfigMap",
        "CronJob",
    ]
    for manifest in manifests:
        kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
    role = manifests[2]
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]}]
    cron = manifests[-1]["spec"]
    assert cron["schedule"] == "*/30 * * * *" and cron["jobTemplate"]["spec"]["backoffLimit"] == 0
    (container,) = cron["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert container["image"] == PYTHON_IMAGE
    expected = json.loads(next(e["value"] for e in container["env"] if e["name"] == "EXPECTED"))
    assert {g["name"]: (g["nodes"], g["efa"]) for g in expected} == {
        **{f"nvl72-{i}": (18, 8) for i in range(1, 5)},
        "fleet": (144, 4),
    }
    assert manifests[4]["data"] == {
        "drift_check.py": package_script("drift.py"),
        "copied_facts.py": package_script("copied_facts.py"),
    }


def run_main(
    monkeypatch: pytest.MonkeyPatch, groups: list[dict[str, Any]], nodes: list[dict[str, Any]], now: str
) -> int:
    """The script's main() at a moment, with EXPECTED set and the API answered by `nodes`."""
    monkeypatch.setenv("EXPECTED", json.dumps(groups))
    monkeypatch.setattr(drift, "list_nodes", lambda *_: nodes)
    monkeypatch.setattr(drift, "in_cluster", lambda: ("https://api", {}, None))
    return drift.main(drift._utc(now))


WINDOWED = {**GROUP, "windows": [["2026-12-01T12:00:00Z", "2026-12-15T10:30:00Z"]]}


def test_with_no_block_active_the_check_passes_and_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before the block: the group is at 0 nodes on purpose, which is not drift.
    assert run_main(monkeypatch, [WINDOWED], [], "2026-11-30T12:00:00Z") == 0
    assert "no block is active" in capsys.readouterr().out
    # Inside the block the same empty cluster is drift.
    assert run_main(monkeypatch, [WINDOWED], [], "2026-12-02T00:00:00Z") == 1
    assert "group nvl72: 0 nodes, expected 2" in capsys.readouterr().out
    # After the scale-down, quiet again; a group without windows is always checked.
    assert run_main(monkeypatch, [WINDOWED], [], "2026-12-15T10:31:00Z") == 0
    assert run_main(monkeypatch, [WINDOWED, GROUP], [node("a"), node("b")], "2026-11-30T12:00:00Z") == 0
    assert "skipped group nvl72" in capsys.readouterr().out


def test_expectations_carry_each_blocks_full_size_window() -> None:
    settings = parse_settings(stack_config("gb200-x72"))
    (group,) = node_group_expectations(settings)
    (block,) = settings.gpu_node_groups[0].blocks
    start, until = group.windows[0]
    assert drift._utc(start) > block.window.start  # type: ignore[union-attr]
    assert drift._utc(until) == block.usable_end
