"""The NCCL check's verdict: all_reduce_perf over one UltraServer's ComputeDomain (MNNVL and NVLS on) finished
without wrong values and reached the stack's bus bandwidth threshold (ncclCheck.minBusBandwidthGbytes, GB/s)."""

from __future__ import annotations

from ultraserver.builders.efa_check import LARGE_MESSAGE_BYTES
from ultraserver.problems import Problem
from ultraserver.verify.clients import ClusterReader
from ultraserver.verify.fabric import read_launcher, reported_nodes
from ultraserver.verify.nccl import NcclRun, SizeRow, parse_nccl_output
from ultraserver.verify.nvbandwidth import log_tail
from ultraserver.verify.verdict import NCCL, Verdict


def _table_problems(where: str, run: NcclRun, large: list[SizeRow]) -> list[Problem]:
    """No large-message row, wrong values, or no footer (the run did not finish)."""
    found: list[Problem] = []
    if not large:
        found.append(
            Problem(f"{where} all_reduce_perf table", "no row of 1 GiB or more", "large-message rows", "read the log")
        )
    wrong = sum(r.wrong for r in run.rows) + (run.out_of_bounds or 0)
    if wrong:
        found.append(Problem(f"{where} wrong values", wrong, "0", "a GPU or NVLink corrupts data: run dcgmi diag"))
    if run.rows and run.out_of_bounds is None:
        found.append(Problem(f"{where} footer", "missing", "# Out of bounds values", "the run did not finish"))
    return found


def judge_all_reduce(run: NcclRun, job: str, min_gbytes: float) -> tuple[list[Problem], str]:
    """Problems and evidence of one run: a table with 1 GiB+ rows, no wrong values, the footer, the threshold."""
    where = f"MPIJob {job}"
    large = [r for r in run.rows if r.size_bytes >= LARGE_MESSAGE_BYTES and r.best_busbw is not None]
    found = _table_problems(where, run, large)
    best = max(large, key=lambda r: r.best_busbw or 0.0) if large else None
    busbw = best.best_busbw if best else None
    if best is not None and busbw is not None and busbw < min_gbytes:
        found.append(
            Problem(
                f"{where} bus bandwidth at {best.size_bytes} B",
                f"{busbw:.2f} GB/s",
                f">= {min_gbytes:.2f} GB/s (ncclCheck.minBusBandwidthGbytes)",
                "check the ComputeDomain's IMEX daemons are ready, NCCL used NVLS/MNNVL (NCCL_DEBUG=INFO 'NVLS' and "
                "'MNNVL' lines) and every node shows all its GPUs; calibrate the threshold on a healthy run",
            )
        )
    shown = f"{busbw:.2f} GB/s at {best.size_bytes} B" if best and busbw is not None else "no large-message row"
    return found, f"{shown} (threshold {min_gbytes:.2f} GB/s); {len(run.rows)} sizes"


def nccl_verdict(reader: ClusterReader, group: str, job: str, namespace: str, min_gbytes: float) -> Verdict:
    """The verdict of one UltraServer's NCCL run, read from its finished launcher."""
    launcher = read_launcher(reader, namespace, job, domain=True)
    if launcher.problems:
        return Verdict(group, NCCL, f"MPIJob {job}: no finished run to judge", launcher.problems)
    found, evidence = judge_all_reduce(parse_nccl_output(launcher.log), job, min_gbytes)
    found.extend(launcher.exit_problems(namespace))
    nodes = len(reported_nodes(launcher.log))
    text = f"MPIJob {job} over {nodes} nodes (launcher {launcher.phase}): {evidence}"
    return Verdict(group, NCCL, text, tuple(found), log_tail(launcher.log) if found else ())
