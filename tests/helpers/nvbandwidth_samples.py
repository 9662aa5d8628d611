"""Realistic nvbandwidth launcher logs for a 2-node x 4-GPU run, built cell by cell."""

from __future__ import annotations

from ultraserver.builders.nvbandwidth_job import TESTCASE

GPUS = 8  # 2 nodes x 4 GPUs


def matrix_values(intra: float = 821.3, cross: float = 798.02, overrides: dict | None = None) -> list[list[str]]:
    """Cell texts of an 8x8 matrix: N/A on the diagonal, `intra` within a node, `cross` between nodes."""
    cells = []
    for row in range(GPUS):
        line = []
        for col in range(GPUS):
            value = "N/A" if row == col else f"{intra if row // 4 == col // 4 else cross:.2f}"
            line.append((overrides or {}).get((row, col), value))
        cells.append(line)
    return cells


def nvbandwidth_log(cells: list[list[str]], with_sum: bool = True) -> str:
    """Launcher log shaped like nvbandwidth's multinode output (preamble, matrix, SUM, note)."""
    lines = [
        "nvbandwidth Version: v0.7",
        "Built from Git version: 8d103163",
        "",
    ]
    lines += [
        f"Process {rank} (nvbandwidth-test-worker-{rank // 4}): device {rank % 4}: NVIDIA GB200 (0000000{rank}:01:00)"
        for rank in range(len(cells))
    ]
    lines += ["", f"Running {TESTCASE}.", "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)"]
    lines.append("   " + "".join(f"{col:>10}" for col in range(len(cells))))
    lines += [f"{row:>3}" + "".join(f"{cell:>10}" for cell in line) for row, line in enumerate(cells)]
    if with_sum:
        total = sum(float(c) for line in cells for c in line if c != "N/A")
        lines += ["", f"SUM {TESTCASE} {total:.2f}"]
    lines += ["", "NOTE: results may vary."]
    return "\n".join(lines) + "\n"
