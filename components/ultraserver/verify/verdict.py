"""One verdict of ``ultraserver verify``: a check on one UltraServer (or the cluster), with its problems."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ultraserver.builders.node_report import NODE_REPORT_PREFIX
from ultraserver.problems import Problem, blocking
from ultraserver.verify.clients import ClusterError

CLUSTER, ACROSS = "cluster", "across-ultraservers"
NODE_FACTS, DEVICE_CLASSES, NVLINK, FLEET, EFA = "node-facts", "dra-device-classes", "nvlink", "ultraservers", "efa"
COVERAGE = "nvlink-coverage"
RESOURCE_SLICES = "resource-slices"
NCCL = "nccl-all-reduce"
NODE_REPORT_LINE = re.compile(rf"^{re.escape(NODE_REPORT_PREFIX)}(\S+)\s*$", re.M)
"""A worker's report line in a job log (builders.node_report); its group is the report."""
NO_MNNVL_UUID = "00000000-0000-0000-0000-000000000000"
"""The clique UUID of a node without a multi-node NVLink domain (all zeros)."""


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check on one UltraServer (or on the cluster)."""

    ultraserver: str
    """Node group name, '<group>/<clique>' or '<group>#<n>' inside a grouped fleet, or 'cluster'."""
    check: str
    """node-facts, ultraservers, dra-device-classes, nvlink or efa."""
    evidence: str
    """What was measured or read."""
    problems: tuple[Problem, ...] = ()
    """What is wrong; errors fail the check."""
    log_tail: tuple[str, ...] = ()
    """Last lines of the job log the verdict was read from (for failures)."""
    cliques: tuple[str, ...] = ()
    """NVLink cliques a job's workers ran on, as its launcher reported them (nvlink checks)."""

    @property
    def passed(self) -> bool:
        """No error-level problem."""
        return not blocking(self.problems)

    def to_json(self) -> dict[str, Any]:
        """The verdict as plain JSON data."""
        return {
            "ultraserver": self.ultraserver,
            "check": self.check,
            "verdict": "PASSED" if self.passed else "FAILED",
            "evidence": self.evidence,
            "problems": [
                {"key": p.key, "value": p.value, "allowed": p.allowed, "fix": p.fix, "level": p.level}
                for p in self.problems
            ],
            "logTail": list(self.log_tail),
            "cliques": list(self.cliques),
        }


def api_problem(what: str, err: ClusterError) -> Problem:
    """The problem of a Kubernetes read that failed: ``what`` was not readable, and how to reach the API."""
    return Problem(
        what,
        str(err),
        "a reachable Kubernetes API that answers the read",
        "check --kubeconfig, network access to the endpoint (a private endpoint needs a path into the VPC) and "
        "credentials: kubectl --kubeconfig <file> get nodes",
    )
