"""The ``ultraserver`` command: ``plan`` (offline), and the subcommands that talk to AWS or the cluster.

Exit codes: 0 ok; 1 checks failed (policy, preflight, verify); 2 bad input or usage (invalid settings, missing
or unwritable files); 3 internal error (one line with the cause; the traceback only with ``--debug``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import traceback
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ultraserver.problems import ConfigError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3
EXIT_CODES = """exit codes:
  0  ok
  1  checks failed (policy violations, preflight or verify failures)
  2  bad input or usage (invalid settings, missing or unwritable files)
  3  internal error (one line with the cause; rerun with --debug for the traceback)"""
GRAPH_FORMATS = {".mmd": "mermaid", ".mermaid": "mermaid", ".md": "mermaid", ".dot": "dot", ".gv": "dot"}


class UsageError(Exception):
    """Bad command-line input (a file argument that cannot be read or written)."""


def _region(value: str) -> str:
    """--region: an AWS region name (argparse reports anything else as a usage error, exit 2)."""
    if not re.fullmatch(r"[a-z]{2}(-[a-z]+)+-\d", value):
        raise argparse.ArgumentTypeError(f"got {value!r}; allowed: an AWS region such as us-east-1")
    return value


def _endpoint_url(value: str) -> str:
    """--endpoint-url: an http(s) URL with a host."""
    parts = urllib.parse.urlparse(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise argparse.ArgumentTypeError(f"got {value!r}; allowed: a URL such as http://localhost:5000")
    return value


def _quiet_loop_teardown(unraisable: Any) -> None:
    """Hide the harmless 'Invalid file descriptor' noise of mock event loops closed at exit."""
    if isinstance(unraisable.exc_value, ValueError) and "file descriptor" in str(unraisable.exc_value):
        return
    sys.__unraisablehook__(unraisable)


def cmd_plan(args: argparse.Namespace) -> int:
    """Run the stack's program offline, print what it would create, write the JSON and graph."""
    from ultraserver.offline import run_plan
    from ultraserver.offline.graph import dot, mermaid
    from ultraserver.offline.report import summary, tree
    from ultraserver.policy.engine import RULES, evaluate
    from ultraserver.policy.report import blocks, format_violations

    policy_config = _policy_config(args.policy_config)
    deployed_note = ""
    if args.deployed:
        policy_config, deployed_note = with_deployed_state(policy_config, Path(args.deployed))
    for target in (args.json, args.graph):
        _check_writable(target)
    if args.graph and Path(args.graph).suffix not in GRAPH_FORMATS:
        raise UsageError(
            f"--graph: got {args.graph!r}; allowed: a file ending in {', '.join(GRAPH_FORMATS)}; fix: rename it"
        )
    settings = stack_settings(args.project_dir, args.stack)
    _print_warnings(settings)
    plan = run_plan(args.project_dir, args.stack)
    violations = evaluate(plan.resources, policy_config)
    plan.policies = [{"policy": v.policy, "level": v.level, "urn": v.urn, "message": v.message} for v in violations]
    print(f"Offline plan of {plan.project}/{plan.stack} (no AWS or cluster was contacted)\n")
    print(tree(plan))
    print()
    print(summary(plan))
    _print_blocks(settings)
    if plan.placeholders:
        print("\nOffline placeholders (what AWS would answer at deploy time):")
        for line in dict.fromkeys(plan.placeholders):
            print(f"  {line}")
    print()
    if deployed_note:
        print(deployed_note)
    print(format_violations(violations, len(RULES)))
    if args.json:
        _write(args.json, json.dumps(plan.to_json(), indent=2, sort_keys=False) + "\n")
        print(f"\nPlan JSON written to {args.json}")
    if args.graph:
        _write(args.graph, dot(plan) if GRAPH_FORMATS[Path(args.graph).suffix] == "dot" else mermaid(plan))
        print(f"Dependency graph written to {args.graph}")
    return EXIT_FAILED if blocks(violations) else EXIT_OK


