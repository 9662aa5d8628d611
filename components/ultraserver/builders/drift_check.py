"""The drift CronJob: verify's node-facts check on a schedule, as plain Kubernetes manifests.

It runs ``builders/drift_script.py`` (standard library only, mounted from a ConfigMap) in a stock Python image with
a service account that may only list nodes. A drift fails the Job; `ultraserver verify --node-facts-only` gives
the same verdicts with fixes from a workstation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from ultraserver.builders.expected_nodes import NodeGroupExpectation
from ultraserver.facts.pins.manifests import PYTHON_IMAGE

SCRIPT_NAME = "drift_check.py"
_MOUNT = "/drift"
_NOBODY = 65534


@dataclass
class DriftCheckArgs:
    """Inputs of the drift CronJob."""

    groups: Sequence[NodeGroupExpectation]
    """The GPU node groups and what their nodes should show."""
    schedule: str = "*/30 * * * *"
    """Cron schedule."""
    namespace: str = "ultraserver-health"
    """Namespace created for the CronJob, its service account and script."""
    name: str = "node-drift"
    """Name of the CronJob, ConfigMap, service account and cluster role."""
    node_selector: Mapping[str, str] = field(default_factory=dict)
    """Labels of the system nodes, where the check runs."""
    image: str = PYTHON_IMAGE
    """Image with python3 (the script needs only the standard library)."""


def script_source() -> str:
    """The drift script's text, from the package (the same file the tests import)."""
    return resources.files("ultraserver.builders").joinpath("drift_script.py").read_text()


def drift_manifests(args: DriftCheckArgs) -> list[dict[str, Any]]:
    """Namespace, ServiceAccount, ClusterRole (list nodes), ClusterRoleBinding, ConfigMap and CronJob."""
    meta = {"name": args.name, "namespace": args.namespace}
    expected = json.dumps([g.to_json() for g in args.groups], sort_keys=True)
    pod_spec: dict[str, Any] = {
        "serviceAccountName": args.name,
        "restartPolicy": "Never",
        "securityContext": {"runAsNonRoot": True, "runAsUser": _NOBODY, "runAsGroup": _NOBODY},
        "containers": [
            {
                "name": "drift",
                "image": args.image,
                "command": ["python3", f"{_MOUNT}/{SCRIPT_NAME}"],
                "env": [
                    {"name": "EXPECTED", "value": expected},
                    {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"},
                ],
                "securityContext": {
                    "allowPrivilegeEscalation": False,
                    "readOnlyRootFilesystem": True,
                    "capabilities": {"drop": ["ALL"]},
                },
                "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}, "limits": {"memory": "256Mi"}},
                "volumeMounts": [{"name": "script", "mountPath": _MOUNT, "readOnly": True}],
            }
        ],
        "volumes": [{"name": "script", "configMap": {"name": args.name}}],
    }
    if args.node_selector:
        pod_spec["nodeSelector"] = dict(args.node_selector)
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": args.namespace}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRole",
            "metadata": {"name": f"ultraserver-{args.name}"},
            "rules": [{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]}],
        },
        {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "ClusterRoleBinding",
            "metadata": {"name": f"ultraserver-{args.name}"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": f"ultraserver-{args.name}",
            },
            "subjects": [{"kind": "ServiceAccount", "name": args.name, "namespace": args.namespace}],
        },
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": {SCRIPT_NAME: script_source()}},
        {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": meta,
            "spec": {
                "schedule": args.schedule,
                "concurrencyPolicy": "Forbid",
                "successfulJobsHistoryLimit": 3,
                "failedJobsHistoryLimit": 5,
                "jobTemplate": {
                    "spec": {
                        # A failed run is the report: no retries, and a hung API call cannot pile runs up.
                        "backoffLimit": 0,
                        "activeDeadlineSeconds": 300,
                        "template": {
                            "metadata": {"labels": {"ultraserver.io/drift-check": args.name}},
                            "spec": pod_spec,
                        },
                    }
                },
            },
        },
    ]
