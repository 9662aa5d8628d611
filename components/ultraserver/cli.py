"""The ``ultraserver`` command: ``plan`` (offline), and the subcommands that talk to AWS or the cluster."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .errors import ConfigError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def _quiet_loop_teardown(unraisable: Any) -> None:
    """Hide the harmless 'Invalid file descriptor' noise of mock event loops closed at exit."""
    if isinstance(unraisable.exc_value, ValueError) and "file descriptor" in str(unraisable.exc_value):
        return
    sys.__unraisablehook__(unraisable)


def cmd_plan(args: argparse.Namespace) -> int:
    """Run the stack's program offline, print what it would create, write the JSON and graph."""
    from .plan import run_plan
    from .plan.graph import dot, mermaid
    from .plan.report import summary, tree

    plan = run_plan(args.project_dir, args.stack)
    print(f"Offline plan of {plan.project}/{plan.stack} (no AWS or cluster was contacted)\n")
    print(tree(plan))
    print()
    print(summary(plan))
    if plan.placeholders:
        print("\nOffline placeholders (what AWS would answer at deploy time):")
        for line in dict.fromkeys(plan.placeholders):
            print(f"  {line}")
    if args.json:
        Path(args.json).write_text(json.dumps(plan.to_json(), indent=2, sort_keys=False) + "\n")
        print(f"\nPlan JSON written to {args.json}")
    if args.graph:
        text = dot(plan) if args.graph.endswith(".dot") else mermaid(plan)
        Path(args.graph).write_text(text)
        print(f"Dependency graph written to {args.graph}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(prog="ultraserver", description="EKS for NVIDIA GB200 UltraServers, with Pulumi.")
    sub = parser.add_subparsers(dest="command", required=True)
    plan = sub.add_parser("plan", help="run a stack's Pulumi program offline and show every resource it would create")
    plan.add_argument("--stack", required=True, help="stack name (a stacks/Pulumi.<stack>.yaml file)")
    plan.add_argument("--project-dir", default=".", type=Path, help="Pulumi project directory (default: current directory)")
    plan.add_argument("--json", metavar="FILE", help="write the plan as JSON")
    plan.add_argument("--graph", metavar="FILE", help="write the dependency graph (.mmd Mermaid, or .dot Graphviz)")
    plan.set_defaults(func=cmd_plan)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 1 checks failed, 2 bad input)."""
    sys.unraisablehook = _quiet_loop_teardown
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except ConfigError as err:
        print("Invalid settings, nothing was declared:", file=sys.stderr)
        for problem in err.problems:
            print(f"  - {problem}", file=sys.stderr)
        return EXIT_USAGE
