"""Inline SVG pictures for the HTML report: the dependency graph and a node's network cards.

Laid out here, in Python, so the report needs no Graphviz binary and no script at view time. Every text is
escaped; each picture is a standalone, well-formed SVG element.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ultraserver.facts.hardware import efa
from ultraserver.offline.engine import Plan
from ultraserver.offline.graph import edges

# Graph geometry (px). Text is monospace so its width can be computed from its length.
CHAR_W, LINE_H, PAD, GAP_X, GAP_Y = 6.6, 14, 8, 56, 14
# Network-card picture geometry (px).
CARD_W, CARD_H, CARD_GAP, GROUP_GAP, TOP = 58, 74, 6, 14, 30
# Interface type as the report names it: the launch template's "interface" is an ENA interface.
SHOWN_TYPE = {"interface": "ena", "efa": "efa", "efa-only": "efa-only"}
FILL = {"ena": "#5b8def", "efa": "#8e5bd9", "efa-only": "#2e9d6a", "unused": "#e5e7eb", "mixed": "#d98e2e"}


def layers(nodes: Sequence[str], pairs: set[tuple[str, str]]) -> dict[str, int]:
    """Each node's column: the longest chain of dependencies before it (sources in column 0)."""
    before: dict[str, list[str]] = {n: [] for n in nodes}
    for source, target in pairs:
        before[target].append(source)
    column: dict[str, int] = {}
    busy: set[str] = set()

    def depth(node: str) -> int:
        if node not in column:
            if node in busy:  # a cycle cannot happen in a Pulumi graph; do not loop if it does
                return 0
            busy.add(node)
            column[node] = 1 + max((depth(b) for b in before[node]), default=-1)
            busy.discard(node)
        return column[node]

    for node in nodes:
        depth(node)
    return column


def _order(columns: Mapping[str, int], pairs: set[tuple[str, str]], labels: Mapping[str, str]) -> list[list[str]]:
    """Nodes per column, each column sorted by the mean row of what it waits for (fewer crossing edges)."""
    width = max(columns.values(), default=-1) + 1
    grid: list[list[str]] = [[] for _ in range(width)]
    row: dict[str, float] = {}
    for index in range(width):
        members = [n for n in columns if columns[n] == index]

        def weight(node: str) -> tuple[float, str]:
            rows = [row[s] for s, t in pairs if t == node and s in row]
            return (sum(rows) / len(rows) if rows else 0.0, labels[node])

        grid[index] = sorted(members, key=weight)
        row.update({n: float(i) for i, n in enumerate(grid[index])})
    return grid


def _split(label: str) -> tuple[str, str]:
    """'name (provider:Type)' -> ('name', 'provider:Type')."""
    name, _, kind = label.rpartition(" (")
    return (name, kind.rstrip(")")) if name else (label, "")


def graph_svg(plan: Plan) -> str:
    """The plan's deployment-order graph, left to right: columns by dependency depth, arrows to what waits."""
    labels, pairs = edges(plan)
    columns = layers(sorted(labels), pairs)
    grid = _order(columns, pairs, labels)
    # Each column is as wide as its longest line, so one long name does not widen the whole picture.
    widths = [max((len(max(_split(labels[n]), key=len)) for n in col), default=10) * CHAR_W + 2 * PAD for col in grid]
    box_h = 2 * LINE_H + PAD
    height = max((len(c) for c in grid), default=1) * (box_h + GAP_Y) + GAP_Y
    width = sum(widths) + GAP_X * len(grid)
    at: dict[str, tuple[float, float, float]] = {}
    left = GAP_X / 2
    for index, column in enumerate(grid):
        for position, node in enumerate(column):
            at[node] = (left, GAP_Y + position * (box_h + GAP_Y), widths[index])
        left += widths[index] + GAP_X
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" role="img" width="{width:.0f}" '
        f'height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" aria-label="dependency graph">',
        "<title>Deployment order: an arrow points from a resource to what waits for it</title>",
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#6b7280"/></marker></defs>',
    ]
    for source, target in sorted(pairs):
        (x1, y1, box_w), (x2, y2, _) = at[source], at[target]
        x1, y1, y2 = x1 + box_w, y1 + box_h / 2, y2 + box_h / 2
        middle = (x1 + x2) / 2
        parts.append(
            f'<path class="edge" d="M {x1:.1f} {y1:.1f} C {middle:.1f} {y1:.1f}, {middle:.1f} {y2:.1f}, '
            f'{x2:.1f} {y2:.1f}" fill="none" stroke="#9ca3af" marker-end="url(#arrow)"/>'
        )
    for node in sorted(at):
        x, y, box_w = at[node]
        name, kind = _split(labels[node])
        parts.append(
            f'<g class="node" data-urn="{escape(node)}"><title>{escape(node)}</title>'
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{box_w:.1f}" height="{box_h}" rx="4" fill="#f9fafb" '
            'stroke="#4b5563"/>'
            f'<text x="{x + PAD:.1f}" y="{y + LINE_H:.1f}" class="name">{escape(name)}</text>'
            f'<text x="{x + PAD:.1f}" y="{y + 2 * LINE_H:.1f}" class="kind">{escape(kind)}</text></g>'
        )
    return "\n".join([*parts, "</svg>"])


