"""Launcher logs of the check jobs, in the tools' own formats, generated for one run (its ranks, nodes and sizes).

- nvbandwidth's multinode output: the preamble, 'Running <testcase>.', the matrix header and one row per rank, then
  'SUM <testcase> <total>' (the format of NVIDIA's published GB200 run: NVIDIA/cloud-native-docs
  gpu-operator/dra-cds.rst @354c6a4a, "Verify the nvbandwidth test output", which shows 797.65-798.25 GB/s between
  the GPUs of two GB200 nodes; the rehearsal uses 798.02 across nodes and 821.3 within one, UNVERIFIED for the
  latter).
- nccl-tests all_reduce_perf under ``mpirun --tag-output`` with NCCL_DEBUG=INFO: the header line, the transport
  line ('Using network Libfabric' over EFA, 'Using network Socket' when NCCL fell back to TCP, as
  aws/aws-k8s-tester#464 shows), one row per size from ``-b`` to ``-e`` by factor ``-f``, the out-of-bounds footer.
- an nvbandwidth run whose workers got no IMEX channel: the CUDA error NVIDIA/nvbandwidth#39 shows.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from ultraserver.builders.node_report import NODE_REPORT_PREFIX
from ultraserver.builders.nvbandwidth_job import TESTCASE

CROSS_NODE_GBYTES = 798.02
INTRA_NODE_GBYTES = 821.3


def node_report(nodes: Sequence[str]) -> str:
    """The launcher's first step: one line per worker node, before the tool runs."""
    return "".join(f"{NODE_REPORT_PREFIX}{node}\n" for node in nodes)


def _preamble(hosts: Sequence[str], gpus_per_node: int) -> list[str]:
    lines = ["nvbandwidth Version: v0.7", "Built from Git version: 8d103163", ""]
    for rank in range(len(hosts) * gpus_per_node):
        host, device = hosts[rank // gpus_per_node], rank % gpus_per_node
        lines.append(f"Process {rank} ({host}): device {device}: NVIDIA GB200 (0000000{device}:01:00)")
    return [*lines, "", f"Running {TESTCASE}."]


def nvbandwidth_output(
    hosts: Sequence[str], gpus_per_node: int, cross: float = CROSS_NODE_GBYTES, intra: float = INTRA_NODE_GBYTES
) -> str:
    """A finished multinode run over ``hosts`` with ``gpus_per_node`` ranks each: the full matrix and its sum."""
    size = len(hosts) * gpus_per_node
    lines = [*_preamble(hosts, gpus_per_node), "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)"]
    lines.append("  " + "".join(f"{c:>10}" for c in range(size)))
    total = 0.0
    for row in range(size):
        cells = []
        for col in range(size):
            if row == col:
                cells.append("N/A")
                continue
            value = intra if row // gpus_per_node == col // gpus_per_node else cross
            total += value
            cells.append(f"{value:.2f}")
        lines.append(f"{row:>2}" + "".join(f"{cell:>10}" for cell in cells))
    lines += ["", f"SUM {TESTCASE} {total:.2f}", ""]
    return "\n".join(lines)


def nccl_output(
    rank_hosts: Sequence[str],
    sizes: Sequence[int],
    busbw: float,
    network: str = "Libfabric",
    socket_hosts: Collection[str] = (),
    average: float | None = None,
) -> str:
    """all_reduce_perf over one rank per entry of ``rank_hosts`` (its node), one row per size (bytes), every row at
    ``busbw`` GB/s. Each rank reports its transport: 'Socket' on ``socket_hosts``, else ``network``. The footer's
    average is ``average`` when given (the tool averages every size, small ones included)."""
    low, high = (sizes[0], sizes[-1]) if sizes else (0, 0)
    ranks = len(rank_hosts)
    tag = "[1,0]<stdout>:"
    lines = [f"{tag}# nThread 1 nGpus 1 minBytes {low} maxBytes {high} step: 2(factor) warmup iters: 5 iters: 20"]
    for rank, host in enumerate(rank_hosts):
        where = f"[1,{rank}]<stdout>:{host}:{26 + rank}:{26 + rank} [{rank % 4}] NCCL INFO"
        lines.append(f"{where} NET/OFI Initializing aws-ofi-nccl 1.21.1")
        lines.append(f"{where} Using network {'Socket' if host in socket_hosts else network}")
        lines.append(f"{where} comm 0x55fb28c68190 rank {rank} nranks {ranks} cudaDev {rank % 4} - Init COMPLETE")
    lines.append(
        f"{tag}#       size         count      type   redop    root     time   algbw   busbw #wrong     time"
        "   algbw   busbw #wrong"
    )
    # all_reduce moves 2(n-1)/n of the data per rank: algbw = busbw * n / (2(n-1)), time = size / algbw.
    factor = ranks / (2 * (ranks - 1)) if ranks > 1 else 1.0
    algbw = busbw * factor
    for size in sizes:
        time_us = size / (algbw * 1e3) if algbw else 0.0
        lines.append(
            f"{tag}{size:>12}  {size // 4:>12}     float     sum      -1  {time_us:>7.1f}  {algbw:>6.2f}  {busbw:>6.2f}"
            f"      0  {time_us:>7.1f}  {algbw:>6.2f}  {busbw:>6.2f}      0"
        )
    lines += [
        f"{tag}# Out of bounds values : 0 OK",
        f"{tag}# Avg bus bandwidth    : {busbw if average is None else average:.2f}",
        "",
    ]
    return "\n".join(lines)


def message_sizes(low: int, high: int, factor: int) -> list[int]:
    """The sizes all_reduce_perf runs for ``-b low -e high -f factor``."""
    sizes, size = [], max(low, 1)
    while size <= high:
        sizes.append(size)
        size *= max(factor, 2)
    return sizes
