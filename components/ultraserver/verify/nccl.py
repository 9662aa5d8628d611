"""Reading nccl-tests all_reduce_perf output with NCCL_DEBUG=INFO: the size table, the footer and which network
NCCL chose.

Formats (published outputs kept in tests/fixtures/samples): rows `size count type redop [root] time algbw busbw
#wrong|error time algbw busbw #wrong|error` (out-of-place then in-place; `root` and integer `#wrong` since
nccl-tests ~2.11, float `error` before), footer `# Out of bounds values : <n> OK|FAILED` and
`# Avg bus bandwidth : <GB/s>` (NVIDIA/nccl-tests src/common.cu); lines may carry the `[1,<rank>]<stdout>:`
prefix of mpirun --tag-output or the `0: ` prefix of srun -l.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PREFIX = re.compile(r"^(\[[0-9]+,[0-9]+\]<std(out|err)>:|[0-9]+: )")
_OUT_OF_BOUNDS = re.compile(r"^# Out of bounds values\s*:\s*([0-9]+)")
_AVG = re.compile(r"^# Avg bus bandwidth\s*:\s*([0-9.eE+-]+)")
# EFA through aws-ofi-nccl: "NET/OFI Selected provider is efa" (older plugins: "Selected Provider is efa"),
# "Using network Libfabric" (older: "Using network AWS Libfabric"), channels "via NET/Libfabric/...".
_EFA = re.compile(r"NET/OFI Selected provider is efa|Using network (AWS )?Libfabric|via NET/(AWS )?Libfabric", re.I)
# The TCP fallback: "Using network Socket", channels "via NET/Socket/0", "NET/Socket : Using [0]eth0".
_SOCKET = re.compile(r"Using network Socket|NET/Socket", re.I)
_TYPES = {
    "int8",
    "uint8",
    "int32",
    "uint32",
    "int64",
    "uint64",
    "half",
    "float",
    "double",
    "bfloat16",
    "fp8_e4m3",
    "fp8_e5m2",
}


@dataclass(frozen=True)
class SizeRow:
    """One message size of the table."""

    size_bytes: int
    busbw_out_of_place: float | None
    """GB/s (nccl-tests' unit)."""
    busbw_in_place: float | None
    wrong: int
    """Wrong values reported by the row (0 with the older float `error` columns)."""

    @property
    def best_busbw(self) -> float | None:
        """The higher of the two bus bandwidths, None if neither was printed."""
        values = [v for v in (self.busbw_out_of_place, self.busbw_in_place) if v is not None]
        return max(values) if values else None


@dataclass(frozen=True)
class NcclRun:
    """What an all_reduce_perf log says."""

    rows: tuple[SizeRow, ...]
    out_of_bounds: int | None
    """From the footer; None when the run did not get that far."""
    avg_busbw: float | None
    uses_efa: bool
    """NCCL_DEBUG=INFO shows the OFI plugin with the efa provider or the Libfabric network."""
    uses_socket: bool
    """NCCL_DEBUG=INFO shows the TCP socket transport."""


def _float(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def _row(tokens: list[str]) -> SizeRow | None:
    if len(tokens) < 12 or not all(t.isascii() and t.isdigit() for t in tokens[:2]) or tokens[2] not in _TYPES:
        return None
    rest = tokens[4:]
    if len(rest) == 9:  # root column present
        rest = rest[1:]
    if len(rest) != 8:
        return None
    wrong = sum(int(t) for t in (rest[3], rest[7]) if t.isascii() and t.isdigit())
    return SizeRow(int(tokens[0]), _float(rest[2]), _float(rest[6]), wrong)


def parse_nccl_output(text: str) -> NcclRun:
    """The table, footer and network evidence of one all_reduce_perf log (never raises)."""
    rows: list[SizeRow] = []
    out_of_bounds = avg = None
    for raw in text.splitlines():
        line = _PREFIX.sub("", raw.rstrip()).strip()
        if match := _OUT_OF_BOUNDS.match(line):
            out_of_bounds = int(match.group(1))
        elif match := _AVG.match(line):
            avg = _float(match.group(1))
        elif line and not line.startswith("#") and (row := _row(line.split())):
            rows.append(row)
    return NcclRun(tuple(rows), out_of_bounds, avg, bool(_EFA.search(text)), bool(_SOCKET.search(text)))


@dataclass(frozen=True)
class EfaJudgement:
    """The EFA check's findings: (key, found, expected, fix) per problem; none means passed."""

    evidence: str
    findings: tuple[tuple[str, str, str, str], ...]


Finding = tuple[str, str, str, str]


def _network_findings(run: NcclRun) -> list[Finding]:
    """NCCL ran over TCP sockets, or the log shows no EFA transport at all."""
    if run.uses_socket:
        return [
            (
                "NCCL network",
                "TCP sockets (NET/Socket)",
                "Libfabric / NET/OFI with the efa provider",
                "NCCL fell back to TCP: check the pods request vpc.amazonaws.com/efa, /dev/infiniband is present, and "
                "the image's aws-ofi-nccl plugin loads (NCCL_DEBUG=INFO 'NET/Plugin' lines)",
            )
        ]
    if not run.uses_efa:
        return [
            (
                "NCCL network",
                "no NET/OFI efa or Libfabric line",
                "Libfabric / NET/OFI with the efa provider (NCCL_DEBUG=INFO)",
                "run with NCCL_DEBUG=INFO and an image with aws-ofi-nccl; read the log tail",
            )
        ]
    return []


def _table_findings(run: NcclRun, large: list[SizeRow]) -> list[Finding]:
    """The size table is missing, has no large-message row, holds wrong values, or never finished."""
    findings: list[Finding] = []
    if not run.rows:
        findings.append(("all_reduce_perf table", "no rows", "the size table", "read the log tail: the run failed"))
    elif not large:
        findings.append(
            ("all_reduce_perf table", "no row of 1 GiB or more", "large-message rows", "run with -b 1G -e 16G")
        )
    wrong = sum(r.wrong for r in run.rows) + (run.out_of_bounds or 0)
    if wrong:
        findings.append(("wrong values", str(wrong), "0", "a GPU or link corrupts data: run dcgmi diag on the nodes"))
    if run.rows and run.out_of_bounds is None:
        findings.append(("footer", "missing", "# Out of bounds values", "the run did not finish: read the log tail"))
    return findings


def judge_efa(run: NcclRun, min_bus_bandwidth_gbps: float, large_bytes: int) -> EfaJudgement:
    """Fail on no table, wrong values, no EFA / TCP sockets, or large-message bus bandwidth under the threshold."""
    large = [r for r in run.rows if r.size_bytes >= large_bytes and r.best_busbw is not None]
    findings = _network_findings(run) + _table_findings(run, large)
    best = large[-1] if large else None
    busbw = best.best_busbw if best else None
    if busbw is not None and busbw * 8 < min_bus_bandwidth_gbps:
        findings.append(
            (
                f"bus bandwidth at {best.size_bytes} B" if best else "bus bandwidth",
                f"{busbw:.2f} GB/s ({busbw * 8:.0f} Gbit/s)",
                f">= {min_bus_bandwidth_gbps:.0f} Gbit/s ({min_bus_bandwidth_gbps / 8:.2f} GB/s)",
                "check every node shows all its EFA devices (verify node-facts), the EFA security group allows all "
                "traffic within itself, and NCCL used every NIC (NET/OFI '... found N nics')",
            )
        )
    network = "EFA" if run.uses_efa and not run.uses_socket else "sockets" if run.uses_socket else "unknown"
    shown = f"{busbw:.2f} GB/s at {best.size_bytes} B" if best and busbw is not None else "no large-message row"
    evidence = f"network {network}; {shown} (threshold {min_bus_bandwidth_gbps / 8:.2f} GB/s); {len(run.rows)} sizes"
    return EfaJudgement(evidence, tuple(findings))
