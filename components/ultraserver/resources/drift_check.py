"""DriftCheck: a CronJob re-running the cheap node-facts check and failing when a GPU node drifted."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.builders.drift_check import DriftCheckArgs, drift_manifests
from ultraserver.resources.child_options import child_options


def declare_cron_job(
    owner: pulumi.ComponentResource, name: str, manifests: list[dict[str, Any]], opts: pulumi.ResourceOptions | None
) -> None:
    """Namespace, ServiceAccount, ClusterRole and its binding, the script's ConfigMap (and any further ConfigMaps) and
    the CronJob, in that order (as ``drift_manifests`` and ``reclaim_drain.drain_manifests`` build them), as children
    of ``owner``."""
    namespace_doc, account, role, binding, *config_maps, cron_job = manifests
    namespace = k8s.core.v1.Namespace(name, metadata=namespace_doc["metadata"], opts=child_options(owner, opts))
    inside = child_options(owner, opts, pulumi.ResourceOptions(depends_on=[namespace]))
    sa = k8s.core.v1.ServiceAccount(f"{name}-sa", metadata=account["metadata"], opts=inside)
    cluster_role = k8s.rbac.v1.ClusterRole(
        f"{name}-role", metadata=role["metadata"], rules=role["rules"], opts=child_options(owner, opts)
    )
    bound = k8s.rbac.v1.ClusterRoleBinding(
        f"{name}-binding",
        metadata=binding["metadata"],
        role_ref=binding["roleRef"],
        subjects=binding["subjects"],
        opts=child_options(owner, opts, pulumi.ResourceOptions(depends_on=[cluster_role, sa])),
    )
    # The first is the script's (its resource name kept); the others are named after their ConfigMap.
    data = [
        k8s.core.v1.ConfigMap(
            f"{name}-script" if index == 0 else f"{name}-{doc['metadata']['name']}",
            metadata=doc["metadata"],
            data=doc["data"],
            opts=inside,
        )
        for index, doc in enumerate(config_maps)
    ]
    k8s.batch.v1.CronJob(
        f"{name}-cron",
        metadata=cron_job["metadata"],
        spec=cron_job["spec"],
        opts=child_options(owner, opts, pulumi.ResourceOptions(depends_on=[bound, *data])),
    )


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
