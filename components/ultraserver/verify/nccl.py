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

from ultraserver.facts.pins.ami import GRDMA_TOPO_OVERRIDE, NVIDIA_PARAMS_FILE

_PREFIX = re.compile(r"^(\[[0-9]+,[0-9]+\]<std(out|err)>:|[0-9]+: )")
# Who wrote a line: the rank of mpirun --tag-output ("[1,<rank>]<stdout>:") or srun -l ("<rank>: "), else the host of
# NCCL's own "<host>:<pid>:<tid> [<dev>] NCCL INFO" prefix.
_RANK = re.compile(r"^\[[0-9]+,([0-9]+)\]<std(?:out|err)>:|^([0-9]+): ")
_HOST = re.compile(r"^([^\s:]+):[0-9]+:[0-9]+ \[[0-9]+\] NCCL")
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
    socket_ranks: tuple[str, ...] = ()
    """The ranks (or hosts, without a rank prefix) whose lines show the socket transport."""
    efa_ranks: tuple[str, ...] = ()
    """The ranks (or hosts) whose lines show EFA."""
    socket_hosts: tuple[str, ...] = ()
    """The hosts NCCL's own line prefix names on the lines that show the socket transport (where to look)."""


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
    socket: set[str] = set()
    efa: set[str] = set()
    hosts: set[str] = set()
    for raw in text.splitlines():
        line = _PREFIX.sub("", raw.rstrip()).strip()
        for pattern, seen in ((_SOCKET, socket), (_EFA, efa)):
            if pattern.search(line):
                seen.add(_writer(raw.strip(), line))
        if _SOCKET.search(line) and (host := _HOST.match(line)):
            hosts.add(host.group(1))
        if match := _OUT_OF_BOUNDS.match(line):
            out_of_bounds = int(match.group(1))
        elif match := _AVG.match(line):
            avg = _float(match.group(1))
        elif line and not line.startswith("#") and (row := _row(line.split())):
            rows.append(row)
    return NcclRun(
        tuple(rows),
        out_of_bounds,
        avg,
        bool(efa),
        bool(socket),
        _in_order(socket - {""}),
        _in_order(efa - {""}),
        tuple(sorted(hosts)),
    )


def _writer(raw: str, line: str) -> str:
    """The rank that wrote a log line, else its host, else ''."""
    if match := _RANK.match(raw):
        return match.group(1) or match.group(2)
    host = _HOST.match(line)
    return host.group(1) if host else ""


def _rank(name: str) -> bool:
    """A rank number (ASCII digits: int() also takes other scripts' digits), not a host name."""
    return name.isascii() and name.isdigit()


def _in_order(names: set[str]) -> tuple[str, ...]:
    """Ranks in numeric order (hosts after them, by name)."""
    return tuple(sorted(names, key=lambda n: (not _rank(n), int(n) if _rank(n) else 0, n)))


def _who(names: tuple[str, ...]) -> str:
    if not names:
        return ""
    kind = "rank" if _rank(names[0]) else "host"
    return f" on {kind}{'s' if len(names) > 1 else ''} {', '.join(names)}"


SOCKET_FALLBACK_FIX = (
    "NCCL fell back to TCP; known causes: the pods do not request vpc.amazonaws.com/efa or lack /dev/infiniband; the "
    "image's aws-ofi-nccl plugin does not load (NCCL_DEBUG=INFO 'NET/Plugin' lines); on GB200 with the R580 driver, "
    f"the NVIDIA module parameter {GRDMA_TOPO_OVERRIDE}=1 is missing (NVIDIA/aicr#668): read "
    f"{NVIDIA_PARAMS_FILE} on a node for 'GrdmaPciTopoCheckOverride: 1' (whether the EKS AL2023 NVIDIA AMI sets it "
    "is UNVERIFIED)"
)


@dataclass(frozen=True)
class EfaJudgement:
    """The EFA check's findings: (key, found, expected, fix) per problem; none means passed."""

    evidence: str
    findings: tuple[tuple[str, str, str, str], ...]


Finding = tuple[str, str, str, str]


def _network_findings(run: NcclRun) -> list[Finding]:
    """NCCL ran over TCP sockets, or the log shows no EFA transport at all."""
    if run.uses_socket:
        seen = f"TCP sockets (NET/Socket){_who(run.socket_ranks)}"
        if run.socket_hosts and run.socket_hosts != run.socket_ranks:
            # A rank alone does not say where to look: the host NCCL printed does (the worker's host name).
            seen += f" (host{'s' if len(run.socket_hosts) > 1 else ''} {', '.join(run.socket_hosts)})"
        if run.uses_efa:
            seen += f"; Libfabric (EFA){_who(run.efa_ranks)}"
        return [("NCCL network", seen, "Libfabric / NET/OFI with the efa provider on every rank", SOCKET_FALLBACK_FIX)]
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
    network = {(True, False): "EFA", (True, True): "EFA and sockets", (False, True): "sockets"}.get(
        (run.uses_efa, run.uses_socket), "unknown"
    )
    shown = f"{busbw:.2f} GB/s at {best.size_bytes} B" if best and busbw is not None else "no large-message row"
    evidence = f"network {network}; {shown} (threshold {min_bus_bandwidth_gbps / 8:.2f} GB/s); {len(run.rows)} sizes"
    return EfaJudgement(evidence, tuple(findings))
