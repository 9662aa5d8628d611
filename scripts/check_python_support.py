"""The Python versions the project claims, checked against what its pins can install.

`requires-python` in pyproject.toml is the one statement of supported Pythons. This script derives from it the
lowest and highest supported minor versions, checks that the trove classifiers name exactly that range and that
ruff targets the lowest, and with --resolve asks pip whether constraints.txt resolves on both ends (a
pin once needed a newer Python than the project claimed). .ci/run runs it with --resolve.

    python scripts/check_python_support.py            # consistency only (offline)
    python scripts/check_python_support.py --resolve  # also pip install --dry-run for lowest and highest
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CLASSIFIER = "Programming Language :: Python :: 3."


def supported_minors(requires_python: str) -> list[int]:
    """Python 3 minor versions allowed by a `>=3.A,<3.B` requires-python (the only form this project uses)."""
    match = re.fullmatch(r"\s*>=\s*3\.(\d+)\s*,\s*<\s*3\.(\d+)\s*", requires_python)
    if match is None:
        raise ValueError(f"requires-python {requires_python!r}: expected the form '>=3.A,<3.B'")
    low, high = int(match[1]), int(match[2])
    if low >= high:
        raise ValueError(f"requires-python {requires_python!r} allows no Python")
    return list(range(low, high))


def problems(pyproject: dict) -> list[str]:
    """Every way pyproject disagrees with its own requires-python (empty when consistent)."""
    project = pyproject["project"]
    minors = supported_minors(project["requires-python"])
    found: list[str] = []
    classified = sorted(
        int(c.removeprefix(CLASSIFIER)) for c in project.get("classifiers", []) if c.startswith(CLASSIFIER)
    )
    if classified != minors:
        want = ", ".join(f"3.{m}" for m in minors)
        got = ", ".join(f"3.{m}" for m in classified) or "none"
        found.append(f"classifiers name Python {got}; requires-python allows {want}: list exactly those")
    target = pyproject["tool"]["ruff"]["target-version"]
    if target != f"py3{minors[0]}":
        found.append(f"tool.ruff.target-version is {target!r}; the lowest supported Python is 3.{minors[0]}")
    mypy_version = pyproject["tool"]["mypy"]["python_version"]
    if mypy_version != f"3.{minors[0]}":
        found.append(f"tool.mypy.python_version is {mypy_version!r}; the lowest supported Python is 3.{minors[0]}")
    return found


def requirements(pyproject: dict) -> list[str]:
    """The project's own requirements with the test extra (the project itself is a local path, not on the index)."""
    project = pyproject["project"]
    return [*project["dependencies"], *project["optional-dependencies"]["test"]]


def resolve(pyproject: dict, python_version: str) -> int:
    """pip's verdict (its exit code) on installing the pinned requirements for one Python version, wheels only."""
    with tempfile.TemporaryDirectory() as tmp:
        reqs = Path(tmp, "requirements.txt")
        reqs.write_text("\n".join(requirements(pyproject)) + "\n")
        command = [
            sys.executable, "-m", "pip", "install", "--quiet", "--dry-run", "--ignore-installed",
            "--python-version", python_version, "--only-binary=:all:",
            "-c", str(ROOT / "constraints.txt"), "-r", str(reqs), "--report", str(Path(tmp, "report.json")),
        ]  # fmt: skip
        return subprocess.run(command, check=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resolve", action="store_true", help="also resolve constraints.txt on lowest and highest")
    args = parser.parse_args(argv)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    found = problems(pyproject)
    for problem in found:
        print(f"pyproject.toml: {problem}", file=sys.stderr)
    if found:
        return 1
    minors = supported_minors(pyproject["project"]["requires-python"])
    if not args.resolve:
        return 0
    for minor in sorted({minors[0], minors[-1]}):
        code = resolve(pyproject, f"3.{minor}")
        if code != 0:
            print(f"constraints.txt does not resolve on Python 3.{minor} (pip exit {code})", file=sys.stderr)
            return 1
        print(f"constraints.txt resolves on Python 3.{minor}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
