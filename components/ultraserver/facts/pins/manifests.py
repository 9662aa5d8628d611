"""Upstream manifests the toolkit applies itself, pinned by URL and digest (never copied into the repository), and the
container images its own jobs run, pinned by tag.

They are downloaded when the program runs (preview and up) and refused unless the content matches the pin.
URLs point at a commit, not a branch or a release asset, so the bytes cannot change under the pin.
"""

from __future__ import annotations

from dataclasses import dataclass

from ultraserver.facts.hardware.devices import COMPUTE_DOMAIN_CRD

CRD_KIND = "CustomResourceDefinition"
"""Kind of the objects the toolkit applies from the DRA driver's pins (and takes over from Helm)."""


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
    serves: tuple[str, ...] = ()
    """APIs its CRDs add to the cluster, as `group/version/Kind` (the served versions in the file at the pin)."""
    go_module: str = ""
    """``module@version`` of a Go module whose files hold the same file at the same tag (the rehearsal's second
    source where only the Go module proxy is reachable; the digests are checked all the same)."""

    @property
    def repository_path(self) -> str:
        """The file's path in its repository: what follows the commit in the URL."""
        return self.url.split("/", 6)[6]

    @property
    def file_name(self) -> str:
        """The last part of the URL: the name a mirror holds the file under."""
        return self.url.rsplit("/", 1)[-1]


# DRA driver for NVIDIA GPUs 0.4.1 (kubernetes-sigs/dra-driver-nvidia-gpu tag v0.4.1 = commit 764900e7): the two
# CRDs of the chart's crds/. sha256 computed from copies whose git blob ids equal those at the tag, i.e. the same
# bytes. The toolkit applies them before any chart (resources/helm_release.py DraDriver.crd_owner), so the GPU
# Operator's older copies of the same CRDs (its crds/ at v26.7.0, where ComputeDomain still requires numNodes) are
# never installed.
_DRA_DRIVER_CRDS_AT = (
    "https://raw.githubusercontent.com/kubernetes-sigs/dra-driver-nvidia-gpu/764900e7833798a1528bd52a2af3e1b2d5f7a616/"
    "deployments/helm/dra-driver-nvidia-gpu/crds/"
)
DRA_COMPUTE_DOMAIN_CRD = PinnedManifest(
    name="ComputeDomain CRD of the pinned DRA driver",
    url=_DRA_DRIVER_CRDS_AT + "resource.nvidia.com_computedomains.yaml",
    sha256="653b477ad084f6cfed479ecdcc1149f3c14499bcac2ae1d2acbb82ccf7419f89",
    git_blob="0811b3ce2c8e38dad3db6b8df309a43d33a475b9",
    serves=("resource.nvidia.com/v1beta1/ComputeDomain",),
)
DRA_COMPUTE_DOMAIN_CLIQUE_CRD = PinnedManifest(
    name="ComputeDomainClique CRD of the pinned DRA driver",
    url=_DRA_DRIVER_CRDS_AT + "resource.nvidia.com_computedomaincliques.yaml",
    sha256="bc822436bb7f516c51a6adb8ef503a8fda8b7e151aff723897a0fb3072a20c1f",
    git_blob="b3eddef718face4c0d85529599830241e6b7b2e1",
    serves=("resource.nvidia.com/v1beta1/ComputeDomainClique",),
)
DRA_DRIVER_CRDS = {
    COMPUTE_DOMAIN_CRD: DRA_COMPUTE_DOMAIN_CRD,
    "computedomaincliques.resource.nvidia.com": DRA_COMPUTE_DOMAIN_CLIQUE_CRD,
}
"""The DRA driver's CRDs by name, each applied by the toolkit from its pin."""

# Kubeflow MPI Operator v0.8.0 (tag v0.8.0 = commit 101db144, 2026-02-18; the newest tag in a mirror of
# kubeflow/mpi-operator whose last commit is 2026-07-02, re-checked 2026-11-25): the all-in-one manifest
# (namespace, MPIJob CRD, RBAC, controller, image mpioperator/mpi-operator:0.8.0). sha256 and git blob computed from
# the blob at the tag (674987 bytes). From v0.7.0: Kubernetes libraries 1.35, the CRD's pod template refreshed from
# the 1.35 API, launcher scheduling directives fixed when a job is unsuspended (kubeflow/mpi-operator#772; Kueue
# unsuspends the checks' MPIJobs); MPIJob kubeflow.org/v2beta1 itself unchanged.
MPI_OPERATOR_VERSION = "v0.8.0"
MPIJOB_API_VERSION = "kubeflow.org/v2beta1"
"""The MPIJob version the toolkit's check jobs are written in, served by the pinned operator's CRD."""
MPI_OPERATOR = PinnedManifest(
    name=f"MPI Operator {MPI_OPERATOR_VERSION} manifest",
    url=(
        "https://raw.githubusercontent.com/kubeflow/mpi-operator/101db144e019e1de65aaded07745e9d805c2852a/"
        "deploy/v2beta1/mpi-operator.yaml"
    ),
    sha256="b38def13a94abe60b2a4b3485239d77f64892b8fbd202e9e435a6031b7500a8f",
    git_blob="7dc9b94defd93c8f51d6552e96323a51ddda5ee3",
    # Its CRD (manifests/base/kubeflow.org_mpijobs.yaml) serves v2beta1, the version the toolkit's MPIJobs use
    # (tests/fixtures/crds/mpijob-v2beta1.json is read from it at the tag); whether it serves others is UNVERIFIED.
    serves=(f"{MPIJOB_API_VERSION}/MPIJob",),
    # The module github.com/kubeflow/mpi-operator at the same tag holds the same bytes (sha256 checked 2026-11-28).
    go_module=f"github.com/kubeflow/mpi-operator@{MPI_OPERATOR_VERSION}",
)


