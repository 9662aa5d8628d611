"""What a new user meets following the README: help texts, usage errors with key/value/allowed/fix, plan summaries."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.cli import copy_project, run_main
from helpers.stacks import ROOT

PROJECT = ("--project-dir", str(ROOT))


def test_help_says_extend_exits_1_when_nothing_is_bought() -> None:
    # `ultraserver --help` gives the codes only; each command's --help gives its own meaning of each.
    result = run_main("extend", "--help")
    failed = result.stdout.split("  1  checks failed", 1)[1].split("  2  ", 1)[0]
    assert result.code == 0 and "no offering or a failed purchase" in failed


def test_extend_unknown_group_names_the_fix() -> None:
    result = run_main("extend", "--stack", "gb200-x72", *PROJECT, "--group", "nope", "--hours", "24")
    assert result.code == 2
    assert "--group: got 'nope'; allowed: nvl72; fix:" in result.stderr


def test_extend_bad_hours_names_the_fix() -> None:
    result = run_main("extend", "--stack", "gb200-x72", *PROJECT, "--group", "nvl72", "--hours", "25")
    assert result.code == 2
    assert "--hours: got 25; allowed:" in result.stderr and "fix:" in result.stderr


def test_status_negative_option_names_the_one_given() -> None:
    result = run_main("status", "--stack", "gb200-x72", *PROJECT, "--horizon-hours", "-1")
    assert result.code == 2
    assert "--horizon-hours: got -1; allowed: 0 to 4368 (182 days, the longest Capacity Block); fix:" in result.stderr
    assert "--grace-minutes" not in result.stderr


def test_output_file_in_missing_folder_names_the_option(tmp_path: Path) -> None:
    target = tmp_path / "missing" / "plan.json"
    result = run_main("plan", "--stack", "gb200-x72", *PROJECT, "--json", str(target))
    assert result.code == 2
    assert result.stderr.startswith(f"ultraserver plan: --json: got {str(target)!r}; allowed:")
    assert "fix:" in result.stderr


def test_live_commands_say_which_kubeconfig_they_read_by_default() -> None:
    for command in ("verify", "status"):
        result = run_main(command, "--help")
        assert result.code == 0
        assert "default: as kubectl, the files of $KUBECONFIG merged, else ~/.kube/config" in " ".join(
            result.stdout.split()
        )


def test_status_help_shows_the_default_grace_and_horizon() -> None:
    from ultraserver.status.judge import GRACE_MINUTES, HORIZON_HOURS

    text = " ".join(run_main("status", "--help").stdout.split())
    assert f"this long (default: {GRACE_MINUTES})" in text
    assert f"unfollowed (default: {HORIZON_HOURS})" in text


def test_plan_of_one_gpu_group_says_group_in_the_singular() -> None:
    result = run_main("plan", "--stack", "gb200-x72", *PROJECT)
    assert result.code == 0 and " GPU in 1 GPU node group (" in result.stdout


def test_kubernetes_layer_plan_declares_no_nodes_and_lists_its_stack_reference() -> None:
    result = run_main("plan", "--stack", "gb200-multi", "--project-dir", str(ROOT / "kubernetes-layer"))
    assert result.code == 0
    assert "Nodes: none declared by this project" in result.stdout and "GPUs: 0" not in result.stdout
    placeholders = result.stdout.split("Offline placeholders", 1)[1].split("Resources in dependency order", 1)[0]
    assert "StackReference organization/ultraserver-eks/gb200-multi -> outputs" in placeholders
    assert "kubeconfig" in placeholders


def test_deployed_state_of_another_stack_is_refused(tmp_path: Path) -> None:
    other = tmp_path / "deployed.json"
    urn = "urn:pulumi:gb200-multi::ultraserver-eks::pulumi:pulumi:Stack::ultraserver-eks-gb200-multi"
    other.write_text(json.dumps({"resources": [{"urn": urn, "type": "pulumi:pulumi:Stack"}]}))
    result = run_main("plan", "--stack", "gb200-x72", *PROJECT, "--deployed", str(other))
    assert result.code == 2 and "Resources:" not in result.stdout
    assert "  -  --deployed  the state of stack gb200-multi" in result.stderr
    assert (
        "allowed: the state of stack gb200-x72\n" in result.stderr and "fix: pass `pulumi stack export" in result.stderr
    )


def test_plan_outside_a_project_is_not_called_invalid_settings(tmp_path: Path) -> None:
    result = run_main("plan", "--stack", "gb200-x72", "--project-dir", str(tmp_path))
    assert result.code == 2
    assert result.stderr.startswith("Invalid input, nothing was declared:") and "no Pulumi.yaml in" in result.stderr


def test_invalid_stack_settings_keep_their_heading(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    stack_file = project / "stacks" / "Pulumi.gb200-x72.yaml"
    stack_file.write_text(stack_file.read_text().replace("    nodes: 2\n", "    nodes: 99\n"))
    result = run_main("plan", "--stack", "gb200-x72", "--project-dir", str(project))
    assert result.code == 2
    assert "Invalid settings, nothing was declared:" in result.stderr and "imexCheck" in result.stderr


def test_stack_file_name_instead_of_stack_name_says_which_name_to_pass() -> None:
    for given in ("Pulumi.gb200-x72.yaml", "stacks/Pulumi.gb200-x72.yaml"):
        result = run_main("plan", "--stack", given, *PROJECT)
        assert result.code == 2
        assert "fix: pass the stack's name, --stack gb200-x72, not its file" in result.stderr
        assert ".yaml.yaml" not in result.stderr
