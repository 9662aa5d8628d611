"""The ``ultraserver`` command: ``plan`` and ``versions`` (offline), and subcommands that talk to AWS or the cluster.

Exit codes: cli.exits.EXIT_TABLE, rendered as the table in docs/plan.md and, per command, in its --help.
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
from typing import Any

from ultraserver.cli.exits import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_SUMMARY, EXIT_USAGE, UsageError
from ultraserver.cli.options import stack_settings
from ultraserver.cli.parser import build_parser
from ultraserver.problems import ERROR, ConfigError, format_problems

__all__ = ["build_parser", "console", "main", "stack_settings"]

SHORT_RUN_GC_THRESHOLDS = (10_000, 50, 50)
"""Collector thresholds of one command run (Python's default is 700, 10, 10): see console()."""


def _quiet_loop_teardown(unraisable: Any) -> None:
    """Hide the harmless 'Invalid file descriptor' noise of mock event loops closed at exit."""
    if isinstance(unraisable.exc_value, ValueError) and "file descriptor" in str(unraisable.exc_value):
        return
    sys.__unraisablehook__(unraisable)


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
