"""The in-cluster programs' room: standard library and each other only, their mounted files enough to run, and the
facts they carry generated from facts/ (stale copies fail here)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.modules import load_file
from helpers.stacks import ROOT
from ultraserver.builders.drift_check import DriftCheckArgs, drift_manifests
from ultraserver.builders.reclaim_drain import ReclaimDrainArgs, drain_manifests

ROOM = ROOT / "components" / "ultraserver" / "incluster"
MODULES = sorted(p.stem for p in ROOM.glob("*.py") if p.stem != "__init__")


def foreign_imports(source: str) -> set[str]:
    """What a module imports that is neither the standard library nor a module of the room (by either name)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module or ""] if node.level == 0 else ["(relative)"]
        else:
            continue
        for name in names:
            inside = name.removeprefix("ultraserver.incluster.") in MODULES or name == "ultraserver.incluster"
            if not inside and name.split(".")[0] not in sys.stdlib_module_names and name.split(".")[0] not in MODULES:
                found.add(name)
    return found


@pytest.mark.parametrize("module", MODULES)
def test_a_program_imports_the_standard_library_and_the_room_only(module: str) -> None:
    assert foreign_imports((ROOM / f"{module}.py").read_text()) == set()


def test_the_gate_sees_a_foreign_import() -> None:
    source = "import json\nfrom ultraserver.facts import scheduling\nimport yaml\nfrom drain import Block\n"
    assert foreign_imports(source) == {"ultraserver.facts", "yaml"}


def mounted(manifests: list[dict[str, object]]) -> dict[str, str]:
    """The files of a script CronJob's first ConfigMap (its programs), by mounted name."""
    config_map = next(m for m in manifests if m["kind"] == "ConfigMap")
    data = config_map["data"]
    assert isinstance(data, dict)
    return data


@pytest.mark.parametrize(
    "files",
    [
        mounted(drain_manifests(ReclaimDrainArgs([]))),
        mounted(drift_manifests(DriftCheckArgs([]))),
    ],
    ids=["reclaim-drain", "drift"],
)
def test_the_mounted_files_import_without_the_package(files: dict[str, str], tmp_path: Path) -> None:
    """As in a stock image: the ConfigMap's files in one directory, no site-packages (-S), no ultraserver."""
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    entry = Path(next(iter(files))).stem
    probe = (
        f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import {entry}; "
        "assert 'ultraserver' not in sys.modules, sorted(sys.modules)"
    )
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def regen() -> object:
    return load_file(ROOT / "scripts" / "regen_incluster_facts.py", "regen_incluster_facts_script")


def test_the_generated_facts_are_up_to_date() -> None:
    assert regen().main(["--check"]) == 0, "run: python scripts/regen_incluster_facts.py"  # type: ignore[attr-defined]


def test_a_stale_copy_fails_the_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = regen()
    stale = tmp_path / "copied_facts.py"
    stale.write_text((ROOM / "copied_facts.py").read_text().replace("= 60\n", "= 61\n"))
    monkeypatch.setattr(script, "TARGET", stale)
    assert script.main(["--check"]) == 1  # type: ignore[attr-defined]
    assert script.main([]) == 0 and script.main(["--check"]) == 0  # type: ignore[attr-defined]
    assert stale.read_text() == (ROOM / "copied_facts.py").read_text()


def test_every_copied_value_is_used_by_a_program() -> None:
    used = " ".join((ROOM / f"{m}.py").read_text() for m in MODULES if m != "copied_facts")
    names = [name for name, _value, _source in regen().COPIES]  # type: ignore[attr-defined]
    assert [n for n in names if n not in used] == []
