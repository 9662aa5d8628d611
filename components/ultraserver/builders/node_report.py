"""The node report of the MPIJob checks: each worker names its node in the launcher log before the measured run.

A finished MPIJob's workers are deleted (cleanPodPolicy: Running) and the tools print only pod host names, so this
report is how ``verify`` learns which nodes, and so which NVLink cliques (UltraServers), a check ran on.
"""

from __future__ import annotations

import shlex
from typing import Any

NODE_REPORT_PREFIX = "ultraserver-node: "
"""Start of a report line; the rest of the line is the node name."""
NODE_FILE = "/tmp/ultraserver-node-name"
"""Where a worker writes its node name at start (any user can write /tmp)."""
NODE_NAME_ENV: dict[str, Any] = {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}
"""The worker's node name from the downward API."""


def worker_entrypoint(sshd: list[str]) -> list[str]:
    """Container args of `/bin/sh -c`: record the node name, then become sshd (the MPI worker)."""
    return [f'printf "%s\\n" "$NODE_NAME" > {NODE_FILE} && exec {shlex.join(sshd)}']


def launcher_script(report_mpirun: list[str], workers: int, run: list[str]) -> str:
    """Shell script of a launcher: one rank per node prints its report line, then `run` replaces the shell.

    A failed report must not stop the measured run, so its exit status is ignored.
    """
    report = shlex.join(
        [*report_mpirun, "--map-by", "ppr:1:node", "-np", str(workers), "/bin/sh", "-c"]
        + [f'echo "{NODE_REPORT_PREFIX}$(cat {NODE_FILE})"']
    )
    return f"{report} || true\nexec {shlex.join(run)}\n"
