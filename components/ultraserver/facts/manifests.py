"""Upstream manifests the toolkit applies itself, pinned by URL and digest (never copied into the repository).

They are downloaded when the program runs (preview and up) and refused unless the content matches the pin.
URLs point at a commit, not a branch or a release asset, so the bytes cannot change under the pin.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PinnedManifest:
    """One upstream YAML file at one commit."""

    name: str
    """Short name used in messages."""
    url: str
    """Where it is downloaded from (raw file at a fixed commit)."""
    sha256: str
    """SHA-256 of the file's bytes."""
    git_blob: str
    """Git blob id (SHA-1 of "blob <size>\\0" + bytes) of the file at that commit, as GitHub's tree lists it: a
    reviewer can check the pin against the repository without downloading the file."""


# NVIDIA DRA driver 25.8.0 (tag v25.8.0 = commit 2ef1f2ad), the chart's only CRD. sha256 computed from a copy whose
# git blob id equals the one at the tag (5a28ae17...), i.e. the same bytes.
DRA_COMPUTE_DOMAIN_CRD = PinnedManifest(
    name="ComputeDomain CRD (nvidia-dra-driver-gpu 25.8.0)",
    url=(
        "https://raw.githubusercontent.com/NVIDIA/k8s-dra-driver-gpu/2ef1f2ad8ad2e65756d19f454f55e5b021d0bf3b/"
        "deployments/helm/nvidia-dra-driver-gpu/crds/resource.nvidia.com_computedomains.yaml"
    ),
    sha256="9345244a663bd1b05551dee3e3749e0fc8a4aca4ff46e48308f7b5053c90d265",
    git_blob="5a28ae17ca7443e91b1505860fd31ee3173d740d",
)

# Kubeflow MPI Operator v0.8.0 (tag v0.8.0 = commit 101db144, 2026-02-18; the newest tag in a mirror of
# kubeflow/mpi-operator whose last commit is 2026-07-02, re-checked 2026-11-25 for issue 21): the all-in-one manifest
# (namespace, MPIJob CRD, RBAC, controller, image mpioperator/mpi-operator:0.8.0). sha256 and git blob computed from
# the blob at the tag (674987 bytes). From v0.7.0: Kubernetes libraries 1.35, the CRD's pod template refreshed from
# the 1.35 API, launcher scheduling directives fixed when a job is unsuspended (kubeflow/mpi-operator#772; Kueue
# unsuspends the checks' MPIJobs); MPIJob kubeflow.org/v2beta1 itself unchanged.
MPI_OPERATOR_VERSION = "v0.8.0"
MPI_OPERATOR = PinnedManifest(
    name=f"MPI Operator {MPI_OPERATOR_VERSION} manifest",
    url=(
        "https://raw.githubusercontent.com/kubeflow/mpi-operator/101db144e019e1de65aaded07745e9d805c2852a/"
        "deploy/v2beta1/mpi-operator.yaml"
    ),
    sha256="b38def13a94abe60b2a4b3485239d77f64892b8fbd202e9e435a6031b7500a8f",
    git_blob="7dc9b94defd93c8f51d6552e96323a51ddda5ee3",
)
