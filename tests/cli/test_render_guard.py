"""`plan --render DIR` writes one manifest per release into DIR through the same guard as every other output: a file
there that is not an earlier manifest is refused before Helm runs (exit 2, nothing written; `--force` overwrites it),
and so are a DIR that is a file, one whose parent is missing, and a manifest name taken by a FIFO."""

from __future__ import annotations

import os
from pathlib import Path

from helpers.cli import run_main, run_process
from helpers.render import CHARTS, helm_and_charts

DRA = "gb200-x72-k8s-dra-driver.yaml"  # the release file of the shipped stack's DRA driver
RELEASES = {DRA, "gb200-x72-k8s-efa-device-plugin.yaml", "gb200-x72-k8s-gpu-operator.yaml", "gb200-x72-k8s-kueue.yaml"}
USERS_OWN = "# the user's own DRA notes\n"


def render(folder: Path, *extra: str) -> list[str]:
    return ["plan", "--stack", "gb200-x72", "--render", str(folder), "--charts", str(CHARTS), *extra]


def test_a_file_in_the_folder_that_is_no_earlier_manifest_is_refused_before_helm_runs(tmp_path: Path) -> None:
    (tmp_path / DRA).write_text(USERS_OWN)
    run = run_main(*render(tmp_path))
    assert run.code == 2, run.stderr
    assert (
        f"--render: got {str(tmp_path / DRA)!r}; allowed: a new file or an earlier --render output (this file is "
        "neither); fix: pick another path, or pass --force to overwrite it"
    ) in run.stderr
    assert (tmp_path / DRA).read_text() == USERS_OWN
    assert [p.name for p in tmp_path.iterdir()] == [DRA]  # no release was written


def test_a_folder_that_is_a_file_or_has_no_parent_is_refused_before_helm_runs(tmp_path: Path) -> None:
    taken = tmp_path / "render"
    taken.write_text(USERS_OWN)
    run = run_main(*render(taken))
    assert run.code == 2 and f"--render: got {str(taken)!r}; allowed: a folder, or a name for a new one" in run.stderr
    assert taken.read_text() == USERS_OWN
    deep = tmp_path / "missing" / "render"
    run = run_main(*render(deep))
    assert run.code == 2, run.stderr
    assert f"allowed: a new folder in an existing one, and {str(deep.parent)!r} does not exist" in run.stderr
    assert not deep.parent.exists()


def test_a_fifo_under_a_manifest_name_is_refused_even_with_force(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / DRA)
    run = run_process(*render(tmp_path, "--force"))
    assert run.returncode == 2, run.stderr
    assert f"--render: got {str(tmp_path / DRA)!r}; allowed: a regular file (this is a FIFO (named pipe))" in run.stderr


def test_force_overwrites_and_an_earlier_render_is_overwritten_without_it(tmp_path: Path) -> None:
    helm_and_charts()  # or skip, naming what is missing
    (tmp_path / DRA).write_text(USERS_OWN)
    assert run_main(*render(tmp_path, "--force")).code == 0
    assert {p.name for p in tmp_path.iterdir()} == RELEASES
    assert (tmp_path / DRA).read_text() != USERS_OWN
    assert run_main(*render(tmp_path)).code == 0  # its own earlier manifests
