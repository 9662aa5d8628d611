"""``ultraserver versions``: the tested version set, with each entry's support status on a date (no AWS call); with
``--check``, each pin against AWS and the chart repositories (preflight/drift.py)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
from datetime import date
from typing import Any

from ultraserver import clock
from ultraserver.cli.exits import EXIT_FAILED, EXIT_OK, UsageError
from ultraserver.cli.outputs import check_output, json_output, write_output
from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.pins import version_set as vs
from ultraserver.problems import ERROR, Described, Problem, format_problems, plain


def rows(on: date) -> list[dict[str, str]]:
    """The set as plain rows, each with its status on the date."""
    return [
        {
            "kind": entry.kind,
            "name": entry.name,
            "minor": entry.minor,
            "version": entry.version or "-",
            "status": vs.status(entry, on),
            "statusSource": vs.status_source(entry),
            "source": entry.source,
            "checked": entry.checked.isoformat(),
            "home": entry.home,
            **_newest(entry),
        }
        for entry in vs.version_set()
    ]


def _newest(entry: vs.VersionEntry) -> dict[str, str]:
    """The entry's re-check of the newest upstream release: newest version found, its source, why the pin stays."""
    found = entry.newest
    if found is None:
        return {}
    return {
        "newest": found.newer or entry.version,
        "newestSource": found.source,
        "newestChecked": found.checked.isoformat(),
        "pinKeptBecause": found.pin_kept_because,
    }


NOTE_WIDTH = 118
"""Where the notes under a row wrap."""


def upstream(row: dict[str, str]) -> str:
    """What the row says of the newest upstream release: newer and not adopted (why), the pin, or not re-checked."""
    if row.get("pinKeptBecause"):
        return f"newer upstream: {row['newest']} (not adopted: {row['pinKeptBecause']})"
    if "newest" in row:
        return f"newest upstream: the pin ({row['newestChecked']})"
    return "newest upstream: not re-checked here (`ultraserver versions --check` asks AWS and the registries)"


def text(table: list[dict[str, str]], on: date, problems: list[Problem]) -> str:
    """The set as aligned text, grouped by kind, then what the kubeVersion check found."""
    lines = [f"Tested version set (checked {vs.CHECKED}); support status on {on}:"]
    kind, width = "", {}
    for r in table:
        if r["kind"] != kind:
            # Columns per kind: an image digest or an AMI's long name widens its own rows, not every row.
            kind = r["kind"]
            group = [row for row in table if row["kind"] == kind]
            width = {k: max(len(row[k]) for row in group) for k in ("name", "minor", "version", "status")}
            lines.append(f"\n{kind}")
        cells = [r[k].ljust(width[k]) for k in ("name", "minor", "version", "status") if width[k]]
        lines.append(f"  {'  '.join(cells)}".rstrip())
        # The source and the longer notes go below the row, wrapped, so a piped table keeps its columns.
        notes = [f"source: {r['source']} (checked {r['checked']})"]
        notes += [f"status: {r['statusSource']}"] if r["statusSource"] and r["kind"] == "chart" else []
        notes.append(upstream(r))
        lines += [textwrap.fill(n, NOTE_WIDTH, initial_indent="      ", subsequent_indent="        ") for n in notes]
    lines.append("")
    lines += [format_problems(problems, {ERROR: "FAIL"})] if problems else []
    return "\n".join(lines) + "\n"


VERSIONS_JSON = json_output("checked", "on", "entries", "problems")
"""An earlier ``versions --json`` document (overwritten without --force)."""


