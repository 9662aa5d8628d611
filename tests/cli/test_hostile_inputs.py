"""Hostile or broken input files end at once with exit 2 naming the file (issue 24 §2).

Each command runs in a subprocess with a generous timeout: before the bounded reader, the alias bomb ran at 100% CPU
until killed, so a hang fails the test (subprocess.TimeoutExpired) instead of hanging the suite.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.cli import copy_project
from helpers.stacks import ROOT

GUARD_SECONDS = 120
ALIAS_BOMB = "\n".join(
    ['  ultraserver-eks:bomb0: &a0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    + [f"  ultraserver-eks:bomb{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
)


def ultraserver(*args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(ROOT / "components"), "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    return subprocess.run(
        [sys.executable, "-m", "ultraserver", *args], capture_output=True, text=True, timeout=GUARD_SECONDS, env=env
    )


def stack_with(tmp_path: Path, extra: bytes) -> Path:
    """A project copy whose stack 'bad' is gb200-x72 with ``extra`` appended under config:."""
    project = copy_project(tmp_path / "project")
    shipped = (project / "stacks" / "Pulumi.gb200-x72.yaml").read_bytes()
    (project / "stacks" / "Pulumi.bad.yaml").write_bytes(shipped.rstrip(b"\n") + b"\n" + extra + b"\n")
    return project


@pytest.mark.parametrize("command", ["plan", "status"])
def test_alias_bomb_in_config_exits_2(tmp_path: Path, command: str) -> None:
    project = stack_with(tmp_path, ALIAS_BOMB.encode())
    result = ultraserver(command, "--stack", "bad", "--project-dir", str(project))
    assert result.returncode == 2, result.stderr
    assert "Pulumi.bad.yaml" in result.stderr
    assert "aliases that expand this value to more than 100,000 YAML nodes" in result.stderr


def test_non_utf8_stack_file_exits_2_with_the_byte_offset(tmp_path: Path) -> None:
    project = stack_with(tmp_path, b"  ultraserver-eks:note: caf\xe9")
    offset = (project / "stacks" / "Pulumi.bad.yaml").read_bytes().index(b"\xe9")
    result = ultraserver("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.returncode == 2, result.stderr
    assert "Pulumi.bad.yaml\n" in result.stderr
    assert f"  text that is not UTF-8 at byte {offset} (0xe9)\n" in result.stderr
    assert "internal error" not in result.stderr


def test_non_utf8_deployed_file_exits_2_with_the_byte_offset(tmp_path: Path) -> None:
    deployed = tmp_path / "state.json"
    deployed.write_bytes(b'{"resources": ["\xff"]}')
    result = ultraserver("plan", "--stack", "gb200-x72", "--project-dir", str(ROOT), "--deployed", str(deployed))
    assert result.returncode == 2, result.stderr
    assert f"--deployed {str(deployed)!r}\n" in result.stderr
    assert "  text that is not UTF-8 at byte 16 (0xff)\n" in result.stderr


def test_yaml11_boolean_is_refused_not_read_as_true(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    shipped = (project / "stacks" / "Pulumi.gb200-x72.yaml").read_text()
    assert "  ultraserver-eks:imexCheck:\n    enabled: true\n" in shipped
    (project / "stacks" / "Pulumi.bad.yaml").write_text(shipped.replace("    enabled: true\n", "    enabled: yes\n"))
    result = ultraserver("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.returncode == 2, result.stderr
    assert "Pulumi.bad.yaml line 45  yes unquoted: the Pulumi CLI reads it as the text 'yes'" in result.stderr
    assert "write true or false" in result.stderr


def test_window_time_without_time_zone_exits_2(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    shipped = (project / "stacks" / "Pulumi.gb200-x72.yaml").read_text()
    assert 'start: "2026-12-01T11:30:00Z"' in shipped
    naive = shipped.replace('start: "2026-12-01T11:30:00Z"', 'start: "2026-12-01T11:30:00"')
    (project / "stacks" / "Pulumi.bad.yaml").write_text(naive)
    result = ultraserver("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.returncode == 2, result.stderr
    assert "  -  ultraserver-eks:gpuNodeGroups[0].reservationWindow.start\n       '2026-12-01T11:30:00'\n" in (
        result.stderr
    )
    assert "\n       allowed: a time with its time zone" in result.stderr
