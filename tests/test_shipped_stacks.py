"""The tests' list of shipped stacks is the stack files git tracks; a user's own stack file changes neither."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from helpers.stacks import ROOT, STACKS


def tracked_stacks() -> list[str]:
    """Stack names of the Pulumi.<stack>.yaml files git tracks in stacks/."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "stacks/Pulumi.*.yaml"], capture_output=True, text=True, check=True
    ).stdout.split()
    return sorted(name[len("stacks/Pulumi.") : -len(".yaml")] for name in listed)


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout")
def test_the_shipped_list_is_what_git_tracks() -> None:
    assert STACKS == tracked_stacks()
