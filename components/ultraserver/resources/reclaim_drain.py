"""ReclaimDrain: the CronJob that drains each Capacity Block's nodes before EC2 reclaims them."""

from __future__ import annotations

import pulumi

from ultraserver.builders.reclaim_drain import ReclaimDrainArgs, drain_manifests
from ultraserver.resources.drift_check import declare_cron_job


class ReclaimDrain(pulumi.ComponentResource):
    """Namespace, the drain's RBAC (nodes, pods, evictions, budgets, Kueue), the script's ConfigMap and the CronJob."""

    namespace: str
    cron_job_name: str

    def __init__(self, name: str, args: ReclaimDrainArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:ReclaimDrain", name, None, opts)
        manifests = drain_manifests(args)
        self.namespace = args.namespace
        self.cron_job_name = manifests[-1]["metadata"]["name"]
        declare_cron_job(self, name, manifests, opts)
        self.register_outputs({"namespace": args.namespace, "cronJob": self.cron_job_name})
