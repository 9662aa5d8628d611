"""Messages and exits people can act on: the reason for a failing exit comes last, on stderr too when
piped; each subcommand's --help says what it does and which exit codes it returns; one output file per option;
no Python object reprs in messages."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from helpers.cli import run_main as run_cli
from ultraserver.cli.exits import SUBCOMMAND_EXITS
from ultraserver.config.gpu_model import ReservationWindowSettings
from ultraserver.problems import Problem


def test_a_plan_failing_its_policies_ends_with_the_rules_on_stdout_and_stderr(tmp_path: Path) -> None:
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"gpu-operator-version": {"minVersion": "99.0.0"}}))
    result = run_cli("plan", "--stack", "gb200-x72", "--policy-config", str(config))
    assert result.code == 1
    last = result.stdout.strip().splitlines()[-1]
    assert last == "ultraserver plan: exit 1: 1 mandatory policy violated: gpu-operator-version"
    assert result.stderr.strip().splitlines()[-1] == last  # stdout is not a terminal here


@pytest.mark.parametrize("command", sorted(SUBCOMMAND_EXITS))
def test_each_subcommand_help_has_a_description_and_its_exit_codes(command: str) -> None:
    result = run_cli(command, "--help")
    assert result.code == 0
    lines = result.stdout.splitlines()
    description = lines[lines.index("") + 1]
    assert description and description[0].isupper() and description.endswith(".")
    assert "exit codes:" in result.stdout
    listed = {
        int(line.split()[0])
        for line in result.stdout.split("exit codes:")[1].splitlines()
        if line[:4].strip().isdigit()
    }
    assert listed == set(SUBCOMMAND_EXITS[command])


def test_two_outputs_on_one_path_are_refused(tmp_path: Path) -> None:
    target = tmp_path / "plan.html"
    result = run_cli("plan", "--stack", "gb200-x72", "--json", str(target), "--html", str(target))
    assert result.code == 2
    assert "--html" in result.stderr and "--json writes too" in result.stderr
    assert not target.exists()


def test_problems_show_settings_as_written_not_python_objects() -> None:
    window = ReservationWindowSettings.model_validate(
        {
            "start": "2026-12-01T11:30:00Z",
            "end": "2026-12-15T11:30:00Z",
        }
    )
    text = str(Problem("gpuNodeGroups[0].reservationWindow", window, "a window ahead", "move it"))
    assert "ReservationWindowSettings" not in text and "datetime" not in text
    assert "'start': '2026-12-01T11:30:00Z'" in text and "'scaleDownLeadMinutes': 65" in text


@pytest.mark.parametrize("command", sorted(SUBCOMMAND_EXITS))
def test_each_subcommand_help_gives_only_its_own_exit_meanings(command: str) -> None:
    section = run_cli(command, "--help").stdout.split("exit codes:")[1]
    others = [other for other in SUBCOMMAND_EXITS if other != command and re.search(rf"\b{other}\b", section)]
    assert others == [], f"{command} --help describes exits of {others}"
    assert "--from-file" not in section or command == "verify"
    assert len(section.splitlines()) <= 14
