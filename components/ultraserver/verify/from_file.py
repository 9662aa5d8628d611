"""``ultraserver verify --from-file``: judge an nvbandwidth or nccl-tests log the user already has.

The verdict is the one a cluster run gets: the same parser, thresholds from the same stack settings, the same
problems and fixes (verify.fabric). What a file cannot show is said in the evidence: which nodes and NVLink
cliques the run used (the cluster reads those from node labels).
"""

from __future__ import annotations

import re
from pathlib import Path

from ultraserver.config.files import MAX_LOG_BYTES, read_text
from ultraserver.problems import ConfigError, Described, Problem
from ultraserver.verify.expect import StackExpectation
from ultraserver.verify.fabric import LauncherResult, efa_findings, judge_nvbandwidth
from ultraserver.verify.nvbandwidth import log_tail
from ultraserver.verify.verdict import ACROSS, EFA, Verdict

_NVBANDWIDTH = re.compile(r"^(nvbandwidth Version|Running multinode_|memcpy (CE|SM) )", re.M)
_NCCL = re.compile(r"#\s+(size\s+count\s+type|Avg bus bandwidth|Out of bounds values)|NCCL INFO")


class LogFileError(ValueError):
    """A log file that cannot be judged (missing, too large, not UTF-8, or of no known tool), as a Problem."""

    def __init__(self, problem: Problem) -> None:
        self.problem = problem
        super().__init__(str(problem))


def read_log(path: Path) -> str:
    """The text of a log file, refused when larger than MAX_LOG_BYTES or not UTF-8 (naming the byte offset)."""
    try:
        return read_text(path, "--from-file", MAX_LOG_BYTES)
    except ConfigError as err:
        raise LogFileError(err.items[0]) from None  # read_text refuses a file for one reason


def log_kind(text: str) -> str:
    """nvbandwidth or nccl, by the lines each tool prints; '' when neither."""
    if _NVBANDWIDTH.search(text):
        return "nvbandwidth"
    if _NCCL.search(text):
        return "nccl"
    return ""


def judge_log_file(path: Path, expected: StackExpectation, kind: str = "") -> Verdict:
    """The verdict of one log file against the stack's thresholds (kind: nvbandwidth, nccl or '' to detect)."""
    text = read_log(path)
    kind = kind or log_kind(text)
    launcher = LauncherResult(log=text, phase=f"file {path.name}")
    if kind == "nvbandwidth":
        if not expected.groups or expected.nvlink_threshold_gbps <= 0:
            raise LogFileError(
                Problem(
                    "--from-file",
                    Described("an nvbandwidth log, and the stack deploys no IMEX check (no NVLink threshold)"),
                    "a log of a check the stack deploys",
                    "enable imexCheck in the stack (imexCheck.thresholdGbps sets the threshold)",
                )
            )
        # Every GB200 group has the same GPUs per node; which UltraServer ran the log, a file does not say.
        gpus_per_node = expected.groups[0].gpus_per_node
        return judge_nvbandwidth(
            launcher, expected.imex_namespace, path.name, path.name, expected.nvlink_threshold_gbps, gpus_per_node
        )
    if kind == "nccl":
        if expected.efa_min_bus_bandwidth_gbps <= 0:
            raise LogFileError(
                Problem(
                    "--from-file",
                    Described("an nccl-tests log, and the stack deploys no EFA check (no bus-bandwidth threshold)"),
                    "a log of a check the stack deploys",
                    "set efaCheck.enabled: true in the stack (the threshold follows its EFA layout)",
                )
            )
        found, judged = efa_findings(text, path.name, expected.efa_min_bus_bandwidth_gbps)
        evidence = f"file {path.name}: {judged}; the nodes and cliques it ran on are not known from a file"
        return Verdict(ACROSS, EFA, evidence, tuple(found), log_tail(text) if found else ())
    raise LogFileError(
        Problem(
            f"--from-file {str(path)!r}",
            Described(
                "neither nvbandwidth nor nccl-tests output (no bandwidth matrix header, no all_reduce_perf table)"
            ),
            "the launcher log of one nvbandwidth or nccl-tests run",
            "pass the launcher log of one run, or name the tool with --log-kind",
        )
    )
