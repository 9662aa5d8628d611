"""After ``ultraserver extend --yes``: the in-cluster reclaim drain follows the new end at once.

The drain reads its blocks from the ``<name>-blocks`` ConfigMap when each minute's pod starts
(``builders.reclaim_drain``); extend rewrites the extended blocks' end there through the Kubernetes API, so nobody has
to deploy before the old cut-off. The ConfigMap is declared without ``ignore_changes``: ignoring its data would keep
a block later added to the stack from ever reaching the drain. A ``pulumi up`` after the user set the new end in the
stack file declares the same data as the patched one. A ``pulumi up`` with the stack file still at the old end and
nothing else changed finds no difference from its state and leaves the patch alone (UNVERIFIED against a real
provider; ``--refresh``, or any other change to the blocks, would write the old end back, as it would put the old
scale-down back): extend says to update the stack file.
"""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime
from typing import Any, Protocol

from ultraserver.builders.reclaim_drain import BLOCKS_KEY, ReclaimDrainArgs, blocks_config_map_name, blocks_json
from ultraserver.incluster.drain import Block

_DEFAULTS = ReclaimDrainArgs(blocks=())
DRAIN_NAMESPACE = _DEFAULTS.namespace
"""Where the toolkit's ReclaimDrain puts its ConfigMaps (the component's defaults)."""
DRAIN_BLOCKS = blocks_config_map_name(_DEFAULTS.name)


class ConfigMaps(Protocol):
    """Reading and patching a ConfigMap's data (``verify.clients.KubernetesReader``)."""

    def config_map_data(self, namespace: str, name: str) -> dict[str, str]: ...
    def patch_config_map_data(self, namespace: str, name: str, data: dict[str, str]) -> None: ...


def extended_blocks(blocks: list[Block], ids: list[str], old_end: datetime, new_end: datetime) -> list[Block]:
    """The blocks with the new end on each block of the extended reservations that still ends at the old end."""
    return [replace(b, end=new_end) if b.end == old_end and set(b.reservations) & set(ids) else b for b in blocks]


def move_drain(
    config_maps: ConfigMaps, ids: list[str], old_end: datetime, new_end: datetime, namespace: str = DRAIN_NAMESPACE
) -> list[str]:
    """Patch the drain's blocks for the extension; a line per UltraServer moved (or why nothing was)."""
    data: dict[str, Any] = config_maps.config_map_data(namespace, DRAIN_BLOCKS)
    if BLOCKS_KEY not in data:
        return [f"drain: {namespace}/{DRAIN_BLOCKS} has no {BLOCKS_KEY}; the drain keeps the stack's blocks"]
    before = [Block.from_json(b) for b in json.loads(data[BLOCKS_KEY])]
    after = extended_blocks(before, ids, old_end, new_end)
    moved = [a for a, b in zip(after, before, strict=True) if a != b]
    if not moved:
        return [f"drain: no block in {namespace}/{DRAIN_BLOCKS} ends {old_end:%Y-%m-%d %H:%M} UTC; nothing moved"]
    config_maps.patch_config_map_data(namespace, DRAIN_BLOCKS, {BLOCKS_KEY: blocks_json(after)})
    return [
        f"drain: moved {b.ultraserver} ({', '.join(b.reservations)}) end {old_end:%Y-%m-%d %H:%M} -> "
        f"{b.end:%Y-%m-%d %H:%M} UTC in {namespace}/{DRAIN_BLOCKS}"
        for b in moved
    ]
