"""DriftCheck: a CronJob re-running the cheap node-facts check and failing when a GPU node drifted."""

from __future__ import annotations

import pulumi

from ultraserver.arguments import checked_component
from ultraserver.builders.drift_check import DriftCheckArgs, drift_manifests
from ultraserver.resources.script_cron_job import declare_cron_job


@checked_component
class DriftCheck(pulumi.ComponentResource):
    """Namespace, list-nodes RBAC, the script's ConfigMap and the CronJob."""

    namespace: str
    cron_job_name: str

    def __init__(self, name: str, args: DriftCheckArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:DriftCheck", name, None, opts)
        manifests = drift_manifests(args)
        self.namespace = args.namespace
        self.cron_job_name = manifests[-1]["metadata"]["name"]
        declare_cron_job(self, name, manifests, opts)
        self.register_outputs({"namespace": args.namespace, "cronJob": self.cron_job_name})
