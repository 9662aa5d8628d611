"""ResourceSlices as the two DRA drivers publish them on a p6e-gb200 node: the rehearsal's builders, shared."""

from __future__ import annotations

from ultraserver.rehearse.slices import efa_slice, gpu_slice, node_slices

__all__ = ["efa_slice", "gpu_slice", "node_slices"]
