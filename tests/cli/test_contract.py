"""The CLI contract: exit 0 ok, 1 checks failed, 2 bad input or usage, 3 internal error; never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli import copy_project, run_main
from helpers.stacks import ROOT
from ultraserver.cli import plan as cli_plan


def test_help_documents_the_exit_codes() -> None:
    result = run_main("--help")
    assert result.code == 0
    assert "exit codes: 0 ok, 1 checks failed, 2 bad input or usage, 3 internal error, 4 cluster API unreachable, " in (
        result.stdout
    )
    # The codes in one line, and where their meanings are: not the whole table (issue 47: 37 of 68 lines).
    assert "ultraserver <command> --help" in result.stdout and "docs/plan.md" in result.stdout
    assert len(result.stdout.splitlines()) <= 40


def test_the_docs_table_and_the_help_come_from_one_exit_table() -> None:
    from ultraserver.cli.exits import EXIT_TABLE, SUBCOMMAND_EXITS, exit_meaning

    doc = (ROOT / "docs" / "plan.md").read_text()
    for code, meaning in EXIT_TABLE:
        assert f"| {code} | {meaning} |" in doc
    # Each command's --help gives its own rows of the same table.
    for command, codes in SUBCOMMAND_EXITS.items():
        help_text = " ".join(run_main(command, "--help").stdout.split())
        for code in codes:
            assert f"{code} {exit_meaning(code, (command,)).replace('`', '')}" in help_text


def test_usage_errors_exit_2() -> None:
    assert run_main("plan").code == 2
    assert run_main("nonsense").code == 2


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--json", "/nonexistent-dir/plan.json"], "does not exist"),
        (["--graph", "graph.png"], "allowed: a file ending in"),
        (["--policy-config", "/nonexistent-dir/policy.json"], "cannot be read"),
    ],
)
def test_bad_file_arguments_exit_2_before_planning(args: list[str], says: str) -> None:
    result = run_main("plan", "--stack", "gb200-x72", *args)
    assert result.code == 2 and says in result.stderr
    assert "Traceback" not in result.stderr and "Resources:" not in result.stdout


def test_invalid_policy_config_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "policy.json"
    bad.write_text("{not json")
    result = run_main("plan", "--stack", "gb200-x72", "--policy-config", str(bad))
    assert result.code == 2 and "not valid JSON" in result.stderr
    bad.write_text("[1, 2]")
    assert run_main("plan", "--stack", "gb200-x72", "--policy-config", str(bad)).code == 2


def test_read_only_json_target_exits_2(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        result = run_main("plan", "--stack", "gb200-x72", "--json", str(folder / "plan.json"))
    finally:
        folder.chmod(0o700)
    # root may write anywhere: then the plan simply succeeds.
    assert result.code in (0, 2) and "Traceback" not in result.stderr


def test_internal_error_is_one_line_and_the_traceback_only_with_debug(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(project_dir: Path, stack: str, **_: object) -> None:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(cli_plan, "stack_settings", broken)
    quiet = run_main("plan", "--stack", "gb200-x72")
    assert quiet.code == 3
    assert quiet.stderr.strip().splitlines() == [
        "ultraserver plan: internal error: RuntimeError: boom (rerun with --debug for the traceback)"
    ]
    loud = run_main("plan", "--stack", "gb200-x72", "--debug")
    assert loud.code == 3 and "Traceback" in loud.stderr


def test_example_values_warn_without_failing() -> None:
    result = run_main("plan", "--stack", "gb200-x72")
    assert result.code == 0
    assert "WARNING  ultraserver-eks:cluster.adminPrincipalArns[0]" in result.stderr
    assert "WARNING  ultraserver-eks:cluster.endpointPublicAccessCidrs[0]" in result.stderr
    assert "WARNING  ultraserver-eks:gpuNodeGroups[0].capacityReservationIds[0]" in result.stderr


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("config:\n  aws:region: us-east-1\n  aws:region: us-west-2\n", "twice"),
        ("- just\n- a list\n", "allowed: a mapping with a config: mapping"),
        ("config: [1, 2]\n", "allowed: a mapping with a config: mapping"),
        ("config:\n  aws:region: [unclosed\n", "not valid YAML"),
        ("config:\n  ultraserver-eks:cluster: &a\n    name: x\n    self: *a\n", "contains itself"),
    ],
)
def test_stack_file_shape_errors_exit_2(tmp_path: Path, text: str, says: str) -> None:
    project = copy_project(tmp_path / "project")
    (project / "stacks" / "Pulumi.bad.yaml").write_text(text)
    result = run_main("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.code == 2 and says in result.stderr and "Traceback" not in result.stderr


def test_unquoted_timestamp_names_the_key_and_says_quote_it(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    stack = (project / "stacks" / "Pulumi.gb200-x72.yaml").read_text()
    (project / "stacks" / "Pulumi.bad.yaml").write_text(
        stack.replace('start: "2026-12-01T11:30:00Z"', "start: 2026-12-01T11:30:00Z")
    )
    result = run_main("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.code == 2
    assert "ultraserver-eks:gpuNodeGroups[0].reservationWindow.start" in result.stderr and "quote it" in result.stderr


def test_unquoted_float_version_says_quote_it(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    stack = (project / "stacks" / "Pulumi.gb200-x72.yaml").read_text()
    (project / "stacks" / "Pulumi.bad.yaml").write_text(stack.replace('"1.35"', "1.30"))
    result = run_main("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.code == 2
    assert "ultraserver-eks:cluster.kubernetesVersion  1.3\n" in result.stderr and "quote it" in result.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["preflight", "--stack", "gb200-x72", "--endpoint-url", "notaurl"], "--endpoint-url"),
        (["preflight", "--stack", "gb200-x72", "--region", "mars"], "--region"),
        (["verify", "--stack", "gb200-x72", "--kubeconfig", "/nonexistent/kubeconfig"], "kubeconfig"),
    ],
)
def test_bad_endpoint_region_and_kubeconfig_exit_2(args: list[str], says: str) -> None:
    result = run_main(*args)
    assert result.code == 2 and says in result.stderr and "Traceback" not in result.stderr


def test_malformed_kubeconfig_exits_2(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text("just text")
    result = run_main("verify", "--stack", "gb200-x72", "--kubeconfig", str(kubeconfig))
    assert result.code == 2 and "kubeconfig" in result.stderr and "Traceback" not in result.stderr


def test_the_kubernetes_layer_project_plans_through_the_cli() -> None:
    """kubernetes-layer/ is its own Pulumi project but reads the platform's ultraserver-eks: keys."""
    result = run_main("plan", "--project-dir", str(ROOT / "kubernetes-layer"), "--stack", "gb200-multi")
    assert result.code == 0, result.stderr
