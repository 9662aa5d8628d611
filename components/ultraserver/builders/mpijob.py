"""The MPIJob (kubeflow.org/v2beta1, of the mpi-operator pinned in facts/pins/manifests.py) shape every fabric check
shares, and its namespace."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ultraserver.facts.hardware.devices import NodeDevices
from ultraserver.facts.pins.manifests import MPIJOB_API_VERSION

LAUNCHER_BACKOFF_LIMIT = 2
"""Launcher retries (runPolicy.backoffLimit): one retry for a transient ssh/DNS race between launcher and workers,
bounded so a real failure is reported instead of retried for ever (unset, the batch Job default would be 6)."""


def mpijob_manifest(
    name: str,
    namespace: str,
    slots_per_worker: int,
    launcher: dict[str, Any],
    worker: dict[str, Any],
    workers: int,
    metadata: Mapping[str, Any] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """An MPIJob whose launcher waits for every worker and whose finished launcher pod (the result) is kept.

    `metadata` adds labels/annotations to the MPIJob (e.g. the Kueue queue name)."""
    return {
        "apiVersion": MPIJOB_API_VERSION,
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": namespace, **{k: dict(v) for k, v in (metadata or {}).items() if v}},
        "spec": {
            "slotsPerWorker": slots_per_worker,
            # mpirun must not start before every worker's sshd is up.
            "launcherCreationPolicy": "WaitForWorkersReady",
            # Keep the finished launcher pod so its log (the result) can be read.
            "runPolicy": {"cleanPodPolicy": "Running", "backoffLimit": LAUNCHER_BACKOFF_LIMIT},
            **spec,
            "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": launcher},
                "Worker": {"replicas": workers, "template": worker},
            },
        },
    }


def namespace_manifest(name: str) -> dict[str, Any]:
    """The namespace a check's jobs run in."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


class WorkerDevices:
    """What the Args of an MPIJob check derive from their ``name`` and their node's devices (a base of their
    dataclasses: its annotations are no fields of theirs)."""

    name: str
    node_devices: NodeDevices

    @property
    def gpus_per_node(self) -> int:
        """GPUs per node, one MPI rank each."""
        return self.node_devices.gpus

    @property
    def claim_template_name(self) -> str:
        """The ResourceClaimTemplate of the workers' devices (DRA mode)."""
        return f"{self.name}-devices"
