"""ultraserver: Amazon EKS for NVIDIA GB200 UltraServers, as Pulumi components and an offline plan.

The curated public API. Names load on first use, so importing a lower layer (``ultraserver.facts``,
``ultraserver.config``) or the policy pack does not load Pulumi and its providers.

Layers, each importing only the ones before it:
``problems`` → ``facts`` → ``config`` → ``builders`` → ``components`` → ``offline`` / ``policy`` /
``preflight`` / ``verify`` → ``cli``.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS: dict[str, str] = {
    # Components and their typed arguments.
    "Platform": "components.platform",
    "PlatformArgs": "components.platform",
    "Network": "components.network",
    "NetworkArgs": "components.network",
    "Cluster": "components.cluster",
    "ClusterArgs": "components.cluster",
    "ClusterCoreData": "components.cluster",
    "NodeRole": "components.node_role",
    "NodeRoleArgs": "components.node_role",
    "GpuNodeGroup": "components.gpu_node_group",
    "GpuNodeGroupArgs": "components.gpu_node_group",
    "KubernetesLayer": "components.kubernetes_layer",
    "KubernetesLayerArgs": "components.kubernetes_layer",
    "GpuOperator": "components.helm_release",
    "GpuOperatorArgs": "components.helm_release",
    "DraDriver": "components.helm_release",
    "DraDriverArgs": "components.helm_release",
    "EfaDevicePlugin": "components.helm_release",
    "EfaDevicePluginArgs": "components.helm_release",
    "MpiOperator": "components.mpi_operator",
    "MpiOperatorArgs": "components.mpi_operator",
    "ComputeDomain": "components.compute_domain",
    "ComputeDomainArgs": "builders.compute_domain",
    "ComputeDomainPodPieces": "builders.compute_domain",
    "compute_domain_pod_pieces": "builders.compute_domain",
    "ImexCheck": "components.imex_check",
    "ImexCheckArgs": "builders.imex_check",
    "ImexTarget": "config.views",
    "Alerts": "components.alerts",
    "AlertsArgs": "components.alerts",
    "Kueue": "components.kueue",
    "KueueArgs": "builders.kueue",
    "LOCAL_QUEUE_NAME": "builders.kueue",
    "local_queue_manifest": "builders.kueue",
    "podset_topology_annotations": "builders.kueue",
    "queue_labels": "builders.kueue",
    # Settings and the pure helpers a custom program needs.
    "Settings": "config.settings",
    "ReleaseSettings": "config.settings",
    "SystemNodeGroupSettings": "config.settings",
    "AddonSettings": "config.settings",
    "parse_settings": "config.settings",
    "plan_subnets": "config.subnets",
    "ips_needed": "config.subnets",
    "layout_for": "facts.efa",
    "summarize_layout": "facts.efa",
    "EfaInterface": "facts.efa",
    "ReservationWindow": "facts.capacity_blocks",
    "CapacityBlock": "facts.capacity_blocks",
    "GPU_TOLERATION": "facts.scheduling",
    "ULTRASERVER_LABEL": "facts.scheduling",
    "CLIQUE_LABEL": "facts.scheduling",
    "system_node_labels": "facts.scheduling",
    # Results and errors.
    "Problem": "problems",
    "ConfigError": "problems",
    # The offline engine.
    "record": "offline.engine",
    "run_plan": "offline.engine",
    "Plan": "offline.engine",
    "PlanResource": "offline.resource",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ultraserver' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"ultraserver.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
