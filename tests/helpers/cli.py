"""Running the ``ultraserver`` command in-process, the way a user runs it, on a copy of the project."""

from __future__ import annotations

import contextlib
import io
import shutil
from dataclasses import dataclass
from pathlib import Path

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
