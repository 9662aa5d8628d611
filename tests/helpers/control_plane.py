"""The real control plane's binaries for tests that rehearse on it (``--api real``).

Skipped when the cache does not hold them (a fresh clone: building them takes minutes), with the one command that
builds them; .ci/run builds them and sets ULTRASERVER_REQUIRE_CONTROL_PLANE=1, which turns that skip into a failure.
The MPIJob CRD is the one of the MPI Operator manifest the toolkit pins, read and digest-checked as a rehearsal reads
it (rehearse/pinned_files.py), never from the source material beside the repository.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

import pytest
from ultraserver.facts.kubernetes.eks_versions import DEFAULT_TEXT
from ultraserver.facts.pins.control_plane import GoProgram
from ultraserver.rehearse.binaries import BUILD_COMMAND, missing, programs

REQUIRED = os.environ.get("ULTRASERVER_REQUIRE_CONTROL_PLANE") == "1"


def require_programs(wanted: Sequence[GoProgram]) -> None:
    """Skip unless each program is built (fail under ULTRASERVER_REQUIRE_CONTROL_PLANE=1)."""
    absent = [p.key for p in missing(wanted)]
    if absent:
        message = f"not built: {', '.join(absent)}; build them: {BUILD_COMMAND}"
        if REQUIRED:
            pytest.fail(f"ULTRASERVER_REQUIRE_CONTROL_PLANE=1 but {message}")
        pytest.skip(message)


def require_control_plane(minor: str = DEFAULT_TEXT) -> None:
    """Skip unless etcd and kube-apiserver are built (fail under ULTRASERVER_REQUIRE_CONTROL_PLANE=1)."""
    require_programs(programs(minor)[0])


FAILING_SETTLE = 150.0
"""Seconds a stage that must fail waits for what never comes: the waits before it (Kueue up, the checks admitted)
take seconds once the channel templates precede Kueue; the stage's own 240 s is for a loaded machine's first start."""
