"""What every ``ultraserver`` subcommand shares: exit codes, argument types, output files and stack settings."""

from __future__ import annotations

import argparse
import json
import os
import textwrap
import urllib.parse
from collections.abc import Callable, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from ultraserver.config.files import MAX_STATE_BYTES, read_bytes, special_kind
from ultraserver.facts.aws import aws_ids
from ultraserver.problems import ConfigError, Problem

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL, EXIT_UNREACHABLE = 0, 1, 2, 3, 4
EXIT_HEADS = {
    EXIT_OK: "ok",
    EXIT_FAILED: "checks failed",
    EXIT_USAGE: "bad input or usage",
    EXIT_INTERNAL: "internal error",
    EXIT_UNREACHABLE: "cluster API unreachable",
}
_SETTINGS = (
    "invalid settings (one line per problem: the stack key, the bad value, what is allowed and the fix; nothing is "
    "declared), a stack file that is not valid YAML or has duplicate keys"
)
_DENIED = "an AWS call the caller's IAM policy denies (the line names the IAM action to grant)"
_CREDENTIALS = (
    "no usable AWS credentials, or credentials of an account the stack's `aws:allowedAccountIds` does not list"
)
_JSON = (
    "a `--json` path that cannot be written (a directory, a FIFO, a missing folder) or names a file that is not an "
    "earlier `--json` output of the command (`--force` overwrites it)"
)
_STACK_COMMANDS = ("plan", "preflight", "verify", "status", "extend", "stacks", "rehearse")
_SHARED: dict[int, tuple[str, tuple[str, ...]]] = {
    EXIT_USAGE: (_SETTINGS, _STACK_COMMANDS),
    EXIT_INTERNAL: ("one line with the cause; `--debug` (anywhere on the command line) prints the traceback", ()),
}
"""Meanings several commands share, and which (none named: every command)."""
COMMAND_EXITS: dict[str, dict[int, str]] = {
    "plan": {
        EXIT_OK: "",
        EXIT_FAILED: "a mandatory policy or an incomplete plan (a required argument missing, an input dropped), a "
        "rendered check that failed (`--render`: a kind the cluster does not serve, an object its schema refuses, a "
        "release Helm refuses)",
        EXIT_USAGE: "a `--json`/`--graph`/`--html` path that cannot be written (a directory, a FIFO, a missing "
        "folder) or has the wrong extension or names a file the plan reads or did not write (`--force` overwrites "
        "it), a missing or invalid `--policy-config`, a `--deployed` file that is unreadable or another stack's, "
        "`--render` without the `render` extra or into a folder that cannot be written or over files that are not "
        "earlier manifests (`--force` overwrites them), `--charts` without `--render` or lacking a chart",
        EXIT_INTERNAL: "",
    },
    "preflight": {
        EXIT_OK: "",
        EXIT_FAILED: f"a preflight check; {_DENIED}",
        EXIT_USAGE: _CREDENTIALS,
        EXIT_INTERNAL: "",
    },
    "verify": {
        EXIT_OK: "",
        EXIT_FAILED: "a verify check (node facts, NVLink, EFA; also of a log given with --from-file)",
        EXIT_USAGE: f"{_JSON}, a `--from-file` log that is missing, too large, not UTF-8 or of no known "
        "tool, a `--kubeconfig` that is missing or malformed",
        EXIT_INTERNAL: "",
        EXIT_UNREACHABLE: "the Kubernetes API did not answer (every check is reported as not judged)",
    },
    "status": {
        EXIT_OK: "",
        EXIT_FAILED: f"a status check (of the AWS side too when the cluster could not be read); {_DENIED}",
        EXIT_USAGE: f"{_JSON}, a `--grace-minutes` or `--horizon-hours` outside 0 to the longest "
        f"Capacity Block; {_CREDENTIALS}",
        EXIT_INTERNAL: "",
        EXIT_UNREACHABLE: "the Kubernetes API did not answer, or no usable kubeconfig: the AWS side (blocks, "
        "reservations, interconnect) is still printed with what could not be read, and the exit is 1 instead when "
        "the AWS side fails",
    },
    "extend": {
        EXIT_OK: "",
        EXIT_FAILED: f"no offering or a failed purchase; {_DENIED}",
        EXIT_USAGE: f"an `--hours` EC2 does not sell, a `--group` the stack lacks; {_CREDENTIALS}",
        EXIT_INTERNAL: "",
    },
    "versions": {
        EXIT_OK: "",
        EXIT_FAILED: "a chart's kubeVersion excludes the `--kubernetes-version` minor",
        EXIT_USAGE: f"a `--kubernetes-version` that is not a minor, {_JSON}",
        EXIT_INTERNAL: "",
    },
    "stacks": {
        EXIT_OK: "",
        EXIT_USAGE: "each bad stack file is listed; a `--github-output` path that cannot be appended to",
        EXIT_INTERNAL: "",
    },
    "rehearse": {
        EXIT_OK: "",
        EXIT_FAILED: "the day-2 checks failed on the emulated cluster (an injected fault, or a healthy rehearsal that "
        "did not pass); with `--api real`, also an object the API server refused or a script's request it refused "
        "(RBAC, validation)",
        EXIT_USAGE: "a `--break` outside the catalogue or that the stack cannot show, the emulator not installed, "
        f"{_JSON}; with `--api real`, a control plane that cannot be built (no Go, a module that does not build) or "
        "started, a `--charts` folder lacking a chart, a `--crds` file without CRDs",
        EXIT_INTERNAL: "",
    },
}
"""What each exit code means for each subcommand: its --help lists only its own; EXIT_TABLE joins them."""


