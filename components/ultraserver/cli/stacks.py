"""``ultraserver stacks``: the stacks CI previews and deploys, and where each deploy runs.

CI's workflows call this instead of reading the stack files themselves, so a stack file means the same to CI as to
``ultraserver plan`` and ``pulumi up``: files read as the Pulumi CLI reads them (bare keys in the project's namespace,
config handed over as text, so ``autoDeploy: true`` and ``autoDeploy: "true"`` are one value), then the settings
model (``autoDeploy`` is a boolean; anything else is a Problem naming the key and the file).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from pathlib import Path
from typing import Any

from ultraserver.cli.exits import EXIT_OK, EXIT_USAGE
from ultraserver.cli.outputs import check_output, write_output
from ultraserver.facts.aws import limits
from ultraserver.problems import ERROR, ConfigError, Described, Problem, format_problems

STACK_NAME = re.compile(limits.PULUMI_STACK_NAME_PATTERN)
"""Stack names reach shell steps and concurrency groups, so only Pulumi's name characters pass."""
HOSTED_RUNNER = ["ubuntu-latest"]
"""Where a deploy that needs AWS APIs only runs (the platform program of a separate-stack stack)."""


def stack_matrix(project_dir: Path) -> dict[str, list[Any]]:
    """The stacks of a project: every one to preview; the autoDeploy ones to deploy, with the runner labels of the
    platform job and, for kubernetes.layer separate-stack, of the kubernetes-layer/ job. Raises ConfigError listing
    every bad stack file."""
    from ultraserver.config.settings import parse_settings
    from ultraserver.offline.project import load_project, stack_config

    project = load_project(project_dir.resolve())
    found: dict[str, list[Any]] = {key: [] for key in ("preview", "separate", "deploy", "platform", "kubernetes")}
    problems: list[Problem] = []
    for stack in project.stacks():
        where = project.stack_file(stack).name
        if not STACK_NAME.fullmatch(stack):
            problems.append(
                Problem(where, stack, "a stack name of letters, digits, '-', '_' and '.'", "rename the file")
            )
            continue
        try:
            settings = parse_settings(stack_config(project, stack)[0], project.name, stack)
        except ConfigError as err:
            problems += [dataclasses.replace(p, key=f"{where}: {p.key}") for p in err.items]
            continue
        separate = settings.kubernetes.layer == "separate-stack"
        labels = list(settings.cluster.deployer_runner_labels)
        found["preview"].append(stack)
        found["separate"] += [stack] if separate else []
        if settings.auto_deploy:
            found["deploy"].append(stack)
            found["platform"].append({"stack": stack, "runs-on": HOSTED_RUNNER if separate else labels})
            found["kubernetes"] += [{"stack": stack, "runs-on": labels}] if separate else []
    if not project.stacks():
        at = project.stack_config_dir.relative_to(project.directory)
        problems.append(
            Problem("stacks", Described(f"no stack file {at}/Pulumi.<stack>.yaml"), "at least one stack", "add one")
        )
    if problems:
        raise ConfigError(problems)
    return found


def cmd_stacks(args: argparse.Namespace) -> int:
    """Print the stack lists as JSON; with --github-output, also append them to that file as name=JSON lines."""
    check_output(args.github_output, None, "--github-output", None)  # appended to: what it holds stays
    try:
        found = stack_matrix(args.project_dir)
    except ConfigError as err:
        print("ultraserver stacks: bad stack files:", file=sys.stderr)
        print(format_problems(err.items, {ERROR: "-"}), file=sys.stderr)
        return EXIT_USAGE
    if args.github_output:
        lines = "".join(f"{name}={json.dumps(value)}\n" for name, value in found.items())
        write_output(args.github_output, lines, "--github-output", append=True)
    print(json.dumps(found, indent=2))
    return EXIT_OK
