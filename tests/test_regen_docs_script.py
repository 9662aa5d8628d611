"""scripts/regen_docs.py as a user runs it: --help prints the usage and writes nothing; --check says the result."""

from __future__ import annotations

import contextlib
import io
import re
from types import ModuleType

import pytest
from helpers.modules import load_file
from helpers.stacks import ROOT, STACKS


def regen_docs() -> ModuleType:
    return load_file(ROOT / "scripts" / "regen_docs.py", "regen_docs_script")


def test_help_prints_usage_and_rewrites_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    module = regen_docs()
    written: list[object] = []
    monkeypatch.setattr(module.Path, "write_text", lambda *args, **kwargs: written.append(args))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit) as done:
        module.main(["--help"])
    assert done.value.code == 0 and "--check" in out.getvalue() and not written


def test_check_says_when_everything_is_up_to_date() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = regen_docs().main(["--check"])
    assert code == 0 and "up to date" in out.getvalue()


def test_the_architecture_stacks_table_lists_every_shipped_stack() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text()
    table = text.split("## Stacks", 1)[1].split("<!-- end -->", 1)[0]
    listed = set(re.findall(r"^\| `([^`]+)` \|", table, re.M))
    assert listed == set(STACKS)
    assert "<!-- stacks:" in table, "the table is generated from stacks/shipped-stacks.txt (scripts/regen_docs.py)"
