"""``ultraserver rehearse``: the stack's cluster on an emulated Kubernetes API, the day-2 code run against it."""

from __future__ import annotations

import argparse
import importlib.util
import json
from typing import Any

from ultraserver.cli.exits import UsageError
from ultraserver.cli.options import stack_settings
from ultraserver.cli.outputs import check_output, json_output, write_output
from ultraserver.problems import ConfigError, Described, Problem

REHEARSE_EXTRA = "pip install 'ultraserver[rehearse]'"
REHEARSE_MODULES = ("kmock", "cryptography")
"""The extra's modules: the emulator and the certificate authority of its HTTPS front (rehearse/tls.py); in the
rehearse and test extras, not in the base install."""


def _usage_problem(args: argparse.Namespace) -> Problem | None:
    """What is wrong with the command line before anything runs: the extra not installed, an unknown fault, an
    option that needs another."""
    missing = [name for name in REHEARSE_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        return Problem(
            "rehearse", Described(f"{missing[0]} is not installed"), missing[0], f"install it: {REHEARSE_EXTRA}"
        )
    from ultraserver.rehearse.faults import FAULTS, fault_problem

    unknown = [name for name in args.faults if name not in FAULTS]
    if unknown:
        return fault_problem(unknown[0])
    if args.api != "real" and (args.charts or args.crds):
        return Problem("--charts/--crds", "given", "with --api real only", "add --api real")
    if args.deploy and (args.api != "real" or not args.charts):
        return Problem("--deploy", "given", "with --api real and --charts DIR", "add both")
    return None


def cmd_rehearse(args: argparse.Namespace) -> int:
    """Plan, serve, break, run; exit with the day-2 code's worst exit code (1 also when a fault went undetected)."""
    refused = _usage_problem(args)
    if refused is not None:
        raise UsageError(refused)
    from ultraserver.rehearse.report import REHEARSAL_JSON_KEYS, exit_reason, format_rehearsal, rehearsal_json
    from ultraserver.rehearse.run import default_moment, rehearse, stack_plan
    from ultraserver.verify.expect import expectation

    check_output(args.json, None, "--json", json_output(*REHEARSAL_JSON_KEYS), force=args.force)
    settings = stack_settings(args.project_dir, args.stack)
    try:
        moment = args.at or default_moment(expectation(settings))
        plan = stack_plan(args.project_dir, args.stack, settings, moment)
        extra = real_extra(args, settings, plan) if args.api == "real" else []
        rehearsal = rehearse(
            args.project_dir, args.stack, settings, args.faults, moment, plan, api=args.api, extra=extra
        )
        if args.deploy:
            rehearsal.deployment = deployed(args, settings, moment)
            rehearsal.stages.append(rehearsal.deployment.stage())
    except ConfigError as err:  # a fault the stack cannot show at that moment, a control plane that cannot start
        raise UsageError(err.items[0]) from None
    print(format_rehearsal(rehearsal))
    if args.json:
        write_output(args.json, json.dumps(rehearsal_json(rehearsal), indent=2) + "\n", "--json")
    args.exit_reason = exit_reason(rehearsal)
    return rehearsal.code


def real_extra(args: argparse.Namespace, settings: Any, plan: Any) -> list[dict[str, Any]]:
    """With --api real: the CRDs of --crds, what the plan's releases install (--charts), and before them the CRDs of
    the pinned manifests the plan applies that those do not hold (the MPI Operator's MPIJob CRD, read from its pin:
    rehearse/pinned_files.py); all applied before the cluster."""
    from ultraserver.rehearse.charts import chart_objects, crd_files
    from ultraserver.rehearse.pinned_files import manifest_crds

    given = crd_files(args.crds)
    if args.charts:
        given += chart_objects(plan, settings.cluster.kubernetes_version, args.charts)
    return manifest_crds(plan.manifests, given) + given


def deployed(args: argparse.Namespace, settings: Any, moment: Any) -> Any:
    """With --deploy: the Kubernetes layer through a real Pulumi engine (rehearse/deploy.py)."""
    from ultraserver.offline.project import load_project, stack_config
    from ultraserver.rehearse.deploy import deploy_stage
    from ultraserver.rehearse.pinned_files import pinned_bytes

    config, _ = stack_config(load_project(args.project_dir.resolve()), args.stack)
    minor = settings.cluster.kubernetes_version
    return deploy_stage(config, args.stack, minor, moment, args.charts, pinned_bytes)
