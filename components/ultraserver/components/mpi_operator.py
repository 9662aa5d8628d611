"""Kubeflow MPI Operator, installed from its pinned release manifest."""

from __future__ import annotations

import re
from dataclasses import dataclass

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.components.child_options import child_options
from ultraserver.problems import ConfigError

MPI_OPERATOR_VERSION = "v0.7.0"
_VERSION = re.compile(r"^v\d+\.\d+\.\d+$")


def manifest_url(version: str) -> str:
    """URL of the all-in-one release manifest (namespace, MPIJob CRD, RBAC, controller) of one release tag."""
    if not _VERSION.match(version):
        raise ConfigError(
            f"mpi_operator.version: {version!r} is not a release tag; give it as vMAJOR.MINOR.PATCH "
            f"(pinned: {MPI_OPERATOR_VERSION})."
        )
    return f"https://github.com/kubeflow/mpi-operator/releases/download/{version}/mpi-operator.yaml"


@dataclass
class MpiOperatorArgs:
    """Inputs of the MPI Operator install."""

    version: str = MPI_OPERATOR_VERSION
    """Release tag; the MPIJob manifests are built for kubeflow.org/v2beta1 as served by v0.7.0."""


class MpiOperator(pulumi.ComponentResource):
    """MPI Operator (MPIJob kubeflow.org/v2beta1), which runs the IMEX nvbandwidth check."""

    manifest: k8s.yaml.v2.ConfigFile

    def __init__(self, name: str, args: MpiOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:MpiOperator", name, None, opts)
        # No Helm chart is published for v0.7.0, so the release manifest the project documents is applied.
        # yaml.v2.ConfigFile is expanded by the Kubernetes provider at deploy time (the program never fetches
        # the URL, so mock tests stay offline), orders the CRD before its users, and applies server-side,
        # which the ~665 KB MPIJob CRD needs (client-side apply overflows the last-applied annotation).
        self.manifest = k8s.yaml.v2.ConfigFile(
            name,
            file=manifest_url(args.version),
            opts=child_options(self, opts),
        )
        self.register_outputs({"version": args.version})
