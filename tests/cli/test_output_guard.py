"""Every option that writes a file the user names goes through one guard: an existing file is overwritten only when it
is empty or an earlier output of the same option (else exit 2, nothing written, `--force` overwrites it); a
directory, a FIFO or a path in a missing folder is exit 2 with the option and the path, never a traceback or a hang.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers.capacity import clients, gpu_nodes, queue_current, reservation
from helpers.cli import Run, run_main, run_process
from helpers.nvbandwidth_samples import matrix_values, nvbandwidth_log
from helpers.preflight import stubbed
from helpers.stacks import ROOT
from ultraserver.cli import stack_settings
from ultraserver.preflight import clients as preflight_clients
from ultraserver.verify import clients as verify_clients

USERS_OWN = "the user's own notes\n"
START = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)  # the shipped gb200-x72 block


@pytest.fixture
def aws_and_cluster(monkeypatch: pytest.MonkeyPatch) -> None:
    """status answered by a healthy gb200-x72, for the two runs that get as far as asking AWS."""
    ec2, stub = stubbed("ec2")
    for _ in range(2):
        answer = reservation(
            "cr-0123456789abcdef0", "active", START, START + timedelta(days=14), "cb-0123456789abcdef0"
        )
        queue_current(stub, answer)
    cluster = gpu_nodes(stack_settings(ROOT, "gb200-x72"), ready=18, ready_since=START + timedelta(minutes=15))
    monkeypatch.setattr(preflight_clients, "make_clients", lambda *_: clients(ec2))
    monkeypatch.setattr(verify_clients, "connect", lambda kubeconfig: cluster)


def status(_: Path, out: str, *extra: str) -> list[str]:
    return ["status", "--stack", "gb200-x72", "--now", "2026-12-03T12:00:00Z", "--json", out, *extra]


def verify(tmp: Path, out: str, *extra: str) -> list[str]:
    log = tmp / "nvbandwidth.log"
    log.write_text(nvbandwidth_log(matrix_values()))
    return ["verify", "--stack", "gb200-x72", "--from-file", str(log), "--json", out, *extra]


def versions(_: Path, out: str, *extra: str) -> list[str]:
    return ["versions", "--now", "2026-12-03T12:00:00Z", "--json", out, *extra]


COMMANDS: dict[str, Callable[..., list[str]]] = {"status": status, "verify": verify, "versions": versions}


def refused(run: Run, flag: str, path: Path, allowed: str) -> bool:
    return run.code == 2 and f": {flag}: got {str(path)!r}; allowed: {allowed}; fix: " in run.stderr


@pytest.mark.usefixtures("aws_and_cluster")
@pytest.mark.parametrize("name", COMMANDS)
def test_json_overwrites_only_its_earlier_output_unless_forced(name: str, tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    out.write_text(USERS_OWN)
    first = run_main(*COMMANDS[name](tmp_path, str(out)))
    assert refused(first, "--json", out, "a new file or an earlier --json output (this file is neither)"), first.stderr
    assert "pass --force to overwrite it" in first.stderr
    assert out.read_text() == USERS_OWN
    forced = run_main(*COMMANDS[name](tmp_path, str(out), "--force"))
    assert forced.code == 0, forced.stderr
    assert isinstance(json.loads(out.read_text()), dict)
    again = run_main(*COMMANDS[name](tmp_path, str(out)))
    assert again.code == 0, again.stderr  # its own earlier output
    other = tmp_path / "other.json"
    other.write_text(out.read_text())
    elsewhere = "versions" if name != "versions" else "verify"
    # Another command's report is not an earlier output of this one.
    assert run_main(*COMMANDS[elsewhere](tmp_path, str(other))).code == 2


@pytest.mark.parametrize("name", COMMANDS)
def test_json_into_a_directory_or_a_missing_folder_exits_2(name: str, tmp_path: Path) -> None:
    folder = run_main(*COMMANDS[name](tmp_path, str(tmp_path)))
    assert refused(folder, "--json", tmp_path, "a file, not a directory"), folder.stderr
    missing = tmp_path / "no-such-folder" / "report.json"
    run = run_main(*COMMANDS[name](tmp_path, str(missing)))
    assert refused(run, "--json", missing, f"a file in an existing folder, and {str(missing.parent)!r} does not exist")
    assert not missing.parent.exists()


@pytest.mark.parametrize("name", COMMANDS)
def test_json_with_a_name_too_long_for_the_file_system_exits_2(name: str, tmp_path: Path) -> None:
    longest = os.pathconf(tmp_path, "PC_NAME_MAX")
    too_long = tmp_path / ("r" * (longest + 1 - len(".json")) + ".json")
    run = run_main(*COMMANDS[name](tmp_path, str(too_long)))
    allowed = f"file and folder names of at most {longest} bytes (the file system's limit)"
    assert refused(run, "--json", too_long, allowed), run.stderr
    assert "use shorter names" in run.stderr
    below = tmp_path / ("d" * (longest + 1)) / "report.json"
    assert refused(run_main(*COMMANDS[name](tmp_path, str(below))), "--json", below, allowed)


@pytest.mark.parametrize("name", COMMANDS)
def test_json_into_a_fifo_exits_2_and_does_not_wait_for_a_reader(name: str, tmp_path: Path) -> None:
    fifo = tmp_path / "report.json"
    os.mkfifo(fifo)
    for extra in ((), ("--force",)):
        run = run_process(*COMMANDS[name](tmp_path, str(fifo), *extra))
        assert run.returncode == 2, run.stderr
        assert f"--json: got {str(fifo)!r}; allowed: a regular file (this is a FIFO (named pipe))" in run.stderr
        assert "Traceback" not in run.stderr


def test_github_output_appends_and_refuses_what_it_cannot_append_to(tmp_path: Path) -> None:
    target = tmp_path / "github-output"
    target.write_text("earlier=1\n")
    assert run_main("stacks", "--github-output", str(target)).code == 0
    assert target.read_text().startswith("earlier=1\npreview=")  # appended, as GitHub Actions reads the file
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path, allowed in (
        (tmp_path, "a file, not a directory"),
        (fifo, "a regular file (this is a FIFO (named pipe))"),
        (tmp_path / "missing" / "out", f"a file in an existing folder, and {str(tmp_path / 'missing')!r} does not"),
    ):
        run = run_process("stacks", "--project-dir", str(ROOT), "--github-output", str(path))
        assert run.returncode == 2 and f"--github-output: got {str(path)!r}; allowed: {allowed}" in run.stderr, (
            run.stderr
        )
