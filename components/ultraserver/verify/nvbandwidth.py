"""Reading nvbandwidth output: the bandwidth matrix parser and the pass/fail rule of the IMEX check."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ultraserver.facts.hardware.ultraservers import GPUS_PER_NODE, NVLINK_THRESHOLD_GBPS
from ultraserver.problems import ConfigError, Described, Problem


class BandwidthOutputError(ValueError):
    """nvbandwidth output that does not hold a well-formed bandwidth matrix: where, what was found there, what was
    expected, and the end of the log when there is no matrix at all (a verdict reads the fields, not the text)."""

    def __init__(self, where: str, found: str, expected: str, tail: str = "") -> None:
        self.where, self.found, self.expected, self.tail = where, found, expected, tail
        ends = f"; the log ends with: {tail}" if tail else ""
        super().__init__(f"{where}: {found}; expected {expected}{ends}")


@dataclass(frozen=True)
class BandwidthMatrix:
    """One nvbandwidth result matrix: values[row][column] in GB/s, None where not measured (N/A)."""

    testcase: str | None
    """Testcase named by the 'Running ...' line before the matrix, if any."""
    values: tuple[tuple[float | None, ...], ...]
    """Square matrix, indexed by global GPU (MPI rank)."""
    sum_gbps: float | None = None
    """The 'SUM <testcase> <value>' total, if printed."""

    @property
    def size(self) -> int:
        """Number of GPUs (rows)."""
        return len(self.values)


_HEADER = re.compile(r"memcpy (CE|SM) [A-Za-z0-9_]+\(row\) (->|<-|<->) [A-Za-z0-9_]+\(column\) bandwidth \(GB/s\)")
_RUNNING = re.compile(r"Running (\S+)\.")
_SUM = re.compile(r"SUM (\S+) (\S+)")


def _value(token: str, where: str) -> float | None:
    """One matrix cell: a finite, non-negative number or N/A."""
    if token == "N/A":
        return None
    try:
        value = float(token)
    except ValueError:
        raise BandwidthOutputError(where, repr(token), "a bandwidth in GB/s or N/A") from None
    if not math.isfinite(value) or value < 0:
        raise BandwidthOutputError(where, repr(token), "a valid bandwidth (a finite GB/s of 0 or more)")
    return value


def parse_bandwidth_matrix(log_text: str) -> BandwidthMatrix:
    """The first bandwidth matrix in nvbandwidth output; BandwidthOutputError if there is none or it is malformed."""
    lines = [line.strip() for line in log_text.splitlines()]
    start = next((i for i, line in enumerate(lines) if _HEADER.fullmatch(line)), None)
    if start is None:
        tail = " | ".join(line for line in lines[-5:] if line) or "(empty)"
        raise BandwidthOutputError(
            "nvbandwidth output",
            "no bandwidth matrix",
            "a line like 'memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)'",
            tail,
        )
    running = [m.group(1) for m in (_RUNNING.fullmatch(line) for line in lines[:start]) if m]
    testcase = running[-1] if running else None
    body = [(i, line) for i, line in enumerate(lines[start + 1 :], start + 2) if line]
    if not body:
        raise BandwidthOutputError(f"line {start + 1}", "a matrix header alone", "column indices 0 1 2 ... below it")
    rows = _matrix_rows(body)
    return BandwidthMatrix(testcase=testcase, values=rows, sum_gbps=_matrix_sum(body[len(rows) + 1 :]))


def _matrix_rows(body: list[tuple[int, str]]) -> tuple[tuple[float | None, ...], ...]:
    """The matrix under its header: the column indices line, then one numbered row of values per column."""
    col_line, col_text = body[0]
    columns = col_text.split()
    if columns != [str(i) for i in range(len(columns))]:
        raise BandwidthOutputError(f"line {col_line}", repr(col_text), "column indices 0 1 2 ...")
    size = len(columns)
    rows_raw = body[1 : size + 1]
    if len(rows_raw) < size:
        raise BandwidthOutputError(
            "matrix", f"{size} columns but only {len(rows_raw)} rows (output cut short?)", f"{size} rows"
        )
    rows: list[tuple[float | None, ...]] = []
    for expected, (line_no, text) in enumerate(rows_raw):
        tokens = text.split()
        if tokens[0] != str(expected) or len(tokens) != size + 1:
            raise BandwidthOutputError(f"line {line_no}", repr(text), f"row {expected} with {size} values")
        rows.append(tuple(_value(tok, f"line {line_no}, column {col}") for col, tok in enumerate(tokens[1:])))
    return tuple(rows)


def _matrix_sum(after: list[tuple[int, str]]) -> float | None:
    """The SUM line that follows the matrix, before the next test case or matrix; None when there is none."""
    for _, text in after:
        if _RUNNING.fullmatch(text) or _HEADER.fullmatch(text):
            return None
        match = _SUM.fullmatch(text)
        if match:
            return _value(match.group(2), "SUM line")
    return None


@dataclass(frozen=True)
class LinkResult:
    """Bandwidth of one GPU pair across nodes that missed the threshold."""

    source: int
    """Row GPU (global rank)."""
    target: int
    """Column GPU (global rank)."""
    gbps: float | None
    """Measured GB/s, None when nvbandwidth reported N/A (no path)."""


@dataclass(frozen=True)
class CheckResult:
    """Outcome of the IMEX bandwidth check."""

    passed: bool
    """True when every cross-node GPU pair reached the threshold."""
    threshold_gbps: float
    """Minimum GB/s asked of every cross-node pair."""
    nodes: int
    """Nodes covered by the matrix."""
    cross_node_pairs: int
    """GPU pairs on different nodes that were checked."""
    min_cross_node_gbps: float | None
    """Lowest measured cross-node bandwidth (None if nothing was measured)."""
    failures: tuple[LinkResult, ...] = ()
    """Pairs below the threshold or not measured."""
    problems: tuple[Problem, ...] = ()
    """Reasons the matrix could not be judged (wrong size, single node)."""

    def summary(self) -> str:
        """One human-readable line (plus one line per problem)."""
        if self.problems:
            return "IMEX check FAILED: " + "; ".join(str(p.value) for p in self.problems)
        state = "passed" if self.passed else "FAILED"
        lowest = "n/a" if self.min_cross_node_gbps is None else f"{self.min_cross_node_gbps:.2f} GB/s"
        text = (
            f"IMEX check {state}: {self.cross_node_pairs} cross-node GPU pairs on {self.nodes} nodes, "
            f"lowest {lowest}, threshold {self.threshold_gbps:.2f} GB/s"
        )
        if self.failures:
            shown = ", ".join(
                f"GPU{f.source}->GPU{f.target} " + ("N/A" if f.gbps is None else f"{f.gbps:.2f}")
                for f in self.failures[:8]
            )
            more = f" and {len(self.failures) - 8} more" if len(self.failures) > 8 else ""
            text += f"; below threshold: {shown}{more}"
        return text


def check_bandwidth(
    matrix: BandwidthMatrix, threshold_gbps: float = NVLINK_THRESHOLD_GBPS, gpus_per_node: int = GPUS_PER_NODE
) -> CheckResult:
    """Pass when every GPU pair on different nodes (ranks are packed `gpus_per_node` per node) reaches the threshold."""
    if threshold_gbps <= 0 or gpus_per_node < 1:
        raise ConfigError(
            [
                Problem(f"imex_check.{name}", value, "a positive number", "raise it")
                for name, value in (("threshold_gbps", threshold_gbps), ("gpus_per_node", gpus_per_node))
                if value <= 0
            ]
        )
    problems: list[Problem] = []
    rerun = "rerun with nodes >= 2"
    if matrix.size % gpus_per_node:
        problems.append(
            Problem(
                "matrix",
                Described(f"{matrix.size} GPUs is not a whole number of {gpus_per_node}-GPU nodes"),
                f"a multiple of {gpus_per_node} GPUs",
                rerun,
            )
        )
    nodes = matrix.size // gpus_per_node
    if nodes < 2:
        problems.append(
            Problem(
                "matrix",
                Described(f"the run covered {matrix.size} GPUs, fewer than two nodes: no cross-node pair to check"),
                "a matrix over at least two whole nodes",
                rerun,
            )
        )
    if problems:
        return CheckResult(False, threshold_gbps, nodes, 0, None, problems=tuple(problems))
    measured: list[float] = []
    failures: list[LinkResult] = []
    for row, values in enumerate(matrix.values):
        for col, value in enumerate(values):
            if row // gpus_per_node == col // gpus_per_node:
                continue
            if value is not None:
                measured.append(value)
            if value is None or value < threshold_gbps:
                failures.append(LinkResult(row, col, value))
    pairs = nodes * (nodes - 1) * gpus_per_node * gpus_per_node
    return CheckResult(
        passed=not failures,
        threshold_gbps=threshold_gbps,
        nodes=nodes,
        cross_node_pairs=pairs,
        min_cross_node_gbps=min(measured) if measured else None,
        failures=tuple(failures),
    )


_NOT_FOUND = re.compile(r"ERROR: Testcase (?:index )?(\S+?) (?:not found|out of bound)!")
_CUDA_ERROR = re.compile(r"\[(CUDA_ERROR_[A-Z_]+|NVML_ERROR[A-Za-z_]*)\][^\n]*?in expression ([A-Za-z0-9_]+)")
_WAIVED = re.compile(r"^(Waived|Waiving )", re.M)
_STATUS_ERROR = re.compile(r"^Error: (.*)$", re.M)


@dataclass(frozen=True)
class Diagnosis:
    """Why a launcher log holds no usable matrix, read from nvbandwidth's own failure lines."""

    reason: str
    """What the log shows."""
    fix: str
    """What to do about it."""