def exit_meaning(code: int, commands: tuple[str, ...]) -> str:
    """What ``code`` means for ``commands``: the head, then each command's own cases (named when several)."""
    named = len(commands) > 1
    shared, users = _SHARED.get(code, ("", ()))
    cases = []
    if shared and (not users or set(users) & set(commands)):
        everyone = not users or set(users) >= set(commands)
        cases.append(shared if everyone else f"{shared} ({', '.join(f'`{u}`' for u in users)})")
    cases += [
        f"`{command}`: {COMMAND_EXITS[command][code]}" if named else COMMAND_EXITS[command][code]
        for command in commands
        if COMMAND_EXITS[command].get(code)
    ]
    return f"{EXIT_HEADS[code]}: {'; '.join(cases)}" if cases else EXIT_HEADS[code]


SUBCOMMAND_EXITS: dict[str, tuple[int, ...]] = {name: tuple(sorted(codes)) for name, codes in COMMAND_EXITS.items()}
"""The exit codes each subcommand can return (its --help lists them)."""
EXIT_TABLE: tuple[tuple[int, str], ...] = tuple((code, exit_meaning(code, tuple(COMMAND_EXITS))) for code in EXIT_HEADS)
"""Every exit code of every command: the top-level --help epilog and the table in docs/plan.md are rendered from it."""
EXIT_SUMMARY = {
    EXIT_FAILED: "checks failed (the failures are listed above)",
    EXIT_USAGE: "bad input or usage",
    EXIT_INTERNAL: "internal error",
    EXIT_UNREACHABLE: "cluster API unreachable",
}
"""One line per non-zero exit code: the last line of a failing run when the command gives no more specific reason."""


def exit_codes(command: str | None = None) -> str:
    """The exit codes of one subcommand, with its own meanings (or every command's table) as --help epilog text."""
    table = EXIT_TABLE if command is None else [(c, exit_meaning(c, (command,))) for c in SUBCOMMAND_EXITS[command]]
    return "exit codes:\n" + "\n".join(
        textwrap.fill(
            meaning.replace("`", ""),
            110,
            initial_indent=f"  {code}  ",
            subsequent_indent="     ",
            break_on_hyphens=False,  # an option (--from-file) stays whole
        )
        for code, meaning in table
    )


EXIT_CODES = exit_codes()