def cmd_versions(args: argparse.Namespace) -> int:
    """Print the set; exit 1 when a chart's kubeVersion excludes the chosen Kubernetes minor."""
    check_output(args.json, None, "--json", VERSIONS_JSON, force=args.force)
    if not eks_versions.is_minor(args.kubernetes_version):
        raise UsageError(
            Problem(
                "--kubernetes-version",
                args.kubernetes_version,
                f"a Kubernetes minor such as {eks_versions.DEFAULT_TEXT}",
                "give a minor",
            )
        )
    with clock.pinned(args.now):
        on = clock.now().date()
    if args.check:
        return drift_check(args, on)
    table = rows(on)
    problems = vs.kube_version_problems(args.kubernetes_version)
    sys.stdout.write(text(table, on, problems))
    if args.json:
        document = {
            "checked": vs.CHECKED.isoformat(),
            "on": on.isoformat(),
            "entries": table,
            "problems": [plain(p) for p in problems],
        }
        write_output(args.json, json.dumps(document, indent=2) + "\n", "--json")
    return EXIT_FAILED if problems else EXIT_OK


def stack_rows(kubernetes_version: str, on: date) -> list[dict[str, str]]:
    """The set's entries that apply to one Kubernetes minor (its own rows and the minor-independent ones)."""
    return [
        r
        for r in rows(on)
        if r["minor"] in ("", kubernetes_version) and (r["kind"] != "kubernetes" or r["version"] == kubernetes_version)
    ]


def plan_note(kubernetes_version: str, on: date) -> str:
    """One line for the plan: the stack's minor and every entry of its set that is not supported on the date."""
    table = stack_rows(kubernetes_version, on)
    minor = next(r["status"] for r in table if r["kind"] == "kubernetes")
    late = [
        f"{r['name']} {r['version']} ({r['status']})"
        for r in table
        if r["status"].startswith((vs.DEPRECATED, vs.END_OF_SUPPORT))
    ]
    tail = f"; not supported: {', '.join(late)}" if late else "; every entry with a support policy is supported"
    return f"Version set on {on}: Kubernetes {kubernetes_version} {minor}{tail} (`ultraserver versions` lists all)."


def drift_check(args: argparse.Namespace, on: date) -> int:
    """``versions --check``: each pin of the minor against AWS and the chart repositories; exit 1 when one fails."""
    from ultraserver.preflight import drift
    from ultraserver.preflight.clients import PreflightAccessError, make_clients
    from ultraserver.preflight.registries import http_get

    region = args.region or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if not region:
        raise UsageError(Problem("--region", None, "an AWS region", "pass --region or set AWS_REGION"))
    if args.warning_days < 0:
        raise UsageError(Problem("--warning-days", args.warning_days, "0 or more days", "pass e.g. 90"))
    try:
        clients = make_clients(region, args.profile, args.endpoint_url)
        found = drift.check(clients.ssm, clients.eks, http_get, args.kubernetes_version, on, args.warning_days)
    except PreflightAccessError as exc:
        raise UsageError(Problem("AWS", Described(str(exc)), "usable AWS credentials", "fix the credentials")) from None
    sys.stdout.write(drift_text(found, args.kubernetes_version, on, args.warning_days))
    if args.json:
        document = {"checked": on.isoformat(), "on": on.isoformat(), "entries": [plain(d) for d in found]}
        document["problems"] = [d.name for d in found if d.failing]
        write_output(args.json, json.dumps(document, indent=2) + "\n", "--json")
    return EXIT_FAILED if drift.failed(found) else EXIT_OK


def drift_text(found: list[Any], minor: str, on: date, warning_days: int) -> str:
    """The check as aligned text: each pin, the newest upstream, the verdict; failing lines marked FAIL."""
    lines = [f"Pins of Kubernetes {minor} against AWS and the chart repositories on {on} (warning window: "]
    lines[0] += f"{warning_days} days):"
    width = {k: max([len(getattr(d, k)) for d in found] + [1]) for k in ("name", "pinned", "newest")}
    for d in found:
        mark = "FAIL" if d.failing else "    "
        cells = [d.kind.ljust(10), d.name.ljust(width["name"]), d.pinned.ljust(width["pinned"])]
        cells.append(f"newest {(d.newest or '?').ljust(width['newest'])}")
        lines.append(f"{mark} {'  '.join(cells)}  {d.verdict}" + (f" ({d.detail})" if d.detail else ""))
    return "\n".join(lines) + "\n"
