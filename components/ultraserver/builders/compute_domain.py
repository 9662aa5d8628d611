"""NVIDIA ComputeDomain manifests (an IMEX domain that follows a multi-node workload) and the pod pieces that
join it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ultraserver.arguments import checked
from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL, DNS_LABEL, DNS_SUBDOMAIN
from ultraserver.problems import ConfigError, Problem

API_VERSION = "resource.nvidia.com/v1beta1"
KIND = "ComputeDomain"
ALLOCATION_MODES = ("Single", "All")
DEFAULT_CLAIM_NAME = "compute-domain-channel"
MPI_ROLE_LABEL = "ultraserver.io/mpi-role"
"""Label of a check job's pods: their MPI role (launcher or worker)."""


def compute_domain_name(job: str) -> str:
    """The ComputeDomain of a check MPIJob (its workers join it)."""
    return f"{job}-compute-domain"


@checked()
@dataclass(frozen=True)
class ComputeDomainArgs:
    """Inputs of one ComputeDomain."""

    name: str
    """Object name of the ComputeDomain."""
    namespace: str = "default"
    """Namespace of the ComputeDomain and of the pods that use it."""
    num_nodes: int = 0
    """Nodes to wait for; 0 (recommended since DRA driver 25.8) lets the domain grow with the workload."""
    allocation_mode: str = "Single"
    """IMEX channels per claim: 'Single' (one) or 'All' (every channel of the domain)."""
    claim_template_name: str | None = None
    """ResourceClaimTemplate the driver creates for workloads; defaults to '<name>-channel'."""

    @property
    def template_name(self) -> str:
        """Name of the ResourceClaimTemplate pods reference."""
        return self.claim_template_name or f"{self.name}-channel"


def check_compute_domain(args: ComputeDomainArgs) -> None:
    """Raise ConfigError listing every invalid field of `args`."""
    problems = []
    for key, value in (("name", args.name), ("claim_template_name", args.template_name)):
        if not DNS_SUBDOMAIN.fullmatch(value):
            problems.append(
                Problem(
                    f"compute_domain.{key}",
                    value,
                    "a Kubernetes name: lowercase letters, digits, '-' and '.', starting and ending with a letter "
                    "or digit",
                    "rename it",
                )
            )
    if not DNS_LABEL.fullmatch(args.namespace):
        problems.append(
            Problem(
                "compute_domain.namespace",
                args.namespace,
                "a namespace name: up to 63 lowercase letters, digits and '-'",
                "rename it",
            )
        )
    if isinstance(args.num_nodes, bool) or not isinstance(args.num_nodes, int) or args.num_nodes < 0:
        problems.append(
            Problem(
                "compute_domain.num_nodes",
                args.num_nodes,
                "0 (elastic, recommended) or a positive node count",
                "give 0",
            )
        )
    if args.allocation_mode not in ALLOCATION_MODES:
        problems.append(
            Problem(
                "compute_domain.allocation_mode",
                args.allocation_mode,
                "one of " + ", ".join(ALLOCATION_MODES),
                f"use {ALLOCATION_MODES[0]}",
            )
        )
    if problems:
        raise ConfigError(problems)


def compute_domain_manifest(args: ComputeDomainArgs) -> dict[str, Any]:
    """The ComputeDomain object as applied to the cluster."""
    check_compute_domain(args)
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": args.name, "namespace": args.namespace},
        "spec": {
            "numNodes": args.num_nodes,
            "channel": {
                "resourceClaimTemplate": {"name": args.template_name},
                "allocationMode": args.allocation_mode,
            },
        },
    }


@dataclass(frozen=True)
class ComputeDomainPodPieces:
    """What a pod spec needs to join a ComputeDomain and stay inside one NVLink domain."""

    resource_claim: dict[str, str]
    """Entry for pod `spec.resourceClaims`."""
    container_claim: dict[str, str]
    """Entry for the GPU container's `resources.claims`."""
    affinity: dict[str, Any]
    """Pod `spec.affinity`: all pods matching the labels share one `nvidia.com/gpu.clique` value."""


def compute_domain_pod_pieces(
    args: ComputeDomainArgs, pod_labels: Mapping[str, str], claim_name: str = DEFAULT_CLAIM_NAME
) -> ComputeDomainPodPieces:
    """Pod-spec pieces for the workload pods carrying `pod_labels` that use the ComputeDomain `args`."""
    check_compute_domain(args)
    if not pod_labels:
        raise ConfigError(
            Problem(
                "pod_labels",
                dict(pod_labels),
                "the labels that identify the workload's pods",
                "give them, so the clique affinity selects exactly those pods",
            )
        )
    expressions = [{"key": key, "operator": "In", "values": [value]} for key, value in sorted(pod_labels.items())]
    return ComputeDomainPodPieces(
        resource_claim={"name": claim_name, "resourceClaimTemplateName": args.template_name},
        container_claim={"name": claim_name},
        affinity={
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchExpressions": expressions}, "topologyKey": CLIQUE_LABEL}
                ]
            }
        },
    )