def by_file_name() -> dict[str, PinnedManifest]:
    """Every pinned manifest by its file name, the last part of its URL (unique; a mirror holds it under that name)."""
    return {pin.file_name: pin for pin in (*DRA_DRIVER_CRDS.values(), MPI_OPERATOR)}


# Container images the toolkit's own jobs run, pinned by tag (each one's source and what is unverified).
# AWS's nccl-tests image, built multi-arch by its buildspec (`docker buildx build --push
# --platform=linux/amd64,linux/arm64`) from nvcr.io/nvidia/cuda:13.1.2-devel-ubuntu22.04 with EFA installer 1.50.0
# (aws-ofi-nccl 1.21.1), NCCL v2.31.2-1 and nccl-tests v2.20.0 for sm_100; AWS's own GB200 MPIJob uses this tag.
# Sources: awslabs/awsome-distributed-ai micro-benchmarks/nccl-tests/buildspec.yaml @8d95f609,
# nccl-tests.Dockerfile @0b55ba5f, kubernetes/nccl-tests-gb200.yaml @c428b24b.
# UNVERIFIED: that the pushed manifest list really holds linux/arm64 (the registry was not queried), and that
# CUDA 13.1 runs on the AMI's driver 580 (CUDA minor-version compatibility).
NCCL_TESTS_IMAGE = "public.ecr.aws/hpc-cloud/nccl-tests:cuda13.1.2-efa1.50.0-ofiv1.21.1-ncclv2.31.2-1-testsv2.20.0"

# Docker's official Python image as mirrored on ECR Public (no Docker Hub pull limits from EKS), pinned by digest: the
# reclaim drain and the drift check run in it, and a moving tag could change under a running cluster or vanish from a
# private mirror. The digest is the multi-arch index of python:3.12-slim as two unrelated public Dockerfiles pin it
# (one notes "amd64 child verified against the canonical index: sha256:78387bc3..."); a digest names the same bytes in
# every registry that holds the image (OCI distribution spec: content-addressable). UNVERIFIED: that ECR Public's
# docker/library/python still serves this digest and that the index holds linux/arm64 (the registry was not
# queried from here). Where it does not, `kubernetes.imageMirror` points at a registry that does.
PYTHON_IMAGE = (
    "public.ecr.aws/docker/library/python:3.12-slim"
    "@sha256:78387bc3881b8273120a12ebe6c1ab22b018ccc2c9adf565ae1ac9b536e184ea"
)

# NVIDIA's nvbandwidth sample image, the one the EKS UltraServer guide's nvbandwidth MPIJob runs.
NVBANDWIDTH_IMAGE = "ghcr.io/nvidia/k8s-samples:nvbandwidth-v0.7-8d103163"

IMAGE_SOURCES: dict[str, str] = {
    NCCL_TESTS_IMAGE: "awslabs/awsome-distributed-ai nccl-tests buildspec @8d95f609 (arm64 unverified)",
    PYTHON_IMAGE: "Docker official image on ECR Public, python:3.12-slim index digest (unverified)",
    NVBANDWIDTH_IMAGE: "EKS UltraServer guide, 'Validate IMEX over Multi-Node NVLink' MPIJob",
}
"""Where each image's tag was read."""


def mirrored_image(image: str, mirror: str) -> str:
    """``image`` pulled from ``mirror`` (``<registry host>/<path>``) instead of its own registry: the mirror holds it
    under its repository path with the same digest, as an ECR pull-through cache does (e.g.
    ``<account>.dkr.ecr.<region>.amazonaws.com/ecr-public`` + ``/docker/library/python``); '' keeps the image."""
    if not mirror:
        return image
    _, _, path = image.partition("/")
    return f"{mirror.rstrip('/')}/{path}"
