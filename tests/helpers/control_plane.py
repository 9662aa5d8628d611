"""The real control plane's binaries (etcd, kube-apiserver) for tests that rehearse on it (``--api real``).

Skipped when the cache does not hold them (a fresh clone: building them takes minutes), with the one command that
builds them; .ci/run builds them and sets ULTRASERVER_REQUIRE_CONTROL_PLANE=1, which turns that skip into a failure.
The MPIJob CRD comes from ../shared/upstream (the MPI Operator's, third-party, kept out of the repository).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.stacks import ROOT
from ultraserver.facts.kubernetes.eks_versions import DEFAULT_TEXT
from ultraserver.rehearse.binaries import BUILD_COMMAND, missing, programs

REQUIRED = os.environ.get("ULTRASERVER_REQUIRE_CONTROL_PLANE") == "1"
MPIJOB_CRD = ROOT.parent / "shared" / "upstream" / "mpi-operator" / "v0.7.0" / "kubeflow.org_mpijobs.yaml"
"""The MPI Operator's MPIJob CRD (v0.7.0; the pin is v0.8.0, whose kubeflow.org/v2beta1 MPIJob is unchanged)."""


def require_control_plane(minor: str = DEFAULT_TEXT) -> None:
    """Skip unless etcd and kube-apiserver are built (fail under ULTRASERVER_REQUIRE_CONTROL_PLANE=1)."""
    absent = [p.key for p in missing(programs(minor)[0])]
    if not MPIJOB_CRD.is_file():
        absent.append(str(MPIJOB_CRD))
    if absent:
        message = f"not built or missing: {', '.join(absent)}; build them: {BUILD_COMMAND}"
        if REQUIRED:
            pytest.fail(f"ULTRASERVER_REQUIRE_CONTROL_PLANE=1 but {message}")
        pytest.skip(message)


def crd_paths() -> list[Path]:
    """The CRD files a real rehearsal installs beside the charts'."""
    return [MPIJOB_CRD]
