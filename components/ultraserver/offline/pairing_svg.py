"""Inline SVG of a GPU node's GPU-to-EFA pairing: which EFA devices share each GPU's PCIe root
(facts/hardware/devices.py).

The picture the fabric section of the HTML report shows per node group (every node of the group has the same
pairing), and only when the plan enforces the pairing: a claim template constrains devices to one PCIe root. That is
a claim of part of a node (builders/device_claims.py); whole-node claims and device plugins do not pair, so a picture
there would show what nothing asks for.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

from ultraserver.facts.hardware import devices, efa
from ultraserver.offline.resource import PlanResource

GPU_W, GPU_H, EFA_W, EFA_H, COLUMN_GAP, TOP = 96, 34, 74, 26, 18, 30
GPU_FILL, EFA_FILL = "#76b900", "#2e9d6a"


def pairing_enforced(resources: Sequence[PlanResource]) -> bool:
    """Whether a ResourceClaimTemplate of the plan constrains its devices to one PCIe root."""
    return any(
        c.get("matchAttribute") == devices.PCIE_ROOT_ATTRIBUTE
        for r in resources
        if r.type.endswith(":ResourceClaimTemplate")
        for c in _constraints(r.inputs)
    )


def _constraints(inputs: dict[str, Any]) -> list[dict[str, Any]]:
    spec = ((inputs.get("spec") or {}).get("spec") or {}).get("devices") or {}
    return [c for c in spec.get("constraints") or [] if isinstance(c, dict)]


def pairing_svg(name: str, instance_type: str, interfaces: Sequence[efa.EfaInterface]) -> str:
    """One column per GPU: the GPU, and below it the EFA devices (by network card) on its PCIe root. Empty when the
    catalog gives no pairing for the type."""
    pairs = devices.pairing(instance_type, interfaces)
    if not pairs:
        return ""
    column_w = max(GPU_W, EFA_W) + COLUMN_GAP
    rows = max(len(p.efa_cards) for p in pairs)
    width = 8 + column_w * len(pairs)
    efa_top = TOP + GPU_H + 24
    height = efa_top + max(rows, 1) * (EFA_H + 6) + 10
    title = f"{name}: GPU-to-EFA pairing per node ({devices.PCIE_ROOT_ATTRIBUTE})"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="pairing" role="img" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
        f'<text x="8" y="18" class="caption">{escape(title)}</text>',
    ]
    for pair in pairs:
        x = 8 + pair.gpu * column_w
        centre = x + GPU_W / 2
        parts.append(
            f'<g class="gpu" data-gpu="{pair.gpu}" data-efa-cards="{",".join(map(str, pair.efa_cards))}">'
            f"<title>GPU {pair.gpu}: EFA on cards {', '.join(map(str, pair.efa_cards)) or 'none'}</title>"
            f'<rect x="{x}" y="{TOP}" width="{GPU_W}" height="{GPU_H}" rx="4" fill="{GPU_FILL}" stroke="#374151"/>'
            f'<text x="{x + 6}" y="{TOP + 21}" fill="#ffffff">GPU {pair.gpu}</text></g>'
        )
        for row, card in enumerate(pair.efa_cards):
            y = efa_top + row * (EFA_H + 6)
            parts.append(
                f'<line x1="{centre:.1f}" y1="{TOP + GPU_H}" x2="{x + EFA_W / 2:.1f}" y2="{y}" stroke="#6b7280"/>'
                f'<g class="efa" data-card="{card}" data-gpu="{pair.gpu}"><title>EFA on card {card}, GPU {pair.gpu}'
                f'</title><rect x="{x}" y="{y}" width="{EFA_W}" height="{EFA_H}" rx="4" fill="{EFA_FILL}" '
                f'stroke="#374151"/><text x="{x + 6}" y="{y + 17}" fill="#ffffff">EFA c{card}</text></g>'
            )
    return "\n".join([*parts, "</svg>"])
