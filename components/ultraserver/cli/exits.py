"""Exit codes of every ``ultraserver`` subcommand and what each means, and the error that exits 2 for bad input."""

from __future__ import annotations

import textwrap

from ultraserver.problems import Problem

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL, EXIT_UNREACHABLE = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130
"""Ctrl-C (SIGINT): 128 + 2, what a shell reports for a process SIGINT ended."""
EXIT_HEADS = {
    EXIT_OK: "ok",
    EXIT_FAILED: "checks failed",
    EXIT_USAGE: "bad input or usage",
    EXIT_INTERNAL: "internal error",
    EXIT_UNREACHABLE: "cluster API unreachable",
    EXIT_INTERRUPTED: "interrupted",
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
    EXIT_INTERRUPTED: ("Ctrl-C, any command (SIGTERM ends one with 143, SIGHUP with 129)", ()),
}
"""Meanings several commands share, and which (none named: every command)."""
COMMAND_EXITS: dict[str, dict[int, str]] = {
    "plan": {
        EXIT_OK: "",
        EXIT_FAILED: "a mandatory policy or an incomplete plan (a required argument missing, an input dropped), a "
        "rendered check that failed (`--render`: a kind the cluster does not serve, an object its schema refuses, a "
        "release Helm refuses)",
        EXIT_USAGE: "a `--json`/`--graph`/`--html` path that cannot be written (a directory, a FIFO, a missing "
        "folder) or has the wrong extension or names a file the plan reads (`--force` too) or did not write "
        "(`--force` overwrites it), a missing or invalid `--policy-config`, a `--deployed` file that is unreadable "
        "or another stack's, "
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
"""Every exit code of every command: the table in docs/plan.md is rendered from it, each command's --help from its
own rows."""
EXIT_SUMMARY = {
    EXIT_FAILED: "checks failed (the failures are listed above)",
    EXIT_USAGE: "bad input or usage",
    EXIT_INTERNAL: "internal error",
    EXIT_UNREACHABLE: "cluster API unreachable",
}
"""One line per non-zero exit code: the last line of a failing run when the command gives no more specific reason."""


def exit_codes(command: str) -> str:
    """The exit codes of one subcommand, with its own meanings, as --help epilog text."""
    table = [(c, exit_meaning(c, (command,))) for c in SUBCOMMAND_EXITS[command]]
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


EXIT_CODES = (
    "exit codes: "
    + ", ".join(f"{code} {head}" for code, head in EXIT_HEADS.items())
    + ".\nWhat each means for a command: ultraserver <command> --help; every command's table: docs/plan.md (exit "
    "codes)."
)
"""The top-level --help epilog: the codes in one line and where their meanings are (the whole table is 37 lines)."""


class UsageError(Exception):
    """Bad command-line input (an option's value, a file argument that cannot be read or written), as a Problem keyed
    by the option; the command prints its line and exits 2."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))
