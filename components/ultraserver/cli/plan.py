"""``ultraserver plan``: the stack's program run offline, printed, and written as JSON, a graph and an HTML page."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ultraserver import clock
from ultraserver.cli.exits import EXIT_FAILED, EXIT_OK, UsageError
from ultraserver.cli.options import stack_settings
from ultraserver.cli.outputs import GRAPH_FORMATS, HTML_FORMATS, check_output, json_output, suffix, write_output
from ultraserver.cli.versions import plan_note, stack_rows
from ultraserver.config.files import MAX_STATE_BYTES, load_json
from ultraserver.problems import ConfigError, Described, Problem, blocking, format_problems

if TYPE_CHECKING:  # imported where used: the CLI loads a subcommand's modules only when it runs
    from ultraserver.config.settings import Settings
    from ultraserver.offline.engine import Plan
    from ultraserver.offline.terminal import PlanText


def cmd_plan(args: argparse.Namespace) -> int:
    """Run the stack's program offline, print what it would create, write the JSON, graph and HTML report."""
    from ultraserver.offline import run_plan
    from ultraserver.offline.completeness import completeness_problems
    from ultraserver.offline.groups import block_lines, clock_line, group_views, spare_lines, windows_by_group
    from ultraserver.offline.report import plan_warnings, summary, tree
    from ultraserver.offline.terminal import PlanText, console_for, print_plan
    from ultraserver.offline.value_placement import placement_problems, user_values
    from ultraserver.policy.engine import RULES, disabled_count, evaluate
    from ultraserver.policy.report import blocks, format_violations

    policy_config = policy_config_file(args.policy_config)
    deployed_note = ""
    if args.deployed:
        policy_config, deployed_note = with_deployed_state(policy_config, Path(args.deployed), args.stack)
    outputs = ((args.json, None, "--json"), (args.graph, GRAPH_FORMATS, "--graph"), (args.html, HTML_FORMATS, "--html"))
    inputs = plan_inputs(args)
    for target, formats, flag in outputs:
        check_output(target, formats, flag, EARLIER_OUTPUT[flag], inputs=inputs, force=args.force)
    same_path(outputs)
    if args.charts and not args.render:
        raise UsageError(Problem("--charts", str(args.charts), "--charts with --render", "add --render DIR"))
    # The program sizes capacity-block groups against the clock (the wall clock, or --now); the report names it.
    with clock.pinned(args.now):
        now = clock.now()
        settings = stack_settings(args.project_dir, args.stack, platform_only=True)
        refuse_pending_migration(settings, args.deployed, args.stack)
        upgrade = upgrade_notes(args.upgrade, settings, now)
        warnings = stack_warnings(settings, rendered=bool(args.render)) if settings is not None else []
        plan = run_plan(args.project_dir, args.stack)
        whole = whole_stack(args.project_dir, args.stack, plan, settings)
    violations = evaluate(plan.resources, policy_config)
    # What the provider would refuse at deploy time (a missing required argument), or Pulumi would silently drop.
    incomplete = completeness_problems(plan)
    rendered, render_notes = render_check(args, whole, settings)
    # Where pods land, from the plan's values and node groups (with --render, from the rendered pods instead).
    placed = placement_problems(whole[0], values=not args.render, users=user_values(settings))
    plan.policies = [{"policy": v.policy, "level": v.level, "urn": v.urn, "message": v.message} for v in violations]
    text = PlanText(
        title=f"{PLAN_TITLE} {plan.project}/{plan.stack} (no AWS or cluster was contacted)",
        clock=clock_line(now, injected=args.now is not None),
        groups=group_views(plan, windows_by_group(settings), now, block_lines(settings, now), spare_lines(settings)),
        warnings=[*warnings, *plan_warnings(plan), *incomplete, *placed, *rendered],
        policies=format_violations(
            violations, len(RULES) - disabled_count(policy_config), disabled_count(policy_config)
        ),
        tree=tree(plan),
        summary=summary(plan),
        placeholders=list(dict.fromkeys(plan.placeholders)),
        notes=[
            *([deployed_note] if deployed_note else []),
            *version_notes(settings, now.date()),
            *control_plane_notes(settings),
            *upgrade,
            *render_notes,
            *zone_notes(settings),
        ],
    )
    print_plan(console_for(sys.stdout), text, sys.stdout)
    _write_outputs(args, plan, settings, now, text)
    misplaced = blocking(placed)
    reasons = [f"the plan is incomplete ({len(incomplete)} input(s): see the warnings)"] if incomplete else []
    reasons += render_reasons(rendered)
    reasons += [f"{len(misplaced)} placement check(s) failed: see the warnings"] if misplaced else []
    if blocks(violations):
        rules = sorted({v.policy for v in violations if v.level == "mandatory"})
        reasons.append(
            f"{len(rules)} mandatory {'policy' if len(rules) == 1 else 'policies'} violated: " + ", ".join(rules)
        )
    if reasons:
        args.exit_reason = "; ".join(reasons)
    return EXIT_FAILED if reasons else EXIT_OK


