"""The subcommands that talk to AWS or the cluster: ``preflight``, ``verify``, ``status`` and ``extend``."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ultraserver.cli.exits import EXIT_FAILED, EXIT_OK, EXIT_UNREACHABLE, EXIT_USAGE, UsageError
from ultraserver.cli.options import stack_settings
from ultraserver.cli.outputs import check_output, json_output, write_output
from ultraserver.problems import Problem


def cmd_preflight(args: argparse.Namespace) -> int:
    """Check the stack against the real AWS account: reservations, zones, AMI, subnets, versions, quotas."""
    from ultraserver.cli.plan import deployed_access_entries
    from ultraserver.preflight.checks import run_preflight
    from ultraserver.preflight.clients import PreflightAccessError
    from ultraserver.preflight.report import exit_code, format_checks
    from ultraserver.preflight.target import target_from_settings
    from ultraserver.preflight.tools import aws_cli_version, check_aws_cli

    settings = stack_settings(args.project_dir, args.stack)
    target = target_from_settings(settings)
    if args.region:
        target.region = args.region
    if args.deployed:
        target.deployed_entries = deployed_access_entries(Path(args.deployed), args.stack)
    try:
        checks = [check_aws_cli(aws_cli_version()), *run_preflight(target, _stack_clients(args, settings))]
    except PreflightAccessError as err:
        print(f"preflight: {err}", file=sys.stderr)
        return EXIT_USAGE
    print(format_checks(checks))
    return exit_code(checks)


def cmd_verify(args: argparse.Namespace) -> int:
    """Judge the deployed stack: node facts, DRA, NVLink per UltraServer; one verdict per UltraServer and check."""
    from ultraserver.verify.checks import exit_code, judge_cluster, unreachable
    from ultraserver.verify.clients import KubeconfigError, ReadOnce, connect
    from ultraserver.verify.expect import expectation
    from ultraserver.verify.report import VERDICTS_JSON_KEYS, format_verdicts, not_checked, verdicts_json
    from ultraserver.verify.spares import spare_views

    check_output(args.json, None, "--json", json_output(*VERDICTS_JSON_KEYS), force=args.force)
    expected = expectation(stack_settings(args.project_dir, args.stack))
    if args.from_file:
        return _verify_file(args, expected)
    if not expected.groups:
        print("verify: the stack has no GPU node groups; there is nothing to verify", file=sys.stderr)
        return EXIT_USAGE
    try:
        reader = ReadOnce(connect(args.kubeconfig))  # the checks, the acceptance and the spares read once
    except KubeconfigError as err:  # the file given is missing or malformed: bad input, as for any file argument
        print(f"verify: {err}", file=sys.stderr)
        return EXIT_USAGE
    now = args.now or datetime.now(timezone.utc)
    verdicts, accepted = judge_cluster(reader, expected, now, node_facts_only=args.node_facts_only)
    notes = [] if args.node_facts_only else not_checked(expected)
    print(format_verdicts(verdicts, notes, accepted))
    views = spare_views(reader, expected.groups, now)
    if views:
        print("\n".join(["", f"spares at {now:%Y-%m-%d %H:%M} UTC (per UltraServer):", *views]))
    if args.json:
        document = verdicts_json(args.stack, verdicts, notes, accepted)
        write_output(args.json, json.dumps(document, indent=2) + "\n", "--json")
        print(f"\nVerdicts JSON written to {args.json}")
    return EXIT_UNREACHABLE if unreachable(verdicts) else exit_code(verdicts)


def _verify_file(args: argparse.Namespace, expected: Any) -> int:
    """verify --from-file: one verdict for a log the user already has; the cluster is not read."""
    from ultraserver.verify.checks import exit_code
    from ultraserver.verify.from_file import LogFileError, judge_log_file
    from ultraserver.verify.report import format_verdicts, verdicts_json

    try:
        verdict = judge_log_file(Path(args.from_file), expected, args.log_kind or "")
    except LogFileError as err:
        raise UsageError(err.problem) from None
    print(format_verdicts([verdict], []))
    if args.json:
        write_output(args.json, json.dumps(verdicts_json(args.stack, [verdict], []), indent=2) + "\n", "--json")
        print(f"\nVerdicts JSON written to {args.json}")
    return exit_code([verdict])


def cmd_status(args: argparse.Namespace) -> int:
    """Live state of the stack's Capacity Blocks per UltraServer: AWS side, cluster side, idle cost."""
    from ultraserver.facts.capacity.capacity_blocks import MAX_BLOCK_DAYS
    from ultraserver.preflight.clients import PreflightAccessError
    from ultraserver.status.judge import Limits
    from ultraserver.status.report import STATUS_JSON_KEYS, format_status, status_json
    from ultraserver.status.run import run_status
    from ultraserver.verify.clients import ClusterReader, KubeconfigError, connect

    # Beyond the longest Capacity Block a grace or horizon says nothing more (and would overflow a timedelta).
    longest = (("--grace-minutes", args.grace_minutes, 60), ("--horizon-hours", args.horizon_hours, 1))
    for flag, value, per_hour in longest:
        most = MAX_BLOCK_DAYS * 24 * per_hour
        if not 0 <= value <= most:
            raise UsageError(
                Problem(
                    flag,
                    value,
                    f"0 to {most} ({MAX_BLOCK_DAYS} days, the longest Capacity Block)",
                    f"pass a whole number from 0 to {most}",
                )
            )
    settings = stack_settings(args.project_dir, args.stack)
    check_output(args.json, None, "--json", json_output(*STATUS_JSON_KEYS), force=args.force)
    now = args.now or datetime.now(timezone.utc)
    limits = Limits(now, timedelta(minutes=args.grace_minutes), timedelta(hours=args.horizon_hours), args.stack)
    reader: ClusterReader | str
    try:
        reader = connect(args.kubeconfig)
    except KubeconfigError as err:
        reader = str(err)  # AWS alone still knows the blocks and reservations
    try:
        clients = _stack_clients(args, settings)
        report = run_status(settings, clients, reader, limits)
    except PreflightAccessError as err:
        print(f"status: {err}", file=sys.stderr)
        return EXIT_USAGE
    print(format_status(args.stack, report, now))
    if args.json:
        write_output(args.json, json.dumps(status_json(args.stack, report, now), indent=2) + "\n", "--json")
        print(f"\nStatus JSON written to {args.json}")
    if report.failed:
        return EXIT_FAILED
    if report.cluster_unread:
        print(f"status: cluster API unreachable (exit {EXIT_UNREACHABLE}): {report.cluster_unread}", file=sys.stderr)
        return EXIT_UNREACHABLE
    return EXIT_OK