def with_deployed_state(policy_config: dict[str, Any] | None, path: Path) -> tuple[dict[str, Any], str]:
    """The policy config with the upgrade rule fed the deployed state of ``path``, and a line saying what was read.

    ``path`` is a previous ``ultraserver plan --json`` output or a ``pulumi stack export`` file.
    """
    from ultraserver.policy.node_groups import UPGRADE_RULE, deployed_state
    from ultraserver.policy.rolling import deployed_resources

    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise ConfigError(
            f"--deployed: cannot read {path} as JSON ({err}); fix: pass the file `pulumi stack export --file FILE` "
            "or `ultraserver plan --json FILE` wrote."
        ) from None
    state = deployed_state(deployed_resources(data))
    config = dict(policy_config or {})
    entry = config.get(UPGRADE_RULE)
    base = dict(entry) if isinstance(entry, dict) else ({"enforcementLevel": entry} if entry else {})
    config[UPGRADE_RULE] = {**base, "deployed": state}
    return config, f"Deployed state: {len(state)} capacity-block group(s) read from {path}."


def _policy_config(path: str | None) -> dict[str, Any] | None:
    """The --policy-config file as a mapping, or UsageError."""
    if not path:
        return None
    try:
        data = json.loads(Path(path).read_text())
    except OSError as err:
        raise UsageError(
            f"--policy-config: cannot read {path!r} ({err.strerror}); fix: pass an existing file"
        ) from None
    except ValueError as err:
        raise UsageError(f"--policy-config: {path!r} is not valid JSON ({err}); fix: correct the file") from None
    if not isinstance(data, dict):
        raise UsageError(f"--policy-config: got {type(data).__name__}; allowed: a JSON object; fix: correct the file")
    return data


def _check_writable(path: str | None) -> None:
    """UsageError unless an output file can be created (before the plan runs, so nothing is wasted)."""
    if not path:
        return
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if target.is_dir():
        raise UsageError(f"{path}: is a directory; fix: give a file name")
    if not folder.is_dir():
        raise UsageError(f"{path}: the folder {str(folder)!r} does not exist; fix: create it or pick another path")
    if not os.access(folder, os.W_OK) or (target.exists() and not os.access(target, os.W_OK)):
        raise UsageError(f"{path}: not writable; fix: pick a writable path")


def _write(path: str, text: str) -> None:
    try:
        Path(path).write_text(text)
    except OSError as err:
        raise UsageError(f"{path}: cannot write ({err.strerror}); fix: pick a writable path") from None


def _print_warnings(settings: Any) -> None:
    """Warnings that do not stop a plan: example values left in the stack, paid extended support, quotas."""
    from ultraserver.config.examples import example_value_warnings
    from ultraserver.config.settings import settings_warnings

    for item in [*example_value_warnings(settings), *settings_warnings(settings)]:
        print(f"warning: {item}", file=sys.stderr)


def _print_blocks(settings: Any) -> None:
    """One line per GPU node group with a Capacity Block window: its current block now and the next switch."""
    from datetime import datetime, timezone

    from ultraserver.config.blocks import block_views

    views = [v for v in block_views(settings, datetime.now(timezone.utc)) if v.state != "unscheduled"]
    if views:
        print("\nCapacity Blocks now:")
        for view in views:
            print(f"  {view.line()}")


def stack_settings(project_dir: Path, stack: str) -> Any:
    """A stack's validated settings, read from its file without running the program."""
    from ultraserver.config.settings import PROJECT, parse_settings
    from ultraserver.offline.engine import load_project, stack_config

    project = load_project(project_dir.resolve())
    config, _ = stack_config(project, stack)
    # Both projects (the platform and kubernetes-layer/) read the platform's keys (ultraserver-eks:...).
    return parse_settings(config, PROJECT, stack)


def cmd_preflight(args: argparse.Namespace) -> int:
    """Check the stack against the real AWS account: reservations, zones, AMI, subnets, versions, quotas."""
    from ultraserver.preflight.checks import run_preflight
    from ultraserver.preflight.clients import PreflightAccessError, make_clients
    from ultraserver.preflight.report import exit_code, format_checks
    from ultraserver.preflight.target import target_from_settings

    target = target_from_settings(stack_settings(args.project_dir, args.stack))
    if args.region:
        target.region = args.region
    try:
        checks = run_preflight(target, make_clients(target.region, args.profile, args.endpoint_url))
    except PreflightAccessError as err:
        print(f"preflight: {err}", file=sys.stderr)
        return EXIT_USAGE
    print(format_checks(checks))
    return exit_code(checks)