def _write_outputs(
    args: argparse.Namespace, plan: Plan, settings: Settings | None, now: datetime, text: PlanText
) -> None:
    """The plan JSON, dependency graph and HTML report the command line asked for (their modules load only then)."""
    if args.json:
        document = plan.to_json()
        if settings is not None:
            document["versions"] = stack_rows(settings.cluster.kubernetes_version, now.date())
        write_output(args.json, json.dumps(document, indent=2, sort_keys=False) + "\n", "--json")
        print(f"\nPlan JSON written to {args.json}")
    if args.graph:
        from ultraserver.offline.graph import dot, mermaid

        kind = GRAPH_FORMATS[suffix(args.graph)]
        graph = dot(plan) if kind == "dot" else mermaid(plan)
        # A Markdown file gets a fenced block, so GitHub and editors draw it.
        write_output(args.graph, f"```mermaid\n{graph}```\n" if suffix(args.graph) == ".md" else graph, "--graph")
        print(f"Dependency graph written to {args.graph}")
    if args.html:
        from ultraserver.offline.html_report import html_report

        write_output(args.html, html_report(plan, text), "--html")
        print(f"HTML report written to {args.html}")


def render_reasons(rendered: list[Problem]) -> list[str]:
    """Why the plan fails on its rendered checks (none without an error among them)."""
    failed = blocking(rendered)
    return [f"{len(failed)} rendered check(s) failed: see the warnings"] if failed else []


def whole_stack(project_dir: Path, stack: str, plan: Plan, settings: Settings | None) -> tuple[Plan, str]:
    """What --render judges: the plan, or for a separate-stack stack the platform's and kubernetes-layer/'s plans
    joined (the node groups of one, the releases and objects of the other), with a note saying so."""
    from ultraserver.offline import run_plan
    from ultraserver.offline.project import LAYER_PROJECT

    if settings is None or settings.kubernetes.layer != "separate-stack":
        return plan, ""
    folder = project_dir.resolve()
    if (folder / LAYER_PROJECT / "Pulumi.yaml").is_file():
        other, joined = folder / LAYER_PROJECT, plan.joined(run_plan(folder / LAYER_PROJECT, stack))
    elif folder.name == LAYER_PROJECT and (folder.parent / "Pulumi.yaml").is_file():
        other, joined = folder.parent, run_plan(folder.parent, stack).joined(plan)
    else:
        return plan, ""
    return joined, f" (the whole stack: this project's plan joined with {other}'s, as one cluster)"


def render_check(
    args: argparse.Namespace, whole: tuple[Plan, str], settings: Settings | None
) -> tuple[list[Problem], list[str]]:
    """With --render: the releases of ``whole`` (the plan, or a separate-stack stack's two plans joined: whole_stack)
    rendered by a real Helm and written to the folder; what the checks found, and the line saying where the manifests
    went."""
    if not args.render:
        return [], []
    plan, note = whole
    try:
        from ultraserver.offline.render import render_plan
    except ImportError as err:  # kubernetes-validate (the schemas) is an extra
        raise UsageError(
            Problem("--render", Described(f"no {err.name}"), "the render extra", "pip install 'ultraserver[render]'")
        ) from None
    from ultraserver.rehearse.pinned_files import pinned_bytes

    check_render_folder(args, plan)
    stack, written = render_plan(plan, settings, args.render, args.charts, pinned_bytes)
    return stack.problems, [f"Rendered manifests: {len(written)} release(s) written to {args.render}{note}."]


