"""The ``ultraserver`` command: ``plan`` (offline), and the subcommands that talk to AWS or the cluster."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ultraserver.problems import ConfigError

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


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

    policy_config = json.loads(Path(args.policy_config).read_text()) if args.policy_config else None
    deployed_note = ""
    if args.deployed:
        policy_config, deployed_note = with_deployed_state(policy_config, Path(args.deployed))
    plan = run_plan(args.project_dir, args.stack)
    violations = evaluate(plan.resources, policy_config)
    plan.policies = [{"policy": v.policy, "level": v.level, "urn": v.urn, "message": v.message} for v in violations]
    print(f"Offline plan of {plan.project}/{plan.stack} (no AWS or cluster was contacted)\n")
    print(tree(plan))
    print()
    print(summary(plan))
    if plan.placeholders:
        print("\nOffline placeholders (what AWS would answer at deploy time):")
        for line in dict.fromkeys(plan.placeholders):
            print(f"  {line}")
    print()
    if deployed_note:
        print(deployed_note)
    print(format_violations(violations, len(RULES)))
    if args.json:
        Path(args.json).write_text(json.dumps(plan.to_json(), indent=2, sort_keys=False) + "\n")
        print(f"\nPlan JSON written to {args.json}")
    if args.graph:
        text = dot(plan) if args.graph.endswith(".dot") else mermaid(plan)
        Path(args.graph).write_text(text)
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


def stack_settings(project_dir: Path, stack: str) -> Any:
    """A stack's validated settings, read from its file without running the program."""
    from ultraserver.config.settings import parse_settings
    from ultraserver.offline.engine import load_project, stack_config

    project = load_project(project_dir.resolve())
    config, _ = stack_config(project, stack)
    return parse_settings(config, project.name, stack)


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
    parser = argparse.ArgumentParser(prog="ultraserver", description="EKS for NVIDIA GB200 UltraServers, with Pulumi.")
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
    pre.add_argument("--region", help="AWS region (default: the stack's aws:region)")
    pre.add_argument("--profile", help="AWS profile")
    pre.add_argument("--endpoint-url", help="send every AWS call here (e.g. a local emulator)")
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
