"""ComputeDomain: one NVIDIA ComputeDomain custom resource, from the pure manifest builder."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.arguments import checked_component
from ultraserver.builders.compute_domain import ComputeDomainArgs, compute_domain_manifest
from ultraserver.resources.replaced_resource import replaced_custom_resource


@checked_component
class ComputeDomain(pulumi.ComponentResource):
    """A ComputeDomain custom resource; depend on the DRA driver release when creating it in the same stack."""

    resource: k8s.apiextensions.CustomResource
    claim_template_name: str

    def __init__(self, name: str, args: ComputeDomainArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:ComputeDomain", name, None, opts)
        manifest = compute_domain_manifest(args)
        self.claim_template_name = args.template_name
        self.resource = replaced_custom_resource(name, manifest, self, opts)
        self.register_outputs({"claimTemplateName": self.claim_template_name})