def check_render_folder(args: argparse.Namespace, plan: Plan) -> None:
    """UsageError unless --render's folder can take the plan's manifests (checked before Helm runs): an existing
    folder, or a new one in an existing folder, where each release's file is new, empty or an earlier --render
    manifest (--force overwrites it)."""
    from ultraserver.offline.helm_template import release_inputs
    from ultraserver.offline.render import MANIFEST_HEAD, manifest_file

    folder: Path = args.render
    if folder.exists() and not folder.is_dir():
        raise UsageError(Problem("--render", str(folder), "a folder, or a name for a new one", "pick another path"))
    if not folder.parent.is_dir():
        where = f"a new folder in an existing one, and {str(folder.parent)!r} does not exist"
        raise UsageError(Problem("--render", str(folder), where, "create it or pick another path"))

    def earlier(data: bytes) -> bool:
        return data.startswith(MANIFEST_HEAD.encode())

    inputs = plan_inputs(args)
    for release in release_inputs(plan) if folder.is_dir() else []:
        path = str(manifest_file(folder, release))
        check_output(path, None, "--render", earlier, inputs=inputs, force=args.force)


PLAN_TITLE = "Offline plan of"
"""The plan's title starts so: in the terminal and in the HTML report's <title>."""


def _earlier_graph(data: bytes) -> bool:
    from ultraserver.offline.graph import DOT_HEAD, MERMAID_HEAD

    heads = (f"{MERMAID_HEAD}\n", f"```mermaid\n{MERMAID_HEAD}\n", f"{DOT_HEAD}\n")
    return data.startswith(tuple(head.encode() for head in heads))


def _earlier_html(data: bytes) -> bool:
    return data.startswith(b"<!DOCTYPE html>") and f"<title>{PLAN_TITLE} ".encode() in data[:4096]


EARLIER_OUTPUT = {
    "--json": json_output("project", "stack", "resources", "policies"),
    "--graph": _earlier_graph,
    "--html": _earlier_html,
}
"""Whether an existing file is an earlier output of the option (it may be overwritten without --force)."""


def plan_inputs(args: argparse.Namespace) -> dict[Path, str]:
    """The files a plan reads, by what it reads them as: no output option may write onto them."""
    project = args.project_dir / "Pulumi.yaml"
    found = {project: "the project file", args.project_dir / "__main__.py": "the Pulumi program"}
    if project.is_file():
        from ultraserver.offline.project import load_project

        found[load_project(args.project_dir.resolve()).stack_file(args.stack)] = "the stack file"
    for option in ("deployed", "policy_config"):
        if getattr(args, option):
            found[Path(getattr(args, option))] = f"--{option.replace('_', '-')}"
    return found


def same_path(outputs: tuple[tuple[str | None, Any, str], ...]) -> None:
    """UsageError when two output options name one file (the second would silently overwrite the first)."""
    seen: dict[Path, str] = {}
    for target, _, flag in outputs:
        if not target:
            continue
        path = Path(target).resolve()
        if path in seen:
            raise UsageError(
                Problem(
                    flag,
                    target,
                    f"a file of its own (the file {seen[path]} writes too)",
                    f"give {flag} another path",
                )
            )
        seen[path] = flag


def version_notes(settings: Any, on: date) -> list[str]:
    """The plan's line about the stack's version set (none without settings)."""
    return [plan_note(settings.cluster.kubernetes_version, on)] if settings is not None else []


def control_plane_notes(settings: Settings | None) -> list[str]:
    """The EKS control-plane tier when it is not standard: which, why, and what is known of its price."""
    from ultraserver.facts.aws import control_plane

    if settings is None or settings.control_plane_tier == control_plane.STANDARD:
        return []
    chosen = settings.cluster.control_plane_tier
    nodes = sum(g.nodes_per_group * g.node_groups for g in settings.gpu_node_groups)
    why = f"auto for {nodes} GPU nodes" if chosen == control_plane.AUTO else "cluster.controlPlaneTier"
    return [f"Control plane tier: {settings.control_plane_tier} ({why}); {control_plane.PRICE_NOTE}."]


def upgrade_notes(target: str | None, settings: Settings | None, now: datetime) -> list[str]:
    """``--upgrade MINOR``: when each step of the upgrade runs around the blocks (offline/upgrade.py)."""
    if target is None:
        return []
    from ultraserver.offline.upgrade import plan_upgrade, target_problem

    if settings is None:
        raise UsageError(Problem("--upgrade", target, "a stack of this project's GPU platform", "pick such a stack"))
    problem = target_problem(settings, target, now)
    if problem is not None:
        raise UsageError(problem)
    return plan_upgrade(settings, target, now).lines()


def zone_notes(settings: Any) -> list[str]:
    """The plan's line saying which zones it took on trust: which zones exist differs by region and account."""
    if settings is None:
        return []
    network = () if settings.network.existing else settings.network.availability_zones  # else its subnets are checked
    zones = sorted({*network, *(g.availability_zone for g in settings.gpu_node_groups)})
    return [f"Zones not checked offline ({', '.join(zones)}): `ultraserver preflight` checks that they exist."]