def diagnose(log_text: str, namespace: str = "<namespace>") -> Diagnosis:
    """The likely cause of a run without a matrix (nvbandwidth exits 0 on an unknown testcase, 1 on CUDA errors).

    Line formats: NVIDIA/nvbandwidth nvbandwidth.cpp (`Testcase <id> not found!`, `Waived`, `Error: <msg>`) and
    error_handling.h (`[CUDA_ERROR_...] ... in expression <call>`); the two CUDA failures are the published
    nvbandwidth issues #39 (no IMEX channel: cuMemCreate not permitted) and #44 (not one NVLink domain).
    """
    found = _NOT_FOUND.search(log_text)
    if found:
        return Diagnosis(
            f"nvbandwidth does not know testcase {found.group(1)!r} ({found.group(0)!r}); it printed no matrix",
            "use an nvbandwidth image built with -DMULTINODE=1 whose `nvbandwidth -l` lists the testcase, then "
            "rerun the check (pulumi up recreates the MPIJob)",
        )
    cuda = _CUDA_ERROR.search(log_text)
    if cuda and cuda.group(2) == "cuMemCreate":
        return Diagnosis(
            f"{cuda.group(1)} in cuMemCreate: the workers got no IMEX channel (fabric memory not permitted)",
            f"check the ComputeDomain is Ready and its IMEX daemons run: kubectl -n {namespace} get computedomains "
            "-o yaml; kubectl get pods -A -l resource.nvidia.com/computeDomain",
        )
    if cuda and cuda.group(2) == "cuMemSetAccess":
        return Diagnosis(
            f"{cuda.group(1)} in cuMemSetAccess: the workers are not in one NVLink domain",
            "check that the job's nodes share one nvidia.com/gpu.clique label and that the UltraServer's "
            "NVLink fabric is healthy (nvidia-smi -q | grep -A3 Fabric on a node)",
        )
    if cuda:
        return Diagnosis(
            f"{cuda.group(1)} in {cuda.group(2)}: nvbandwidth aborted",
            "read the launcher log and the node's GPU health (nvidia-smi, dmesg XID lines)",
        )
    if _WAIVED.search(log_text):
        return Diagnosis(
            "nvbandwidth waived the testcase (it saw a single MPI rank or GPU)",
            "check that mpirun started one rank per GPU on at least two nodes (slotsPerWorker, -np)",
        )
    status = _STATUS_ERROR.search(log_text)
    if status:
        return Diagnosis(f"nvbandwidth reported an error: {status.group(1)}", "read the launcher log")
    return Diagnosis(
        "the launcher log holds no bandwidth matrix (nvbandwidth did not run to the end)",
        "read the launcher log tail below; common causes are ssh between launcher and workers and missing IMEX",
    )


def log_tail(log_text: str, lines: int = 12) -> tuple[str, ...]:
    """The last non-empty lines of a log, as evidence."""
    kept = [line.rstrip() for line in log_text.splitlines() if line.strip()]
    return tuple(kept[-lines:])
