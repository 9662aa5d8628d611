"""The options subcommands share, each declared once: the stack, the AWS identity, the cluster and the moment; their
argument types, and the stack settings ``--stack`` names."""

from __future__ import annotations

import argparse
import importlib
import urllib.parse
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ultraserver.cli.exits import exit_codes
from ultraserver.facts.aws import aws_ids
from ultraserver.facts.hardware.instances import REGION_ALLOWED, REGION_FIX
from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.pins import ami


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


def command(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """A subcommand's function in ``ultraserver.cli.<module>``, imported when the command runs: building the parser
    (and printing a --help) imports no command's module."""

    def run(args: argparse.Namespace) -> int:
        return int(getattr(importlib.import_module(f"ultraserver.cli.{module}"), name)(args))

    run.__qualname__ = run.__name__ = name
    return run


def force_option(parser: argparse.ArgumentParser, flags: str) -> None:
    """--force: let the command's output options overwrite a file that is not an earlier output of theirs."""
    parser.add_argument(
        "--force", action="store_true", help=f"let {flags} overwrite a file that is not an earlier output of theirs"
    )


def region_arg(value: str) -> str:
    """--region: an AWS region name (argparse reports anything else as a usage error, exit 2)."""
    if not aws_ids.matches(aws_ids.REGION, value):
        raise argparse.ArgumentTypeError(f"got {value!r}; allowed: {REGION_ALLOWED}; fix: {REGION_FIX}")
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
    # A moment outside the EKS calendar the toolkit knows would be blamed on the stack's Kubernetes version.
    span = eks_versions.offered_span(tuple(ami.RELEASE_VERSIONS))
    if span is not None and not span[0] <= moment.astimezone(timezone.utc).date() <= span[1]:
        raise argparse.ArgumentTypeError(
            f"got {value!r}; allowed: a moment from {span[0]} to {span[1]}, the days this toolkit knows which "
            "Kubernetes versions EKS offers; fix: pick one in that span, or update the toolkit"
        )
    return moment


def stack_options(parser: argparse.ArgumentParser, stack_help: str = "stack name") -> None:
    """--stack and --project-dir: which stack file, of which Pulumi project."""
    parser.add_argument("--stack", required=True, help=stack_help)
    parser.add_argument(
        "--project-dir", default=".", type=Path, help="Pulumi project directory (default: current directory)"
    )


def aws_options(parser: argparse.ArgumentParser, region_default: str = "the stack's aws:region", of: str = "") -> None:
    """The AWS options of the commands that call AWS, as one group of the --help: ``region_default`` says where the
    region comes from without --region, ``of`` which of the command's calls they are for (all: empty)."""
    group = parser.add_argument_group("AWS", f"who the AWS calls{of} run as, and where they go")
    group.add_argument("--region", type=region_arg, help=f"AWS region (default: {region_default})")
    group.add_argument("--profile", help="AWS profile")
    group.add_argument("--endpoint-url", type=endpoint_url_arg, help="send every AWS call here (e.g. a local emulator)")


KUBECONFIG_DEFAULT = "default: as kubectl, the files of $KUBECONFIG merged, else ~/.kube/config"


def cluster_options(parser: argparse.ArgumentParser, purpose: str = "", without: str = "") -> None:
    """--kubeconfig, as one group of the --help: ``purpose`` says what the command reads the cluster for, ``without``
    what happens when no kubeconfig is found."""
    group = parser.add_argument_group("cluster", "how the command reaches the Kubernetes API")
    group.add_argument(
        "--kubeconfig",
        help=f"kubeconfig of the cluster{purpose} (e.g. from `pulumi stack output kubeconfig --show-secrets`; "
        f"{KUBECONFIG_DEFAULT}{without})",
    )


def now_option(parser: argparse.ArgumentParser, what: str, metavar: str | None = None) -> None:
    """--now: run as of another moment than the clock's; ``what`` says what that moment changes."""
    parser.add_argument("--now", type=moment_arg, metavar=metavar, help=what)


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
