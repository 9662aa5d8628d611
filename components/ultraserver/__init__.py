"""ultraserver: Amazon EKS for NVIDIA GB200 UltraServers, as Pulumi components and an offline plan.

The curated public API. Names load on first use, so importing a lower layer (``ultraserver.facts``,
``ultraserver.config``) or the policy pack does not load Pulumi and its providers.

Layers, bottom up; each may import itself and the layers listed after its colon, nothing else
(``LAYERS`` below; ``tests/test_layers.py`` enforces it, docs/architecture.md shows it):

    problems:
    clock:
    incluster:
    arguments: problems
    facts: problems arguments
    config: problems clock facts
    builders: problems arguments facts config incluster
    resources: problems clock arguments facts config builders
    offline: problems clock facts config builders resources
    policy: problems facts config offline
    preflight: problems facts config
    verify: problems facts config builders
    status: problems clock facts config incluster builders preflight verify
    rehearse: problems clock facts config incluster builders resources offline verify status
    cli: problems clock facts config builders offline policy preflight verify status rehearse

``resources`` holds the Pulumi components (the wiring); everything below it is plain Python. ``incluster`` holds the
programs the cluster runs by itself, with the standard library only: it imports nothing of ours but itself.
"""

from __future__ import annotations

import importlib
import re
from typing import Any

_EXPORTS: dict[str, str] = {
    # Components and their typed arguments.
    "Platform": "resources.platform",
    "PlatformArgs": "resources.platform",
    "Network": "resources.network",
    "NetworkArgs": "resources.network",
    "Cluster": "resources.cluster",
    "ClusterArgs": "resources.cluster",
    "ClusterCoreData": "resources.cluster",
    "NodeRole": "resources.node_role",
    "NodeRoleArgs": "resources.node_role",
    "GpuNodeGroup": "resources.gpu_node_group",
    "GpuNodeGroupArgs": "resources.gpu_node_group",
    "GpuNodeGroupSettings": "config.settings",
    "NetworkSettings": "config.settings",
    "KubernetesSettings": "config.settings",
    "PrometheusStackSettings": "config.settings",
    "KubernetesLayer": "resources.kubernetes_layer",
    "KubernetesLayerArgs": "resources.kubernetes_layer",
    "GpuOperator": "resources.helm_release",
    "GpuOperatorArgs": "resources.helm_release",
    "DraDriver": "resources.helm_release",
    "DraDriverArgs": "resources.helm_release",
    "EfaDevicePlugin": "resources.helm_release",
    "EfaDevicePluginArgs": "resources.helm_release",
    "MpiOperator": "resources.mpi_operator",
    "MpiOperatorArgs": "resources.mpi_operator",
    "ComputeDomain": "resources.compute_domain",
    "ComputeDomainArgs": "builders.compute_domain",
    "ComputeDomainPodPieces": "builders.compute_domain",
    "compute_domain_pod_pieces": "builders.compute_domain",
    "drain_blocks": "builders.reclaim_drain",
    "drain_step": "status.drain",
    "Alerts": "resources.alerts",
    "AlertsArgs": "resources.alerts",
    "LOCAL_QUEUE_NAME": "builders.kueue",
    "local_queue_manifest": "builders.kueue",
    "podset_topology_annotations": "builders.kueue",
    "queue_labels": "builders.kueue",
    # Settings and the pure helpers a custom program needs.
    "Settings": "config.settings",
    "ClusterSettings": "config.settings",
    "ImexCheckSettings": "config.settings",
    "EfaCheckSettings": "config.settings",
    "NcclCheckSettings": "config.check_model",
    "HealthSettings": "config.settings",
    "DriftCheckSettings": "config.check_model",
    "KueueSettings": "config.settings",
    "DeviceMode": "facts.hardware.devices",
    "ReleaseSettings": "config.settings",
    "SystemNodeGroupSettings": "config.settings",
    "AddonSettings": "config.settings",
    "parse_settings": "config.settings",
    "plan_subnets": "config.subnets",
    "ips_needed": "config.subnets",
    "layout_for": "facts.hardware.efa",
    "summarize_layout": "facts.hardware.efa",
    "EfaInterface": "facts.hardware.efa",
    "ReservationWindow": "facts.capacity.capacity_blocks",
    "CapacityBlock": "facts.capacity.capacity_blocks",
    "NodeDevices": "facts.hardware.devices",
    "node_devices": "facts.hardware.devices",
    "claim_template": "builders.device_claims",
    "pod_claim": "builders.device_claims",
    "container_claim": "builders.device_claims",
    "whole_node_resources": "builders.device_claims",
    "GPU_TOLERATION": "facts.kubernetes.scheduling",
    "ULTRASERVER_LABEL": "facts.kubernetes.scheduling",
    "CLIQUE_LABEL": "facts.kubernetes.scheduling",
    "system_node_labels": "facts.kubernetes.scheduling",
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

_LAYER = "KubernetesLayerArgs(settings=Settings(...))"
MOVED: dict[str, str] = {
    "ImexCheck": f"the KubernetesLayer declares it from its settings: {_LAYER} with imex_check=ImexCheckSettings()",
    "ImexCheckArgs": f"the KubernetesLayer derives it from its settings: {_LAYER} with imex_check=ImexCheckSettings()",
    "ImexTarget": f"the KubernetesLayer derives one per UltraServer from the settings' gpu_node_groups: {_LAYER}",
    "ReclaimDrain": f"the KubernetesLayer declares it from the settings' Capacity Block windows: {_LAYER}",
    "ReclaimDrainArgs": f"the KubernetesLayer derives it from the settings' Capacity Block windows: {_LAYER}",
    "Kueue": f"the KubernetesLayer declares it from its settings: {_LAYER} with "
    "kubernetes=KubernetesSettings(kueue=KueueSettings(...))",
    "KueueArgs": f"the KubernetesLayer derives Kueue and its quota from its settings: {_LAYER} with "
    "kubernetes=KubernetesSettings(kueue=KueueSettings(...))",
}
"""Names an earlier release exported, and where each went (a program importing one is told instead of failing)."""

LAYERS: dict[str, tuple[str, ...]] = {
    layer: tuple(allowed.split())
    for layer, allowed in re.findall(r"^    ([a-z_]+):((?: [a-z_]+)*)$", __doc__ or "", flags=re.MULTILINE)
}
"""The layer table above: each layer and the lower layers it may import (tests and docs read it from here)."""


def __getattr__(name: str) -> Any:
    if name in MOVED:
        # Not an AttributeError: ``from ultraserver import X`` would replace its message with a bare ImportError.
        from ultraserver.problems import ConfigError, Described, Problem

        raise ConfigError(
            Problem(f"ultraserver.{name}", Described("no longer in the public API"), MOVED[name], "use that instead")
        )
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ultraserver' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"ultraserver.{_EXPORTS[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
