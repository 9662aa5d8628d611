"""Kubeflow MPI Operator, installed from its pinned release manifest after a digest check."""

from __future__ import annotations

from dataclasses import dataclass, field

import pulumi

from ultraserver.arguments import checked, checked_component
from ultraserver.facts.pins import manifests
from ultraserver.facts.pins.manifests import PinnedManifest
from ultraserver.resources.child_options import child_options
from ultraserver.resources.pinned_manifest import PinnedManifestArgs, PinnedManifestGroup

MPI_OPERATOR_VERSION = manifests.MPI_OPERATOR_VERSION


@checked()
@dataclass
class MpiOperatorArgs:
    """Inputs of the MPI Operator install."""

    version: str = MPI_OPERATOR_VERSION
    """Release tag of `manifest` (informational); the MPIJob manifests are built for kubeflow.org/v2beta1."""
    manifest: PinnedManifest = field(default_factory=lambda: manifests.MPI_OPERATOR)
    """URL and digests of the all-in-one manifest; another version needs its own pin."""
    mirror: str = ""
    """Where the manifest is read instead of GitHub (PinnedManifestArgs.mirror); empty reads the pinned URL."""


@checked_component
class MpiOperator(pulumi.ComponentResource):
    """MPI Operator (MPIJob kubeflow.org/v2beta1), which runs the IMEX nvbandwidth check."""

    manifest: PinnedManifestGroup

    def __init__(self, name: str, args: MpiOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:MpiOperator", name, None, opts)
        # No Helm chart is published (none in the repository at v0.8.0), so the release manifest is applied. The
        # program downloads it and checks it against the pin (it used to be fetched by the provider on every run with
        # no integrity check); ConfigGroup orders the CRD before its users and applies server-side, which the ~665 KB
        # MPIJob CRD needs (client-side apply overflows the last-applied annotation).
        self.manifest = PinnedManifestGroup(
            name, PinnedManifestArgs(args.manifest, mirror=args.mirror), opts=child_options(self, opts)
        )
        self.register_outputs({"version": args.version, "url": self.manifest.url})
