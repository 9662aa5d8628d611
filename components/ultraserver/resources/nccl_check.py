"""NcclCheck: per UltraServer a ComputeDomain and an nccl-tests MPIJob with MNNVL and NVLS on (the verdict is read by
``ultraserver verify``)."""

from __future__ import annotations

from typing import Any

import pulumi

from ultraserver.arguments import checked_component
from ultraserver.builders.nccl_check import NAMESPACE, NcclJobArgs, mpijob_manifest
from ultraserver.resources.check_namespace import check_namespace
from ultraserver.resources.compute_domain import ComputeDomain
from ultraserver.resources.device_claims import claim_template_resource
from ultraserver.resources.replaced_resource import replaced_custom_resource


@checked_component
class NcclCheck(pulumi.ComponentResource):
    """Namespace (+ LocalQueue) and, per UltraServer, ComputeDomain, device claim template (DRA mode) and MPIJob."""

    manifests: list[dict[str, Any]]
    """The MPIJobs as declared (the reclaim drain makes them again at each join)."""

    def __init__(self, name: str, jobs: list[NcclJobArgs], opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:NcclCheck", name, None, opts)
        queue_name = next((j.queue_name for j in jobs if j.queue_name), "")
        in_namespace, before = check_namespace(name, NAMESPACE, queue_name, self, opts)
        self.manifests = [mpijob_manifest(job) for job in jobs]
        for job, manifest in zip(jobs, self.manifests, strict=True):
            domain = ComputeDomain(f"{name}-{job.name}", job.domain, opts=in_namespace)
            claims = claim_template_resource(f"{name}-{job.name}-devices", job, in_namespace)
            replaced_custom_resource(f"{name}-{job.name}", manifest, self, opts, [domain, *claims, *before])
        self.register_outputs({"namespace": NAMESPACE, "jobNames": [j.name for j in jobs]})