def with_deployed_state(
    policy_config: dict[str, Any] | None, path: Path, stack: str | None = None
) -> tuple[dict[str, Any], str]:
    """The policy config with the upgrade rule fed the deployed state of ``path``, and a line saying what was read.

    ``path`` is a previous ``ultraserver plan --json`` output or a ``pulumi stack export`` file. With ``stack``, a
    file of another stack is refused: its groups match none of this stack's, so the rule would pass on nothing.
    """
    from ultraserver.policy.node_groups import UPGRADE_RULE, deployed_state

    resources = deployed_file(path, stack)
    state = deployed_state(resources)
    config = dict(policy_config or {})
    entry = config.get(UPGRADE_RULE)
    base = dict(entry) if isinstance(entry, dict) else ({"enforcementLevel": entry} if entry else {})
    config[UPGRADE_RULE] = {**base, "deployed": state}
    return config, f"Deployed state: {len(state)} capacity-block group(s) read from {path}."


def deployed_file(path: Path, stack: str | None = None) -> list[Any]:
    """The resources of a ``--deployed`` file (a ``pulumi stack export`` or a previous ``ultraserver plan --json``);
    with ``stack``, a file of another stack is refused: its resources match none of this stack's."""
    from ultraserver.policy.rolling import deployed_resources

    fix = "pass the file `pulumi stack export --file FILE` or `ultraserver plan --json FILE` wrote"
    data = load_json(path, "--deployed", MAX_STATE_BYTES, fix)
    resources = deployed_resources(data)
    # URNs read urn:pulumi:<stack>::<project>::...
    stacks = sorted({r.urn.split(":", 3)[2] for r in resources if r.urn.count(":") >= 3})
    if stack and stacks and stack not in stacks:
        raise ConfigError(
            Problem(
                "--deployed",
                Described(f"the state of stack {', '.join(stacks)} in {path}"),
                f"the state of stack {stack}",
                f"pass `pulumi stack export --stack {stack} --file FILE` or the `ultraserver plan --stack {stack} "
                "--json FILE` of the deployed commit",
            )
        )
    return resources


def deployed_access_entries(path: Path, stack: str | None = None) -> tuple[Any, ...]:
    """The access entries of a ``--deployed`` file, for preflight's ownership and migration checks."""
    from ultraserver.config.access_entries import ENTRY_TYPE, DeployedEntry

    return tuple(
        DeployedEntry(r.urn, str(r.inputs.get("principalArn", "")))
        for r in deployed_file(path, stack)
        if r.type == ENTRY_TYPE
    )


def refuse_pending_migration(settings: Settings | None, path: str | None, stack: str | None) -> None:
    """ConfigError when the admin list changes at a position the ``--deployed`` positional entries still hold
    (nothing to judge without the file, or for a project without the platform's settings)."""
    from ultraserver.config.access_entries import migration_problems

    if not path or settings is None:
        return
    entries = deployed_access_entries(Path(path), stack)
    problems = migration_problems(settings.cluster.name, settings.cluster.admin_principal_arns, entries)
    if problems:
        raise ConfigError(problems)


def policy_config_file(path: str | None) -> dict[str, Any] | None:
    """The --policy-config file as a mapping, or UsageError."""
    if not path:
        return None
    data = load_json(Path(path), "--policy-config")
    if not isinstance(data, dict):
        raise UsageError(
            Problem("--policy-config", Described(f"a JSON {type(data).__name__}"), "a JSON object", "correct the file")
        )
    return data


def stack_warnings(settings: Any, rendered: bool = False) -> list[Problem]:
    """Warnings that do not stop a plan: example values left in the stack, paid extended support, quotas.

    The plan prints them in its Warnings section; when stdout is piped to a file they also go to stderr, so the
    person who ran the command still sees them. ``rendered``: value keys that change nothing are judged by
    rendering (offline/render.py), in place of the static analysis of the templates.
    """
    from ultraserver.config.examples import example_value_warnings
    from ultraserver.config.rules import unread_chart_values
    from ultraserver.config.settings import settings_warnings

    found = [*example_value_warnings(settings), *settings_warnings(settings)]
    if rendered:
        static = unread_chart_values(settings, clock.now().date())
        found = [p for p in found if p not in static]
    if found and not sys.stdout.isatty():
        print(format_problems(found), file=sys.stderr)
    return found