def cmd_verify(args: argparse.Namespace) -> int:
    """Judge the deployed stack: node facts, DRA, NVLink per UltraServer; one verdict per UltraServer and check."""
    from ultraserver.verify.checks import exit_code, run_checks
    from ultraserver.verify.clients import KubeconfigError, connect
    from ultraserver.verify.expect import expectation
    from ultraserver.verify.report import format_verdicts, not_checked, verdicts_json

    expected = expectation(stack_settings(args.project_dir, args.stack))
    if not expected.groups:
        print("verify: the stack has no GPU node groups; there is nothing to verify", file=sys.stderr)
        return EXIT_USAGE
    try:
        reader = connect(args.kubeconfig)
    except KubeconfigError as err:
        print(f"verify: {err}", file=sys.stderr)
        return EXIT_USAGE
    verdicts = run_checks(reader, expected, node_facts_only=args.node_facts_only)
    notes = [] if args.node_facts_only else not_checked(expected)
    print(format_verdicts(verdicts, notes))
    if args.json:
        Path(args.json).write_text(json.dumps(verdicts_json(args.stack, verdicts, notes), indent=2) + "\n")
        print(f"\nVerdicts JSON written to {args.json}")
    return exit_code(verdicts)


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
    sub = parser.add_subparsers(dest="command", required=True)
    plan = sub.add_parser("plan", help="run a stack's Pulumi program offline and show every resource it would create")
    plan.add_argument("--stack", required=True, help="stack name (a stacks/Pulumi.<stack>.yaml file)")
    plan.add_argument(
        "--project-dir", default=".", type=Path, help="Pulumi project directory (default: current directory)"
    )
    plan.add_argument("--json", metavar="FILE", help="write the plan as JSON")
    plan.add_argument("--graph", metavar="FILE", help="write the dependency graph (.mmd Mermaid, or .dot Graphviz)")
    plan.add_argument(
        "--policy-config", metavar="FILE", help="policy pack config (JSON, as for pulumi --policy-pack-config)"
    )
    plan.add_argument(
        "--deployed",
        metavar="FILE",
        help="deployed state (`pulumi stack export` or a previous `ultraserver plan --json`): refuse changes that "
        "would roll a capacity-block group not at desired size 0",
    )
    plan.set_defaults(func=cmd_plan)
    pre = sub.add_parser("preflight", help="check a stack against the real AWS account before pulumi up")
    pre.add_argument("--stack", required=True, help="stack name")
    pre.add_argument("--project-dir", default=".", type=Path, help="Pulumi project directory")
    pre.add_argument("--region", type=_region, help="AWS region (default: the stack's aws:region)")
    pre.add_argument("--profile", help="AWS profile")
    pre.add_argument("--endpoint-url", type=_endpoint_url, help="send every AWS call here (e.g. a local emulator)")
    pre.set_defaults(func=cmd_preflight)
    ver = sub.add_parser("verify", help="judge a deployed stack: node facts, DRA, NVLink and EFA per UltraServer")
    ver.add_argument("--stack", required=True, help="stack name")
    ver.add_argument("--project-dir", default=".", type=Path, help="Pulumi project directory")
    ver.add_argument(
        "--kubeconfig",
        default=str(Path.home() / ".kube" / "config"),
        help="kubeconfig of the cluster (e.g. from `pulumi stack output kubeconfig --show-secrets`)",
    )
    ver.add_argument("--json", metavar="FILE", help="write the verdicts as JSON")
    ver.add_argument(
        "--node-facts-only", action="store_true", help="only the cheap node and DRA checks (no job logs are read)"
    )
    ver.set_defaults(func=cmd_verify)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 1 checks failed, 2 bad input or usage, 3 internal error)."""
    sys.unraisablehook = _quiet_loop_teardown
    argv = list(sys.argv[1:] if argv is None else argv)
    # --debug is accepted before or after the subcommand.
    debug = "--debug" in argv
    argv = [a for a in argv if a != "--debug"]
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as done:  # --help (0) or a usage error (2, message already printed)
        return int(done.code or 0)
    try:
        return int(args.func(args))
    except ConfigError as err:
        print("Invalid settings, nothing was declared:", file=sys.stderr)
        for problem in err.problems:
            print(f"  - {problem}", file=sys.stderr)
        return EXIT_USAGE
    except UsageError as err:
        print(f"ultraserver {args.command}: {err}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("ultraserver: interrupted", file=sys.stderr)
        return EXIT_INTERNAL
    except Exception as err:  # noqa: BLE001 - the contract: one line, the traceback only with --debug
        if debug:
            traceback.print_exc()
        cause = str(err).splitlines()[0] if str(err) else ""
        print(
            f"ultraserver {args.command}: internal error: {type(err).__name__}: {cause} (rerun with --debug for the "
            "traceback)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
