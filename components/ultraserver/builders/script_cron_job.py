"""A standard-library script of this package run by a CronJob from ConfigMaps, as plain Kubernetes manifests.

The drift check and the reclaim drain are both this shape: a stock Python image on the system nodes, the script (and
the modules it imports) mounted read-only from a ConfigMap, a service account bound to one ClusterRole, nobody's uid.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

_NOBODY = 65534


def package_script(file_name: str) -> str:
    """The text of a module of ``ultraserver.incluster`` (the same file the tests import)."""
    return resources.files("ultraserver.incluster").joinpath(file_name).read_text()


@dataclass(frozen=True)
class ScriptCronJob:
    """One script CronJob: what differs between them."""

    name: str
    """Name of the CronJob, the script's ConfigMap and service account; the ClusterRole is ``ultraserver-<name>``."""
    namespace: str
    """Namespace created for them."""
    container: str
    """Name of the container."""
    mount: str
    """Where the scripts are mounted."""
    scripts: Mapping[str, str]
    """Mounted file name -> file of ``ultraserver.incluster``; the first is the entry point."""
    env: Sequence[Mapping[str, Any]]
    """The container's environment."""
    rules: Sequence[Mapping[str, Any]]
    """The ClusterRole's rules."""
    schedule: str
    """Cron schedule."""
    successful_history: int
    """successfulJobsHistoryLimit."""
    deadline_seconds: int
    """activeDeadlineSeconds of each run."""
    label: str
    """Pod label key, valued with the name."""
    image: str
    """Image with python3."""
    node_selector: Mapping[str, str] = field(default_factory=dict)
    """Labels of the nodes it runs on."""
    data: Mapping[str, str] | None = None
    """A second ConfigMap (``data_name``), mounted read-only at ``data_mount``; None: none."""
    data_name: str = ""
    """Name of that ConfigMap."""
    data_mount: str = ""
    """Where it is mounted."""


def _pod_spec(job: ScriptCronJob) -> dict[str, Any]:
    entry = next(iter(job.scripts))
    mounts = [{"name": "script", "mountPath": job.mount, "readOnly": True}]
    volumes: list[dict[str, Any]] = [{"name": "script", "configMap": {"name": job.name}}]
    if job.data is not None:
        mounts.append({"name": "data", "mountPath": job.data_mount, "readOnly": True})
        volumes.append({"name": "data", "configMap": {"name": job.data_name}})
    container = {
        "name": job.container,
        "image": job.image,
        "command": ["python3", f"{job.mount}/{entry}"],
        "env": [dict(e) for e in job.env],
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True,
            "capabilities": {"drop": ["ALL"]},
        },
        "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
        "volumeMounts": mounts,
    }
    pod_spec: dict[str, Any] = {
        "serviceAccountName": job.name,
        "restartPolicy": "Never",
        "securityContext": {"runAsNonRoot": True, "runAsUser": _NOBODY, "runAsGroup": _NOBODY},
        "containers": [container],
        "volumes": volumes,
    }
    if job.node_selector:
        pod_spec["nodeSelector"] = dict(job.node_selector)
    return pod_spec


def script_cron_job_manifests(job: ScriptCronJob) -> list[dict[str, Any]]:
    """Namespace, ServiceAccount, ClusterRole, ClusterRoleBinding, ConfigMaps (the scripts, then any data) and
    CronJob, in that order (``resources/script_cron_job.py`` declares them so)."""
    meta = {"name": job.name, "namespace": job.namespace}
    role = f"ultraserver-{job.name}"
    config_maps = [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": meta,
            "data": {mounted: package_script(file) for mounted, file in job.scripts.items()},
        }
    ]
    if job.data is not None:
        data_meta = {"name": job.data_name, "namespace": job.namespace}
        config_maps.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": data_meta, "data": dict(job.data)})
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": job.namespace}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": role},
            "rules": [dict(r) for r in job.rules],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": role},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": [{"kind": "ServiceAccount", "name": job.name, "namespace": job.namespace}],
        },
        *config_maps,
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": meta,
            "spec": {
                "schedule": job.schedule,
                "concurrencyPolicy": "Forbid",
                "successfulJobsHistoryLimit": job.successful_history,
                "failedJobsHistoryLimit": 5,
                "jobTemplate": {
                    "spec": {
                        # A failed run is the report: no retries, and a hung API call cannot pile runs up.
                        "backoffLimit": 0,
                        "activeDeadlineSeconds": job.deadline_seconds,
                        "template": {"metadata": {"labels": {job.label: job.name}}, "spec": _pod_spec(job)},
                    }
                },
            },
        },
    ]
