"""Pinned upstream files read from local bare git mirrors, for scripts/regen_upstream_fixtures.py (regen time only).

A mirror is a bare clone at MIRRORS/<owner>+<name>/repo
(`git clone --bare https://github.com/<owner>/<name> MIRRORS/<owner>+<name>/repo`).
Each read names the tag, the commit it resolves to and the file's git blob, so the derived data carries its source.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class MirrorRef:
    """One repository at one tag."""

    repository: str
    """owner/name on GitHub."""
    tag: str


def git_dir(mirrors: Path, repository: str) -> Path:
    """The bare git directory of a repository's mirror; SystemExit naming the fetch to run when it is missing."""
    path = mirrors / repository.replace("/", "+") / "repo"
    if not path.is_dir():
        raise SystemExit(f"{path}: no mirror of {repository}; fetch github:{repository} first")
    return path


def _git(mirrors: Path, repository: str, *args: str) -> bytes:
    """Output of one git command in the mirror; SystemExit with git's message on failure."""
    done = subprocess.run(["git", f"--git-dir={git_dir(mirrors, repository)}", *args], capture_output=True, check=False)
    if done.returncode:
        raise SystemExit(f"git {' '.join(args)} in the {repository} mirror: {done.stderr.decode().strip()}")
    return done.stdout


def commit_of(mirrors: Path, ref: MirrorRef) -> str:
    """The commit a tag points at; SystemExit when the mirror lacks the tag."""
    return _git(mirrors, ref.repository, "rev-parse", f"{ref.tag}^{{commit}}").decode().strip()


def read(mirrors: Path, ref: MirrorRef, path: str) -> tuple[bytes, dict[str, str]]:
    """A file's bytes at the tag, and its source (repository URL, tag, commit, path, git blob)."""
    blob = _git(mirrors, ref.repository, "rev-parse", f"{ref.tag}:{path}").decode().strip()
    data = _git(mirrors, ref.repository, "cat-file", "blob", blob)
    source = {
        "repository": f"https://github.com/{ref.repository}",
        "tag": ref.tag,
        "commit": commit_of(mirrors, ref),
        "path": path,
        "blob": blob,
    }
    return data, source


def files_under(mirrors: Path, ref: MirrorRef, folder: str) -> list[str]:
    """Paths of every file below a folder at the tag."""
    listing = _git(mirrors, ref.repository, "ls-tree", "-r", "--name-only", ref.tag, "--", folder.rstrip("/") + "/")
    return sorted(line for line in listing.decode().splitlines() if line)


def chart_files(mirrors: Path, ref: MirrorRef, folder: str) -> dict[str, str]:
    """Chart.yaml, values files and templates of a chart folder at the tag (subcharts included), by path relative to
    the folder."""
    wanted = [p for p in files_under(mirrors, ref, folder) if p.endswith((".yaml", ".yml", ".tpl"))]
    return {p[len(folder) + 1 :]: read(mirrors, ref, p)[0].decode() for p in wanted}
