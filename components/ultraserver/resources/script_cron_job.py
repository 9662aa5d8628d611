"""The Kubernetes objects of a script CronJob (``builders/script_cron_job.py``): the drift check's and the drain's."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.resources.child_options import child_options


def declare_cron_job(
    owner: pulumi.ComponentResource, name: str, manifests: list[dict[str, Any]], opts: pulumi.ResourceOptions | None
) -> k8s.core.v1.Namespace:
    """Namespace, ServiceAccount, ClusterRole and its binding, the script's ConfigMap (and any further ConfigMaps) and
    the CronJob, in that order (as ``builders/script_cron_job.script_cron_job_manifests`` builds them), as children of
    ``owner``; the namespace, for what else goes in it."""
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
    return namespace
