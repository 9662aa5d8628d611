"""The rule of a group's spares (``sparesPerUltraServer``): at least one active node left in each UltraServer."""

from __future__ import annotations

from datetime import date

from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.problems import Problem


def spares(g: GpuNodeGroupSettings, at: str, version: str, today: date) -> list[Problem]:
    """Fewer spares than the nodes each UltraServer runs: a job needs somewhere to run."""
    running = g.nodes_per_ultraserver
    if g.spares_per_ultraserver == 0 or g.spares_per_ultraserver < running:
        return []
    return [
        Problem(
            f"{at}.sparesPerUltraServer",
            g.spares_per_ultraserver,
            f"0 to {max(0, running - 1)}: fewer than the {running} nodes each {g.ultraserver_type} of the group runs"
            + (" (desiredSize)" if g.desired_size is not None else ""),
            f"set sparesPerUltraServer: {min(2, max(0, running - 1))} (or 0 for no spares)",
        )
    ]
