"""The drift CronJob: verify's node-facts check on a schedule, as plain Kubernetes manifests.

It runs ``incluster/drift.py`` (standard library only, mounted from a ConfigMap; ``script_cron_job.py``) in a
stock Python image with a service account that may only list nodes. A drift fails the Job; `ultraserver verify
--node-facts-only` gives the same verdicts with fixes from a workstation.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ultraserver.builders.expected_nodes import NodeGroupExpectation
from ultraserver.builders.script_cron_job import ScriptCronJob, script_cron_job_manifests
from ultraserver.facts.pins.manifests import PYTHON_IMAGE

SCRIPT_NAME = "drift_check.py"
"""The entry point's mounted name (``incluster/drift.py``), beside the facts it imports."""


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


def drift_manifests(args: DriftCheckArgs) -> list[dict[str, Any]]:
    """Namespace, ServiceAccount, ClusterRole (list nodes), ClusterRoleBinding, ConfigMap and CronJob."""
    expected = json.dumps([g.to_json() for g in args.groups], sort_keys=True)
    return script_cron_job_manifests(
        ScriptCronJob(
            name=args.name,
            namespace=args.namespace,
            container="drift",
            mount="/drift",
            scripts={SCRIPT_NAME: "drift.py", "copied_facts.py": "copied_facts.py"},
            env=[{"name": "EXPECTED", "value": expected}, {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"}],
            rules=[{"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list"]}],
            schedule=args.schedule,
            successful_history=3,
            deadline_seconds=300,
            label="ultraserver.io/drift-check",
            image=args.image,
            node_selector=args.node_selector,
        )
    )
