"""The real Pulumi engine a rehearsal with ``--deploy`` runs (issue 43 stage 3): the Pulumi CLI and the Kubernetes
provider, each built from its Go module like the control plane (``rehearse/binaries.py``).

What the Go module proxy served on 2026-11-28:
- ``github.com/pulumi/pulumi/pkg/v3`` v3.274.1, the newest 3.274 patch (the CLI is its ``cmd/pulumi``).
- ``github.com/pulumi/pulumi-kubernetes/provider/v4`` only as the pseudo-version below (commit f47bc2d6 of
  2026-01-15, between the provider's releases; its go.mod requires the SDK at v4.24.0). It is older than the
  Python SDK the toolkit pins (pulumi-kubernetes 4.34.2, constraints.txt): the rehearsal reports this version as
  the provider that ran, never 4.34.2.
- ``github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3`` (the Python language host, a module of
  its own since it left sdk/v3): refused, "403 This module version is not available", for its version list and for
  v3.274.1. The rehearsal therefore runs the layer as the Python SDK's Automation API runs an inline program: the
  SDK serves the language runtime itself and the CLI attaches to it (``pulumi up --client``), so no Go language
  host is needed.
"""

from __future__ import annotations

from ultraserver.facts.pins.control_plane import GoProgram

PULUMI_VERSION = "v3.274.1"
PULUMI_CLI = GoProgram(
    "pulumi", "github.com/pulumi/pulumi/pkg/v3", "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi", PULUMI_VERSION
)
"""The Pulumi CLI and engine (``pkg/cmd/pulumi`` in the pulumi repository)."""

KUBERNETES_PROVIDER_VERSION = "v4.0.0-20260115033456-f47bc2d6f199"
KUBERNETES_PROVIDER = GoProgram(
    "pulumi-resource-kubernetes",
    "github.com/pulumi/pulumi-kubernetes/provider/v4",
    "github.com/pulumi/pulumi-kubernetes/provider/v4/cmd/pulumi-resource-kubernetes",
    KUBERNETES_PROVIDER_VERSION,
)
"""The Kubernetes provider plugin; its ``main`` embeds a schema that ``go generate`` writes (binaries.py does)."""

LANGUAGE_HOST_MODULE = "github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3"
"""Not served (see above): named so that the report can say why the SDK's own runtime server runs the program."""

DEPLOY_PROGRAMS = (PULUMI_CLI, KUBERNETES_PROVIDER)
"""What ``--deploy`` builds, beside the control plane."""
