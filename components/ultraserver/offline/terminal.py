"""The terminal plan: per-GPU-group tables, then warnings, policy results and the resource tree.

Rendering only; the rows come from offline/groups.py. Colour and box styles only on a terminal: piped output
is plain text, and ``NO_COLOR`` (https://no-color.org) turns every escape sequence off.
"""

from __future__ import annotations

import io
import os
from collections.abc import Mapping
from typing import IO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ultraserver.facts.capacity.capacity_blocks import ACTIVE, ENDED, FUTURE
from ultraserver.offline.groups import GroupView
from ultraserver.offline.report import PlanText
from ultraserver.problems import format_problems

# Width of piped output: no row wraps, so a file or grep sees each value (an SSM parameter path, a schedule) whole;
# tables are only as wide as their content.
PIPE_WIDTH = 1000
STATE_STYLES = {FUTURE: "yellow", ACTIVE: "green", ENDED: "red"}


def console_for(stream: IO[str], env: Mapping[str, str] | None = None) -> Console:
    """A console that styles only a terminal, and not even that with NO_COLOR set.

    It writes to a buffer; :func:`print_plan` hands the text to ``stream`` without rich's trailing padding.
    """
    env = os.environ if env is None else env
    tty = stream.isatty()
    plain = not tty or bool(env.get("NO_COLOR"))
    return Console(
        file=io.StringIO(),
        force_terminal=tty,
        color_system=None if plain else "auto",
        width=None if tty else PIPE_WIDTH,
        highlight=False,
        markup=False,
        emoji=False,
        _environ=dict(env),  # the environment rich itself reads (TERM, NO_COLOR, COLUMNS): the one given here
    )


def group_table(view: GroupView) -> Table:
    """One GPU group's rows as a two-column table."""
    table = Table(
        title=f"GPU node group {view.name}",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_header=False,
        pad_edge=False,
    )
    table.add_column("what", style="bold", no_wrap=True)
    table.add_column("value", overflow="fold")
    for label, value in view.rows:
        state = value.split(":", 1)[0] if label.startswith("window") else ""
        table.add_row(Text(label), Text(value, style=STATE_STYLES.get(state, "")))
    return table


def print_plan(console: Console, text: PlanText, stream: IO[str]) -> None:
    """Print the plan to ``stream``: header and clock, group tables, summary, warnings, policies, placeholders, tree."""
    render_plan(console, text)
    written = console.file.getvalue()  # type: ignore[attr-defined]
    stream.write("\n".join(line.rstrip(" ") for line in written.split("\n")))
    stream.flush()


def render_plan(console: Console, text: PlanText) -> None:
    """Render the plan into the console's buffer."""
    console.print(Text(text.title, style="bold"))
    console.print(Text(text.clock))
    for view in text.groups:
        console.print()
        console.print(group_table(view))
    console.print()
    console.print(Text(text.summary))
    console.print()
    console.print(Text("Warnings:", style="bold"))
    for line in format_problems(text.warnings).splitlines() or ["none"]:
        console.print(Text(f"  {line}", style="yellow" if text.warnings else ""), soft_wrap=True)
    console.print()
    for note in text.notes:
        console.print(Text(note), soft_wrap=True)
    console.print(Text(text.policies), soft_wrap=True)
    if text.placeholders:
        console.print()
        console.print(Text("Offline placeholders (what AWS would answer at deploy time):", style="bold"))
        for line in text.placeholders:
            console.print(Text(f"  {line}"), soft_wrap=True)
    console.print()
    console.print(Text("Resources in dependency order (under their components):", style="bold"))
    console.print(Text(text.tree), soft_wrap=True)
