"""``ultraserver rehearse``: the stack's cluster on an emulated Kubernetes API, the day-2 code run against it."""

from __future__ import annotations

import argparse
import importlib.util
from typing import Any

from ultraserver.cli.exits import UsageError
from ultraserver.cli.options import add_subcommand, moment_arg, stack_options, stack_settings
from ultraserver.problems import ConfigError, Described, Problem

REHEARSE_EXTRA = "pip install 'ultraserver[rehearse]'"
REHEARSE_MODULES = ("kmock", "cryptography")
"""The extra's modules: the emulator and the certificate authority of its HTTPS front (rehearse/tls.py); in the
rehearse and test extras, not in the base install."""


def add_parser(sub: Any) -> None:
    """Register the subcommand on the top-level parser's subparsers."""
    from ultraserver.rehearse.faults import CATALOGUE

    parser = add_subcommand(
        sub, "rehearse", "serve the stack's cluster on an emulated Kubernetes API and run the day-2 checks against it"
    )
    stack_options(parser, "stack name (a stacks/Pulumi.<stack>.yaml file)")
    parser.add_argument(
        "--break",
        dest="faults",
        action="append",
        default=[],
        metavar="FAULT",
        help="inject a fault (repeatable): " + "; ".join(f"{f.name}: {f.summary}" for f in CATALOGUE),
    )
    parser.add_argument(
        "--at",
        type=moment_arg,
        metavar="ISO",
        help="the moment the cluster is served at (ISO 8601 with a zone; default: an hour into the first block's "
        "full-size window, or now for a stack without windows)",
    )
    parser.set_defaults(func=cmd_rehearse)


def cmd_rehearse(args: argparse.Namespace) -> int:
    """Plan, serve, break, run; exit with the day-2 code's worst exit code (1 also when a fault went undetected)."""
    missing = [name for name in REHEARSE_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        raise UsageError(
            Problem(
                "rehearse", Described(f"{missing[0]} is not installed"), missing[0], f"install it: {REHEARSE_EXTRA}"
            )
        )
    from ultraserver.rehearse.faults import FAULTS, fault_problem
    from ultraserver.rehearse.report import exit_reason, format_rehearsal
    from ultraserver.rehearse.run import rehearse

    unknown = [name for name in args.faults if name not in FAULTS]
    if unknown:
        raise UsageError(fault_problem(unknown[0]))
    settings = stack_settings(args.project_dir, args.stack)
    try:
        rehearsal = rehearse(args.project_dir, args.stack, settings, args.faults, args.at)
    except ConfigError as err:  # a fault the stack cannot show at that moment
        raise UsageError(err.items[0]) from None
    print(format_rehearsal(rehearsal))
    args.exit_reason = exit_reason(rehearsal)
    return rehearsal.code
