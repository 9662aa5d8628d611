"""ImexCheck: a ComputeDomain and an nvbandwidth MPIJob per UltraServer (the verdict is read by
``ultraserver.verify``).
"""

from __future__ import annotations

from typing import Any

import pulumi

from ultraserver.arguments import checked_component
from ultraserver.builders.imex_check import ImexCheckArgs, job_args
from ultraserver.builders.nvbandwidth_job import compute_domain_args, mpijob_manifest
from ultraserver.resources.check_namespace import check_namespace
from ultraserver.resources.compute_domain import ComputeDomain
from ultraserver.resources.device_claims import claim_template_resource
from ultraserver.resources.replaced_resource import replaced_custom_resource


@checked_component
class ImexCheck(pulumi.ComponentResource):
    """ComputeDomain + nvbandwidth MPIJob per UltraServer; depend on the MPI operator and the DRA driver."""

    namespace: str
    job_names: list[str]
    threshold_gbps: float
    manifests: list[dict[str, Any]]
    """The MPIJobs as declared (the reclaim drain makes them again at each join)."""

    def __init__(self, name: str, args: ImexCheckArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:ImexCheck", name, None, opts)
        jobs = job_args(args)
        self.namespace = args.namespace
        self.threshold_gbps = args.threshold_gbps
        in_namespace, before_jobs = check_namespace(name, args.namespace, args.queue_name, self, opts)
        self.job_names = []
        self.manifests = []
        for job in jobs:
            domain = ComputeDomain(f"{name}-{job.name}", compute_domain_args(job), opts=in_namespace)
            claims = claim_template_resource(f"{name}-{job.name}-devices", job, in_namespace)
            manifest = mpijob_manifest(job)
            replaced_custom_resource(f"{name}-{job.name}", manifest, self, opts, [domain, *claims, *before_jobs])
            self.job_names.append(job.name)
            self.manifests.append(manifest)
        self.register_outputs(
            {"namespace": args.namespace, "jobNames": self.job_names, "thresholdGbps": args.threshold_gbps}
        )