def _stack_clients(args: argparse.Namespace, settings: Any, *, confirm: bool = False) -> Any:
    """Every live command's AWS clients, from the stack's identity and the --region/--profile/--endpoint-url given."""
    from ultraserver.preflight.clients import stack_clients

    return stack_clients(settings, args.region, args.profile, args.endpoint_url, confirm=confirm)


def _extend_cluster(kubeconfig: str | None) -> Any:
    """The cluster whose drain extend moves: a bad --kubeconfig is refused before anything is bought; with none given
    and no default kubeconfig, None (extend says the drain was not moved)."""
    from ultraserver.verify.clients import KubeconfigError, connect

    try:
        return connect(kubeconfig)
    except KubeconfigError as err:
        if kubeconfig:
            raise UsageError(Problem("--kubeconfig", kubeconfig, "a readable kubeconfig", str(err))) from None
        return None


def cmd_extend(args: argparse.Namespace) -> int:
    """Show the extension offerings of a group's current Capacity Block(s); buy them with --yes."""
    from ultraserver.config.aws_identity import caller_account
    from ultraserver.preflight.clients import ApiFailure, PreflightAccessError
    from ultraserver.status.extend import ExtendUsageError, check_hours, pick_group, run_extend

    settings = stack_settings(args.project_dir, args.stack)
    try:
        group, hours = pick_group(settings, args.group), check_hours(args.hours)
    except ExtendUsageError as err:
        raise UsageError(err.problem) from None
    try:
        # A purchase and the moves change the account: say which one before acting, refuse one the stack does not list.
        clients = _stack_clients(args, settings, confirm=True)
        print(f"AWS account {caller_account(clients.caller_arn)} ({clients.caller_arn})")
        now = args.now or datetime.now(timezone.utc)
        cluster = _extend_cluster(args.kubeconfig) if args.yes else None
        lines, ok = run_extend(group, clients, hours, args.yes, now, settings.cluster.name, cluster)
    except PreflightAccessError as err:
        print(f"extend: {err}", file=sys.stderr)
        return EXIT_USAGE
    except ApiFailure as err:
        print(f"extend: {err}; fix: {err.fix}", file=sys.stderr)
        return EXIT_FAILED
    print("\n".join(lines))
    return EXIT_OK if ok else EXIT_FAILED
