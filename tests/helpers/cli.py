"""Running the ``ultraserver`` command in-process, the way a user runs it, on a copy of the project."""

from __future__ import annotations

import contextlib
import io
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from helpers.stacks import ROOT
from ultraserver.cli import main


@dataclass(frozen=True)
class Run:
    """What one command run returned and printed."""

    code: int
    stdout: str
    stderr: str


def run_main(*args: str) -> Run:
    """``ultraserver <args>`` in-process: exit code and captured output."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return Run(code, out.getvalue(), err.getvalue())


def copy_project(target: Path) -> Path:
    """A copy of the Pulumi project (Pulumi.yaml, program, shipped stacks) to break stack files in."""
    target.mkdir(parents=True, exist_ok=True)
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, target / name)
    shutil.copytree(ROOT / "stacks", target / "stacks", dirs_exist_ok=True)
    return target


GUARD_SECONDS = 120
"""A command run in a process of its own ends within this, or the test fails (subprocess.TimeoutExpired) instead of
hanging the suite (a FIFO with no reader, an alias bomb)."""


def run_process(*args: str, **stdout: Any) -> subprocess.CompletedProcess[str]:
    """``python -m ultraserver <args>`` in a process of its own, in the project, with no AWS profile or home; its
    stdout captured, or set up as ``stdout`` says (subprocess.run's stdout and preexec_fn)."""
    env = {"PYTHONPATH": str(ROOT / "components"), "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}
    return subprocess.run(
        [sys.executable, "-m", "ultraserver", *args],
        stderr=subprocess.PIPE,
        text=True,
        timeout=GUARD_SECONDS,
        env=env,
        cwd=ROOT,
        **(stdout or {"stdout": subprocess.PIPE}),
    )
