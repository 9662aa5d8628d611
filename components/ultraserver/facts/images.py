"""Container images the toolkit's own jobs run, pinned by tag (each one's source and what is unverified)."""

from __future__ import annotations

# AWS's nccl-tests image, built multi-arch by its buildspec (`docker buildx build --push
# --platform=linux/amd64,linux/arm64`) from nvcr.io/nvidia/cuda:13.1.2-devel-ubuntu22.04 with EFA installer 1.50.0
# (aws-ofi-nccl 1.21.1), NCCL v2.31.2-1 and nccl-tests v2.20.0 for sm_100; AWS's own GB200 MPIJob uses this tag.
# Sources: awslabs/awsome-distributed-ai micro-benchmarks/nccl-tests/buildspec.yaml @8d95f609,
# nccl-tests.Dockerfile @0b55ba5f, kubernetes/nccl-tests-gb200.yaml @c428b24b.
# UNVERIFIED: that the pushed manifest list really holds linux/arm64 (the registry was not queried), and that
# CUDA 13.1 runs on the AMI's driver 580 (CUDA minor-version compatibility).
NCCL_TESTS_IMAGE = "public.ecr.aws/hpc-cloud/nccl-tests:cuda13.1.2-efa1.50.0-ofiv1.21.1-ncclv2.31.2-1-testsv2.20.0"

# Docker's official Python image as mirrored on ECR Public (no Docker Hub pull limits from EKS); the official
# image is multi-arch including arm64v8. UNVERIFIED: the tag was not checked against the registry; it is a
# moving tag of the 3.12 line (any 3.9+ runs the script).
PYTHON_IMAGE = "public.ecr.aws/docker/library/python:3.12-slim"

# NVIDIA's nvbandwidth sample image, the one the EKS UltraServer guide's nvbandwidth MPIJob runs.
NVBANDWIDTH_IMAGE = "ghcr.io/nvidia/k8s-samples:nvbandwidth-v0.7-8d103163"

IMAGE_SOURCES: dict[str, str] = {
    NCCL_TESTS_IMAGE: "awslabs/awsome-distributed-ai nccl-tests buildspec @8d95f609 (arm64 unverified)",
    PYTHON_IMAGE: "Docker official image on ECR Public (moving 3.12 tag, unverified)",
    NVBANDWIDTH_IMAGE: "EKS UltraServer guide, 'Validate IMEX over Multi-Node NVLink' MPIJob",
}
"""Where each image's tag was read."""