def card_types(interfaces: Sequence[efa.EfaInterface]) -> dict[int, str]:
    """The interface type shown on each used card (several interfaces on one card joined with '+')."""
    found: dict[int, list[str]] = {}
    for interface in sorted(interfaces, key=lambda i: (i.network_card_index, i.device_index)):
        shown = SHOWN_TYPE.get(interface.interface_type, interface.interface_type)
        found.setdefault(interface.network_card_index, []).append(shown)
    return {card: "+".join(kinds) for card, kinds in found.items()}


def _nci_group_of(facts: Mapping[str, Any]) -> dict[int, int]:
    """Card index -> GPU NCI group number, for types whose catalog entry names NCI groups."""
    groups: list[list[int]] = facts.get("nci_groups") or []
    return {card: index for index, group in enumerate(groups) for card in group}


def cards_svg(name: str, instance_type: str, interfaces: Sequence[efa.EfaInterface]) -> str:
    """One node's network cards: index, NCI group, interface type and bandwidth; unused cards greyed out."""
    facts = efa.instance_facts(instance_type)
    cards = sorted(facts["cards"], key=lambda c: c["index"])
    nci = _nci_group_of(facts)
    shown = card_types(interfaces)
    # Cards sharing an EFA bandwidth budget sit together (on a GB200 node cards 1-4 serve one GPU).
    budget = {card: i for i, group in enumerate(facts.get("efa_bandwidth_groups") or []) for card in group["cards"]}
    x, placed, last = 8.0, [], None
    for card in cards:
        group = budget.get(card["index"], -1)
        if last is not None and group != last:
            x += GROUP_GAP
        placed.append((x, card))
        x += CARD_W + CARD_GAP
        last = group
    width, height = x + 8, TOP + CARD_H + 40
    title = f"{name}: {instance_type}, {len(cards)} network cards"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="cards" role="img" width="{width:.0f}" height="{height}" '
        f'viewBox="0 0 {width:.0f} {height}" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<text x="8" y="18" class="caption">{escape(title)}</text>',
    ]
    for x, card in placed:
        index = card["index"]
        kind = shown.get(index, "unused")
        fill = FILL.get(kind, FILL["mixed"])
        nci_name = f"NCI {nci[index]}" if index in nci else "-"
        text_fill = "#111827" if kind == "unused" else "#ffffff"
        parts.append(
            f'<g class="card" data-card="{index}" data-type="{escape(kind)}" data-nci="{escape(nci_name)}">'
            f"<title>card {index}: {escape(kind)}, {card['bandwidth_gbps']} Gbps, {escape(nci_name)}, accepts "
            f"{escape(', '.join(card['interface_types']))}</title>"
            f'<rect x="{x:.1f}" y="{TOP}" width="{CARD_W}" height="{CARD_H}" rx="4" fill="{fill}" stroke="#374151"/>'
            f'<text x="{x + 4:.1f}" y="{TOP + 15}" fill="{text_fill}" class="idx">card {index}</text>'
            f'<text x="{x + 4:.1f}" y="{TOP + 32}" fill="{text_fill}">{escape(kind)}</text>'
            f'<text x="{x + 4:.1f}" y="{TOP + 49}" fill="{text_fill}">{card["bandwidth_gbps"]}G</text>'
            f'<text x="{x + 4:.1f}" y="{TOP + 66}" fill="{text_fill}">{escape(nci_name)}</text></g>'
        )
    legend = [(k, FILL[k]) for k in ("ena", "efa", "efa-only", "unused")]
    for i, (kind, colour) in enumerate(legend):
        lx = 8 + i * 110
        parts.append(
            f'<g class="legend"><rect x="{lx}" y="{TOP + CARD_H + 14}" width="12" height="12" fill="{colour}" '
            f'stroke="#374151"/><text x="{lx + 18}" y="{TOP + CARD_H + 24}">{escape(kind)}</text></g>'
        )
    return "\n".join([*parts, "</svg>"])
