"""Where a saved upstream file came from, read from the SOURCE.md next to it, for scripts/regen_upstream_fixtures.py.

SOURCE.md files come in several forms (a table of saved files with paths and git blobs, one-line prose, globs); each
gives the repository, the commit and the file's upstream path.
"""

from __future__ import annotations

import re
from pathlib import Path


def source_of(folder: Path, saved: str) -> dict[str, str]:
    """Repository, commit, upstream path and git blob of one saved file, as recorded in the folder's SOURCE.md."""
    text = (folder / "SOURCE.md").read_text()
    # One-line form: "Repository owner/name, path some/dir at commit <sha>".
    short = re.search(r"Repository ([\w.-]+/[\w.-]+), path (\S+) at commit ([0-9a-f]{40})", text)
    if short:
        repository, base, sha = short.groups()
        return {"repository": f"https://github.com/{repository}", "commit": sha, "path": f"{base}/{saved}", "blob": ""}
    repo = re.search(r"Repository: (https://github\.com/\S+)", text)
    commit = re.search(r"\b([0-9a-f]{40})\b", text)
    row = re.search(rf"^\| `{re.escape(saved)}` +\| `([^`]+)` +\| `([0-9a-f]{{40}})` \|", text, re.MULTILINE)
    if repo and commit and row:
        return {"repository": repo.group(1), "commit": commit.group(1), "path": row.group(1), "blob": row.group(2)}
    # Some SOURCE.md files list several saved files per row with their upstream folder and no blob id.
    folder_row = re.search(rf"^\|[^|\n]*\b{re.escape(saved)}\b[^|\n]*\| +([^|\s]+/) +\|", text, re.MULTILINE)
    if repo and commit and folder_row:
        return {"repository": repo.group(1), "commit": commit.group(1), "path": folder_row.group(1) + saved, "blob": ""}
    # Newer ones are prose: "Repository OWNER/NAME, tag T, commit C." with "Files: FOLDER/{...}" or ", path FOLDER".
    short = _short_source(text, saved)
    if short:
        return short
    # Others name each saved file (or a glob of them) with its full upstream path (the same glob).
    path = _glob_row_path(text, saved)
    if not repo or not commit or not path:
        raise SystemExit(f"{folder}/SOURCE.md: repository URL, commit or the row of {saved} not found")
    return {"repository": repo.group(1), "commit": commit.group(1), "path": path, "blob": ""}


def _short_source(text: str, saved: str) -> dict[str, str] | None:
    """Source of `saved` from a one-line SOURCE.md ("Repository owner/name, ... commit C" plus its folder)."""
    repo = re.search(r"^Repository ([\w.-]+/[\w.-]+)[ ,]", text, re.MULTILINE)
    commit = re.search(r"\bcommit ([0-9a-f]{40})\b", text)
    folder = re.search(r"^Files: (\S+?)/\{", text, re.MULTILINE) or re.search(r", path (\S+) at commit", text)
    if not (repo and commit and folder):
        return None
    return {
        "repository": f"https://github.com/{repo.group(1)}",
        "commit": commit.group(1),
        "path": f"{folder.group(1)}/{saved}",
        "blob": "",
    }


def _glob_row_path(text: str, saved: str) -> str | None:
    """Upstream path of `saved` from a `| saved-or-glob | upstream-path-or-glob ... |` row of a SOURCE.md."""
    for line in text.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) < 2 or not cells[1]:
            continue
        pattern, upstream = cells[0], cells[1].split()[0].strip("`")
        if "*" not in pattern and pattern == saved:
            return upstream
        prefix, star, suffix = pattern.partition("*")
        if star and saved.startswith(prefix) and saved.endswith(suffix) and len(saved) >= len(prefix + suffix):
            return upstream.replace("*", saved[len(prefix) : len(saved) - len(suffix)], 1)
    return None
