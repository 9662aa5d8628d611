"""The shipped stacks are named in stacks/shipped-stacks.txt; a user's own stack file in stacks/ (README step 2)
makes no test fail because it exists, and the tests of a user's own stack run on it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.stacks import ROOT, STACKS

GIT = shutil.which("git") is not None and (ROOT / ".git").exists()


def tracked(pattern: str, root: Path = ROOT) -> list[str]:
    """The paths git tracks under ``root`` that match ``pattern``."""
    run = subprocess.run(["git", "-C", str(root), "ls-files", pattern], capture_output=True, text=True, check=True)
    return run.stdout.split()


def test_every_shipped_stack_has_its_file() -> None:
    assert STACKS and STACKS == sorted(set(STACKS))
    assert [s for s in STACKS if not (ROOT / "stacks" / f"Pulumi.{s}.yaml").is_file()] == []


@pytest.mark.skipif(not GIT, reason="not a git checkout")
def test_git_tracks_every_shipped_stack() -> None:
    assert set(tracked("stacks/Pulumi.*.yaml")) >= {f"stacks/Pulumi.{s}.yaml" for s in STACKS}


def test_ci_plans_and_rehearses_the_shipped_stacks_only() -> None:
    """.ci/run walks stacks/shipped-stacks.txt, not every file in stacks/ (a user's own file would plan with a
    reservation of theirs and rehearse for minutes in CI)."""
    script = (ROOT / ".ci" / "run").read_text()
    assert "stacks/Pulumi.*.yaml" not in script
    assert "shipped=$(grep -v '^#' stacks/shipped-stacks.txt)" in script
    loops = [line for line in script.splitlines() if line.startswith("for stack")]
    assert len(loops) >= 3 and set(loops) == {"for stack in $shipped; do"}  # plan, rehearse, render, ...


# The tests that walk every stack (shipped, or the user's own) in the copy; each names the file it judges.
STACK_WALKING = [
    "tests/test_regen_docs_script.py",
    "tests/test_shipped_stacks.py::test_every_shipped_stack_has_its_file",
    "tests/test_shipped_stacks.py::test_git_tracks_every_shipped_stack",
    "tests/test_your_stacks.py",
    "tests/config/test_settings.py::test_shipped_stacks_are_valid",
    "tests/config/test_schema.py::test_shipped_stack_names_and_passes_the_schema",
    "tests/test_workflows.py::test_every_stack_in_the_repo_is_in_the_preview_matrix",
]


def copy_checkout(target: Path) -> Path:
    """The repository's files (no virtual environment, caches or git history) copied to ``target``."""
    skip = shutil.ignore_patterns(
        ".git", ".venv", ".ci-venv", "__pycache__", ".pytest_cache", ".mypy_cache", "*.egg-info"
    )
    shutil.copytree(ROOT, target, ignore=skip)
    return target


def run_tests(checkout: Path, *selection: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rA", *selection]
    return subprocess.run(command, cwd=checkout, env=env, capture_output=True, text=True, timeout=900)


@pytest.mark.skipif(not GIT, reason="not a git checkout")
def test_a_copied_stack_keeps_the_stack_walking_tests_green(tmp_path: Path) -> None:
    """README step 2 as a user does it: a shipped stack copied under a new name (committed, as a user of a fork
    would), then the tests that walk stacks: green, and the user's own stack was planned and checked."""
    checkout = copy_checkout(tmp_path / "checkout")
    shutil.copy(checkout / "stacks" / "Pulumi.gb200-x72.yaml", checkout / "stacks" / "Pulumi.mycluster.yaml")
    for git in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", "-C", str(checkout), *git], check=True, capture_output=True)
    run = run_tests(checkout, *STACK_WALKING)
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "PASSED tests/test_your_stacks.py::test_your_stack_plans[mycluster]" in run.stdout
    assert "PASSED tests/test_your_stacks.py::test_your_stack_settings_are_valid[mycluster]" in run.stdout


@pytest.mark.skipif(not GIT, reason="not a git checkout")
def test_a_broken_own_stack_fails_naming_its_file_and_the_fix(tmp_path: Path) -> None:
    checkout = copy_checkout(tmp_path / "checkout")
    text = (checkout / "stacks" / "Pulumi.gb200-x72.yaml").read_text()
    broken = text.replace("kubernetesVersion:", "kubernetesVersoin:", 1)
    assert broken != text
    (checkout / "stacks" / "Pulumi.mycluster.yaml").write_text(broken)
    run = run_tests(
        checkout, "tests/test_your_stacks.py::test_your_stack_settings_are_valid", "tests/test_regen_docs_script.py"
    )
    assert run.returncode == 1, run.stdout[-4000:]
    assert "FAILED tests/test_your_stacks.py::test_your_stack_settings_are_valid[mycluster]" in run.stdout
    assert "stacks/Pulumi.mycluster.yaml (your stack, not a shipped one) has invalid settings" in run.stdout
    assert "kubernetesVersoin" in run.stdout and "fix: correct these keys" in run.stdout
    assert "FAILED tests/test_regen_docs_script.py" not in run.stdout