def add_subcommand(sub: Any, name: str, summary: str) -> argparse.ArgumentParser:
    """A subcommand whose --help starts with its one-line summary and ends with the exit codes it can return."""
    parser: argparse.ArgumentParser = sub.add_parser(
        name,
        help=summary,
        description=summary[0].upper() + summary[1:] + ".",
        epilog=exit_codes(name),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    return parser


# Text formats only: --graph writes Mermaid or DOT source, never an image (render it with mermaid-cli or dot).
GRAPH_FORMATS = {".mmd": "mermaid", ".mermaid": "mermaid", ".md": "mermaid", ".dot": "dot", ".gv": "dot"}
HTML_FORMATS = {".html": "html", ".htm": "html"}
OUTPUT_KINDS = {"--graph": "Mermaid or DOT text, not an image", "--html": "one self-contained HTML page"}


class UsageError(Exception):
    """Bad command-line input (an option's value, a file argument that cannot be read or written), as a Problem keyed
    by the option; the command prints its line and exits 2."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))


def region_arg(value: str) -> str:
    """--region: an AWS region name (argparse reports anything else as a usage error, exit 2)."""
    if not aws_ids.matches(aws_ids.REGION, value):
        raise argparse.ArgumentTypeError(f"got {value!r}; allowed: an AWS region such as us-east-1")
    return value


def endpoint_url_arg(value: str) -> str:
    """--endpoint-url: an http(s) URL with a host."""
    parts = urllib.parse.urlparse(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(f"got {value!r}; allowed: a URL such as http://localhost:5000")
    return value


def moment_arg(value: str) -> datetime:
    """--now: an ISO 8601 moment with a time zone."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise argparse.ArgumentTypeError(f"got {value!r}; allowed: ISO 8601 with a zone, e.g. 2026-03-02T12:00:00Z")
    return moment


def suffix(path: str) -> str:
    return Path(path).suffix.lower()


def check_output(
    path: str | None,
    formats: Mapping[str, str] | None,
    flag: str,
    earlier: Callable[[bytes], bool] | None,
    *,
    inputs: Mapping[Path, str] | None = None,
    force: bool = False,
) -> None:
    """UsageError unless an output file has a known extension and can be written (checked before the command works).

    ``earlier`` tells whether a file's bytes are an earlier output of this option: an existing file is overwritten
    only when it is empty or such an output, and never when it is one of ``inputs`` (path: what the command reads it
    as); ``force`` lifts both. None: the option appends, keeping what the file holds. A directory, a FIFO or any
    other file that is not a regular one is refused, ``force`` or not: writing to a FIFO waits for a reader.
    """
    if not path:
        return
    if formats is not None and suffix(path) not in formats:
        raise UsageError(
            Problem(
                flag, path, f"a file ending in {', '.join(formats)} ({flag} writes {OUTPUT_KINDS[flag]})", "rename it"
            )
        )
    target = Path(path)
    _check_writable(target, path, flag)
    if earlier is not None and not force and target.exists():
        _check_overwrite(target, path, flag, earlier, inputs or {})


def _check_writable(target: Path, path: str, flag: str) -> None:
    """UsageError unless ``target`` is a regular file, or a new one, that can be written in an existing folder."""
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir() or path.endswith(("/", os.sep)):
        raise UsageError(Problem(flag, path, "a file, not a directory", "give a file name"))
    kind = special_kind(target)
    if kind:
        raise UsageError(Problem(flag, path, f"a regular file (this is a {kind})", "pick another path"))
    if not folder.is_dir():
        raise UsageError(
            Problem(
                flag,
                path,
                f"a file in an existing folder, and {str(folder)!r} does not exist",
                "create it or pick another path",
            )
        )
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise UsageError(Problem(flag, path, "a writable path", "pick a writable path"))


def _check_overwrite(
    target: Path, path: str, flag: str, earlier: Callable[[bytes], bool], inputs: Mapping[Path, str]
) -> None:
    """UsageError when an existing file is an input of the command or holds anything but an earlier output."""
    fix = "pick another path, or pass --force to overwrite it"
    for source, role in inputs.items():
        if _same_file(source, target):
            read_as = f"a file the command does not read (it reads this one as {role})"
            raise UsageError(Problem(flag, path, read_as, fix))
    try:
        data = read_bytes(target, flag, MAX_STATE_BYTES)
    except ConfigError:  # unreadable or larger than any output
        data = None
    if data is None or (data.strip() and not earlier(data)):
        raise UsageError(Problem(flag, path, f"a new file or an earlier {flag} output (this file is neither)", fix))


def json_output(*keys: str) -> Callable[[bytes], bool]:
    """Whether a file's bytes are a JSON object with ``keys``: an earlier output of a ``--json`` that writes them."""

    def earlier(data: bytes) -> bool:
        try:
            document = json.loads(data)
        except ValueError:
            return False
        return isinstance(document, dict) and set(keys) <= document.keys()

    return earlier


def force_option(parser: argparse.ArgumentParser, flags: str) -> None:
    """--force: let the command's output options overwrite a file that is not an earlier output of theirs."""
    parser.add_argument(
        "--force", action="store_true", help=f"let {flags} overwrite a file that is not an earlier output of theirs"
    )


def _same_file(one: Path, other: Path) -> bool:
    try:
        return os.path.samefile(one, other)
    except OSError:  # missing, or a name too long to look up
        return False


def write_output(path: str, text: str, flag: str, *, append: bool = False) -> None:
    """Write (or append to) an output file ``check_output`` let through; UsageError naming the option if it still
    cannot be."""
    try:
        with open(path, "a" if append else "w", encoding="utf-8") as out:
            out.write(text)
    except OSError as err:
        raise UsageError(Problem(flag, path, "a path that can be written", f"pick another ({err.strerror})")) from None


def stack_settings(project_dir: Path, stack: str, *, platform_only: bool = False) -> Any:
    """A stack's validated settings, read from its file without running the program.

    With ``platform_only``, None for a stack that declares none of the platform's keys: another Pulumi program
    (an example that imports the library) that validates its own configuration when it runs.
    """
    from ultraserver.config.settings import PROJECT, parse_settings
    from ultraserver.offline.project import load_project, stack_config

    project = load_project(project_dir.resolve())
    config, _ = stack_config(project, stack)
    if platform_only and not any(str(key).startswith(f"{PROJECT}:") for key in config):
        return None
    # Both projects (the platform and kubernetes-layer/) read the platform's keys (ultraserver-eks:...).
    return parse_settings(config, PROJECT, stack)


def aws_options(parser: argparse.ArgumentParser) -> None:
    """--stack, --project-dir and the AWS options the live commands share."""
    parser.add_argument("--stack", required=True, help="stack name")
    parser.add_argument("--project-dir", default=".", type=Path, help="Pulumi project directory")
    parser.add_argument("--region", type=region_arg, help="AWS region (default: the stack's aws:region)")
    parser.add_argument("--profile", help="AWS profile")
    parser.add_argument(
        "--endpoint-url", type=endpoint_url_arg, help="send every AWS call here (e.g. a local emulator)"
    )
    parser.add_argument("--now", type=moment_arg, help="judge at this moment instead of the clock (ISO 8601)")
