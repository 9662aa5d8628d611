"""ReclaimDrain: the CronJob that drains each Capacity Block's nodes before EC2 reclaims them."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.arguments import checked_component
from ultraserver.builders.reclaim_drain import ReclaimDrainArgs, check_rbac_manifests, drain_manifests
from ultraserver.resources.child_options import child_options
from ultraserver.resources.script_cron_job import declare_cron_job


@checked_component
class ReclaimDrain(pulumi.ComponentResource):
    """Namespace, the drain's RBAC (nodes, pods, evictions, budgets, Kueue; MPIJobs in the check namespaces), the
    script's and the blocks' ConfigMaps and the CronJob. ``opts`` should depend on the checks (their namespaces)."""

    namespace: str
    cron_job_name: str

    def __init__(self, name: str, args: ReclaimDrainArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:ReclaimDrain", name, None, opts)
        manifests = drain_manifests(args)
        self.namespace = args.namespace
        self.cron_job_name = manifests[-1]["metadata"]["name"]
        namespace = declare_cron_job(self, name, manifests, opts)
        # Its own namespace's roles wait for the namespace; the others' namespaces come with ``opts``.
        inside = child_options(self, opts, pulumi.ResourceOptions(depends_on=[namespace]))
        for doc in check_rbac_manifests(args):
            meta = doc["metadata"]
            if doc["kind"] == "ClusterRole":
                k8s.rbac.v1.ClusterRole(
                    f"{name}-checks-role", metadata=meta, rules=doc["rules"], opts=child_options(self, opts)
                )
            elif doc["kind"] == "Role":
                k8s.rbac.v1.Role(
                    f"{name}-role-{meta['namespace']}-{meta['name']}",
                    metadata=meta,
                    rules=doc["rules"],
                    opts=inside,
                )
            else:
                k8s.rbac.v1.RoleBinding(
                    f"{name}-checks-{meta['namespace']}"
                    if doc["roleRef"]["kind"] == "ClusterRole"
                    else f"{name}-binding-{meta['namespace']}-{meta['name']}",
                    metadata=meta,
                    role_ref=doc["roleRef"],
                    subjects=doc["subjects"],
                    opts=inside,
                )
        self.register_outputs({"namespace": args.namespace, "cronJob": self.cron_job_name})
