"""The upgrade rule fed the deployed state: a change that rolls a running capacity-block group is refused."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers.stacks import ROOT, stack_config
from ultraserver.cli import main
from ultraserver.cli.plan import with_deployed_state
from ultraserver.offline import Plan
from ultraserver.policy import evaluate
from ultraserver.policy.node_groups import UPGRADE_RULE, deployed_state
from ultraserver.policy.rolling import changed_fields, deployed_resources
from ultraserver.problems import ConfigError

SECRET_SIG = {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", "ciphertext": "v1:abc"}


def running_groups() -> list[dict[str, Any]]:
    """The x72 GPU group without a reservation window: it runs all 18 nodes now."""
    group = copy.deepcopy(stack_config("gb200-x72")["ultraserver-eks:gpuNodeGroups"][0])
    group.pop("reservationWindow")
    return [group]


def real_values(value: Any) -> Any:
    """What `pulumi stack export` holds where the offline plan has placeholders: real ids, encrypted secrets."""
    if isinstance(value, dict):
        return {k: real_values(v) for k, v in value.items()}
    if isinstance(value, list):
        return [real_values(v) for v in value]
    if value == "[secret]":
        return SECRET_SIG
    if isinstance(value, str) and "offline" in value:
        return f"real-{abs(hash(value)) % 10**8:08d}"
    return value


def with_provider_defaults(resource_type: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Inputs as a bridged provider's Check records them: defaults it filled in, listed in `__defaults`."""
    if resource_type != "aws:ec2/launchTemplate:LaunchTemplate":
        return {**inputs, "__defaults": []}
    return {**inputs, "disableApiStop": False, "__defaults": ["disableApiStop"]}


def stack_export(plan: Plan) -> dict[str, Any]:
    """The plan's resources in the shape of `pulumi stack export` (version 3)."""
    resources = [
        {
            "urn": r.urn,
            "custom": r.custom,
            "type": r.type,
            "id": f"id-{r.name}",
            "parent": r.parent or None,
            "inputs": with_provider_defaults(r.type, real_values(r.inputs)),
            "outputs": real_values(r.inputs),
            "dependencies": r.dependencies,
        }
        for r in plan.resources
    ]
    return {"version": 3, "deployment": {"manifest": {}, "resources": resources}}


def upgrade_violations(plan: Plan, deployed_file: Path) -> list[str]:
    config, _ = with_deployed_state(None, deployed_file)
    return [v.message for v in evaluate(plan.resources, config) if v.policy == UPGRADE_RULE]


@pytest.fixture(scope="module")
def deployed_plan() -> Plan:
    from ultraserver.offline import run_plan

    return run_plan(ROOT, "gb200-x72", {"ultraserver-eks:gpuNodeGroups": json.dumps(running_groups())})


@pytest.mark.parametrize("form", ["plan-json", "stack-export"])
def test_unchanged_stack_passes(deployed_plan: Plan, tmp_path: Path, form: str) -> None:
    data = deployed_plan.to_json() if form == "plan-json" else stack_export(deployed_plan)
    path = tmp_path / "deployed.json"
    path.write_text(json.dumps(data))
    assert upgrade_violations(deployed_plan, path) == []
    (state,) = deployed_state(deployed_resources(data)).values()
    assert state["releaseVersion"] == "1.35.6-20260714" and state["launchTemplate"]["instanceType"]


@pytest.mark.parametrize("form", ["plan-json", "stack-export"])
@pytest.mark.parametrize(
    ("change", "fields"),
    [
        ({"releaseVersion": "1.35.6-20260804"}, ["releaseVersion"]),
        ({"labels": {"team": "ml"}}, ["labels.team", "launchTemplate.userData"]),
        ({"imdsHopLimit": 2}, ["launchTemplate.metadataOptions.httpPutResponseHopLimit"]),
        ({"localStorage": "Mount"}, ["launchTemplate.userData"]),
    ],
)
def test_a_rolling_change_on_a_running_group_is_refused(
    deployed_plan: Plan,
    plan_with: Callable[..., Plan],
    tmp_path: Path,
    form: str,
    change: dict,
    fields: list[str],
) -> None:
    path = tmp_path / "deployed.json"
    path.write_text(json.dumps(deployed_plan.to_json() if form == "plan-json" else stack_export(deployed_plan)))
    changed = plan_with("gb200-x72", {"gpuNodeGroups": [{**running_groups()[0], **change}]})
    (message,) = upgrade_violations(changed, path)
    assert all(field in message for field in fields), message
    assert "desired size 18" in message and "scaleToZeroForUpgrade" in message
    # Without the deployed state the rule has nothing to compare: its `deployed: {}` default never fires.
    assert [v for v in evaluate(changed.resources) if v.policy == UPGRADE_RULE] == []
    # Held at 0 for the upgrade, the same change is allowed.
    at_zero = plan_with(
        "gb200-x72", {"gpuNodeGroups": [{**running_groups()[0], **change, "scaleToZeroForUpgrade": True}]}
    )
    assert upgrade_violations(at_zero, path) == []


def test_only_the_fields_the_state_names_are_compared() -> None:
    assert changed_fields({"version": "1.33"}, {"version": "1.33", "labels": {"a": "b"}}) == []
    assert changed_fields({"imageId": "ami-1"}, {"imageId": None}) == ["imageId"]
    assert changed_fields({"imageId": "ami-1"}, {"imageId": "ami-offline-placeholder"}) == []
    assert changed_fields({"labels": {"a": "1"}}, {"labels": {"a": "1", "b": "2"}}) == ["labels.b"]


def test_cli_refuses_then_allows_at_zero(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = tmp_path / "project"
    (project / "stacks").mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", project)
    shutil.copy(ROOT / "__main__.py", project)
    stack = {"config": {**stack_config("gb200-x72"), "ultraserver-eks:gpuNodeGroups": running_groups()}}
    stack_file = project / "stacks" / "Pulumi.up.yaml"
    stack_file.write_text(yaml.safe_dump(stack))
    deployed = tmp_path / "deployed.json"
    args = ["plan", "--stack", "up", "--project-dir", str(project)]
    assert main([*args, "--json", str(deployed)]) == 0
    stack["config"]["ultraserver-eks:gpuNodeGroups"][0]["releaseVersion"] = "1.35.6-20260804"
    stack_file.write_text(yaml.safe_dump(stack))
    capsys.readouterr()
    assert main([*args, "--deployed", str(deployed)]) == 1
    out = capsys.readouterr().out
    assert "Deployed state: 1 capacity-block group(s)" in out and "releaseVersion changes" in out
    stack["config"]["ultraserver-eks:gpuNodeGroups"][0]["scaleToZeroForUpgrade"] = True
    stack_file.write_text(yaml.safe_dump(stack))
    assert main([*args, "--deployed", str(deployed)]) == 0


def test_unreadable_deployed_file_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    with pytest.raises(
        ConfigError,
        match=r"--deployed '.*bad.json': got text that is not valid JSON .* fix: pass the file `pulumi stack export",
    ):
        with_deployed_state(None, bad)
    with pytest.raises(ConfigError, match="allowed: a `pulumi stack export` file"):
        deployed_resources({"stack": "x"})
