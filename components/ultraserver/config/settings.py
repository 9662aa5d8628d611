"""The stack settings: the declarative model (config.model), its rules (config.rules) and loader (config.load).

Settings live in the stack file under the project's namespace (``ultraserver-eks:<section>``) plus
``aws:region``. ``parse_settings`` turns that raw config into the typed ``Settings`` or raises one
``ConfigError`` that lists every problem.
"""

from __future__ import annotations

from ultraserver.config.check_model import EfaCheckSettings, HealthSettings, ImexCheckSettings
from ultraserver.config.cluster_model import LOG_TYPES, AddonSettings, ClusterSettings, SystemNodeGroupSettings
from ultraserver.config.fields import PROJECT
from ultraserver.config.gpu_model import GpuNodeGroupSettings, ReservationWindowSettings
from ultraserver.config.kubernetes_model import KubernetesSettings
from ultraserver.config.load import parse_settings, settings_warnings
from ultraserver.config.model import SECTIONS, Settings
from ultraserver.config.network_model import NetworkSettings
from ultraserver.config.release_model import KueueSettings, PrometheusStackSettings, ReleaseSettings
from ultraserver.facts.kubernetes.eks_versions import FLOOR as MIN_KUBERNETES

__all__ = [
    "LOG_TYPES",
    "MIN_KUBERNETES",
    "PROJECT",
    "SECTIONS",
    "AddonSettings",
    "ClusterSettings",
    "EfaCheckSettings",
    "GpuNodeGroupSettings",
    "HealthSettings",
    "ImexCheckSettings",
    "KubernetesSettings",
    "KueueSettings",
    "NetworkSettings",
    "PrometheusStackSettings",
    "ReleaseSettings",
    "ReservationWindowSettings",
    "Settings",
    "SystemNodeGroupSettings",
    "parse_settings",
    "settings_warnings",
]
