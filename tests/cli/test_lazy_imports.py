"""Each subcommand imports what it uses: building the parser and running the offline plan import no AWS SDK."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LIVE_ONLY = ("boto3", "botocore", "kubernetes", "ultraserver.preflight.clients", "ultraserver.status.aws")


def imported_after(code: str) -> set[str]:
    """The live-only modules a fresh interpreter has imported after running ``code``."""
    probe = f"import sys\n{code}\nprint(' '.join(m for m in {LIVE_ONLY!r} if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "components")}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_the_parser_imports_no_live_client() -> None:
    assert (
        imported_after(
            "from ultraserver.cli import build_parser; build_parser().parse_args(['plan', '--stack', 'gb200-x72'])"
        )
        == set()
    )


def test_the_offline_plan_imports_no_live_client() -> None:
    code = (
        "import contextlib, io\n"
        "from ultraserver.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):\n"
        "    assert main(['plan', '--stack', 'gb200-x72', '--now', '2026-11-23T02:50:00Z']) == 0"
    )
    assert imported_after(code) == set()


HEAVY = (
    "pulumi",
    "pydantic",
    "yaml",
    "ultraserver.config.settings",
    "ultraserver.offline",
    "ultraserver.rehearse.faults",
)
COMMANDS = ("plan", "preflight", "verify", "status", "extend", "versions", "stacks", "rehearse")


def loaded_after(code: str, names: tuple[str, ...]) -> set[str]:
    """Which of ``names`` (modules or packages) a fresh interpreter has imported after running ``code``."""
    probe = (
        f"import sys\n{code}\n"
        f"print(' '.join(n for n in {names!r} if any(m == n or m.startswith(n + '.') for m in sys.modules)))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "components")}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_a_subcommands_help_imports_no_command() -> None:
    """--help (and a usage error) build the parser only: no settings model, SDK, plan or rehearsal is loaded."""
    code = (
        "import contextlib, io\nfrom ultraserver.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert all(main([c, '--help']) == 0 for c in {COMMANDS!r})"
    )
    assert loaded_after(code, HEAVY + LIVE_ONLY) == set()


def test_the_help_check_sees_a_heavy_import() -> None:
    assert loaded_after("import ultraserver.config.settings", HEAVY) == {
        "pydantic",
        "yaml",
        "ultraserver.config.settings",
    }


NOT_PLANNED = (
    "ultraserver.preflight",
    "ultraserver.verify",
    "ultraserver.status",
    "ultraserver.offline.graph",
    "ultraserver.offline.html_report",
    "ultraserver.offline.render",
)
"""What a plan without --graph, --html or --render never uses: the other subcommands and the other outputs."""


def test_the_piped_plan_loads_only_what_it_uses() -> None:
    """The plan its benchmark times (stdout a pipe, no output option) loads no other subcommand or output; of the
    rehearsal only the fault names --help lists."""
    probe = (
        "import sys\nfrom ultraserver.cli import main\n"
        "code = main(['plan', '--stack', 'gb200-x72', '--now', '2026-11-23T02:50:00Z'])\n"
        f"names = {NOT_PLANNED!r} + ('ultraserver.rehearse',)\n"
        "loaded = [m for m in sys.modules if any(m == n or m.startswith(n + '.') for n in names)]\n"
        "print('\\n' + str(code) + ' ' + ' '.join(sorted(loaded)))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT / "components")}
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    code, *loaded = done.stdout.splitlines()[-1].split()
    assert code == "0"
    assert set(loaded) == {"ultraserver.rehearse", "ultraserver.rehearse.catalogue"}
