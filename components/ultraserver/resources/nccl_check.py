"""NcclCheck: per UltraServer a ComputeDomain and an nccl-tests MPIJob with MNNVL and NVLS on (the verdict is read by
``ultraserver verify``)."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.builders.kueue import local_queue_manifest
from ultraserver.builders.mpijob import namespace_manifest
from ultraserver.builders.nccl_check import NAMESPACE, NcclJobArgs, device_claim_template, mpijob_manifest
from ultraserver.resources.child_options import child_options
from ultraserver.resources.compute_domain import ComputeDomain
from ultraserver.resources.device_claims import claim_template_resource
from ultraserver.resources.replaced_resource import replaced_custom_resource


class NcclCheck(pulumi.ComponentResource):
    """Namespace (+ LocalQueue) and, per UltraServer, ComputeDomain, device claim template (DRA mode) and MPIJob."""

    def __init__(self, name: str, jobs: list[NcclJobArgs], opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:NcclCheck", name, None, opts)
        namespace = k8s.core.v1.Namespace(
            name, metadata=namespace_manifest(NAMESPACE)["metadata"], opts=child_options(self, opts)
        )
        in_namespace = child_options(self, opts, pulumi.ResourceOptions(depends_on=[namespace]))
        before: list[pulumi.Resource] = []
        queue_name = next((j.queue_name for j in jobs if j.queue_name), "")
        if queue_name:
            queue = local_queue_manifest(NAMESPACE, queue_name)
            before.append(
                k8s.apiextensions.CustomResource(
                    f"{name}-queue",
                    api_version=queue["apiVersion"],
                    kind=queue["kind"],
                    metadata=queue["metadata"],
                    spec=queue["spec"],
                    opts=in_namespace,
                )
            )
        for job in jobs:
            domain = ComputeDomain(f"{name}-{job.name}", job.domain, opts=in_namespace)
            claims = claim_template_resource(f"{name}-{job.name}-devices", device_claim_template(job), in_namespace)
            replaced_custom_resource(f"{name}-{job.name}", mpijob_manifest(job), self, opts, [domain, *claims, *before])
        self.register_outputs({"namespace": NAMESPACE, "jobNames": [j.name for j in jobs]})
