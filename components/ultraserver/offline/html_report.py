"""``ultraserver plan --html FILE``: the plan as one self-contained HTML page.

No network at view time: the CSS is inline, the pictures are inline SVG laid out in offline/svg.py, no
script, no external font. Every value from the plan or the settings is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from ultraserver.offline.engine import Plan
from ultraserver.offline.groups import GroupView
from ultraserver.offline.pairing_svg import pairing_enforced, pairing_svg
from ultraserver.offline.report import PlanText
from ultraserver.offline.svg import cards_svg, graph_svg

STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #111827; }
h1 { font-size: 20px; } h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #e5e7eb; }
h3 { font-size: 15px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { text-align: left; vertical-align: top; padding: 3px 10px; border-bottom: 1px solid #f3f4f6; }
th { color: #374151; white-space: nowrap; }
.clock { font-family: ui-monospace, monospace; }
.future { color: #92400e; } .active { color: #166534; } .ended { color: #991b1b; }
.scroll { overflow-x: auto; border: 1px solid #e5e7eb; padding: 6px; }
svg text { font: 11px ui-monospace, "DejaVu Sans Mono", monospace; }
svg .kind { fill: #6b7280; } svg .caption { font-weight: bold; }
pre { background: #f9fafb; padding: 8px; overflow-x: auto; }
ul.warnings li { color: #92400e; }
"""


def _rows(view: GroupView) -> str:
    cells = []
    for label, value in view.rows:
        state = value.split(":", 1)[0] if label.startswith("window") else ""
        css = f' class="{escape(state)}"' if state in ("future", "active", "ended") else ""
        cells.append(f"<tr><th>{escape(label)}</th><td{css}>{escape(value)}</td></tr>")
    return "\n".join(cells)


def _group(view: GroupView, paired: bool) -> str:
    pairing = (
        f'<div class="scroll">\n{pairing_svg(view.name, view.instance_type, view.interfaces)}\n</div>\n'
        if paired
        else ""
    )
    return (
        f'<section class="group" id="group-{escape(view.name)}">\n<h3>GPU node group {escape(view.name)}</h3>\n'
        f'<table class="group-table">\n{_rows(view)}\n</table>\n'
        f'<div class="scroll">\n{cards_svg(view.name, view.instance_type, view.interfaces)}\n</div>\n'
        f"{pairing}</section>"
    )


def _list(items: Sequence[str], css: str, empty: str) -> str:
    if not items:
        return f"<p>{escape(empty)}</p>"
    return f'<ul class="{css}">' + "".join(f"<li>{escape(i)}</li>" for i in items) + "</ul>"


def _policies(plan: Plan, text: PlanText) -> str:
    rows = "".join(
        f"<tr><td>{escape(p['level'])}</td><td>{escape(p['policy'])}</td><td>{escape(p['message'])}</td>"
        f"<td>{escape(p['urn'])}</td></tr>"
        for p in plan.policies
    )
    table = (
        f'<table class="policies"><tr><th>level</th><th>policy</th><th>message</th><th>resource</th></tr>{rows}</table>'
        if rows
        else ""
    )
    return f"<pre>{escape(text.policies)}</pre>{table}"


def html_report(plan: Plan, text: PlanText) -> str:
    """The whole page: groups with their card pictures, summary, warnings, policies, placeholders, graph, tree."""
    paired = pairing_enforced(plan.resources)
    groups = "\n".join(_group(v, paired) for v in text.groups) or "<p>No GPU node groups in this plan.</p>"
    notes = "".join(f"<p>{escape(n)}</p>" for n in text.notes)
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{escape(text.title)}</title>
<style>{STYLE}</style>
</head>
<body>
<h1>{escape(text.title)}</h1>
<p class="clock">{escape(text.clock)}</p>
<h2 id="groups">GPU node groups</h2>
{groups}
<h2 id="summary">Summary</h2>
<pre>{escape(text.summary)}</pre>
<h2 id="warnings">Warnings</h2>
{_list([str(w) for w in text.warnings], "warnings", "none")}
<h2 id="policies">Policy results</h2>
{notes}{_policies(plan, text)}
<h2 id="placeholders">Offline placeholders (what AWS would answer at deploy time)</h2>
{_list(text.placeholders, "placeholders", "none")}
<h2 id="graph">Deployment order</h2>
<p>An arrow points from a resource to what waits for it; plumbing is folded into the component that owns it.</p>
<div class="scroll">
{graph_svg(plan)}
</div>
<h2 id="tree">Resources in dependency order</h2>
<pre>{escape(text.tree)}</pre>
</body>
</html>
"""
