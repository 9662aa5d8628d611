"""EfaCheck: an nccl-tests all_reduce MPIJob across UltraServers (the verdict is read by ``ultraserver.verify``)."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.arguments import checked_component
from ultraserver.builders.efa_check import EfaCheckArgs, efa_mpijob_manifest
from ultraserver.builders.mpijob import namespace_manifest
from ultraserver.resources.child_options import child_options
from ultraserver.resources.device_claims import claim_template_resource
from ultraserver.resources.replaced_resource import replaced_custom_resource


@checked_component
class EfaCheck(pulumi.ComponentResource):
    """Namespace + nccl-tests MPIJob (+ its device claim template in DRA mode); depend on the MPI operator and the
    release that publishes EFA devices (EFA device plugin, or DRANET)."""

    namespace: str
    job_name: str
    min_bus_bandwidth_gbps: float
    manifest: dict[str, Any]
    """The MPIJob as declared (the reclaim drain makes it again at each join)."""

    def __init__(self, name: str, args: EfaCheckArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:EfaCheck", name, None, opts)
        self.manifest = manifest = efa_mpijob_manifest(args)
        self.namespace = args.namespace
        self.job_name = args.name
        self.min_bus_bandwidth_gbps = args.min_bus_bandwidth_gbps
        namespace = k8s.core.v1.Namespace(
            name, metadata=namespace_manifest(args.namespace)["metadata"], opts=child_options(self, opts)
        )
        in_namespace = child_options(self, opts, pulumi.ResourceOptions(depends_on=[namespace]))
        claims = claim_template_resource(f"{name}-{args.name}-devices", args, in_namespace)
        replaced_custom_resource(f"{name}-{args.name}", manifest, self, opts, [namespace, *claims])
        self.register_outputs(
            {"namespace": args.namespace, "jobName": args.name, "minBusBandwidthGbps": args.min_bus_bandwidth_gbps}
        )
