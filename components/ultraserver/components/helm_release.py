"""Helm releases of the pinned charts: one generic wiring, one thin component per chart."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.builders.helm_values import (
    deep_merge,
    dra_driver_values,
    efa_device_plugin_values,
    gpu_operator_values,
)
from ultraserver.components.child_options import child_options
from ultraserver.config.settings import ReleaseSettings
from ultraserver.facts import charts
from ultraserver.problems import ConfigError


@dataclass(frozen=True)
class ChartTarget:
    """Where and under which name a chart is installed."""

    chart: str
    """Catalog name of the chart (see ultraserver.charts)."""
    release_name: str
    """Helm release name (fixed, so object names match the upstream docs)."""
    namespace: str
    """Usual namespace of the chart."""
    create_namespace: bool
    """Whether Helm creates the namespace (False for kube-system)."""


def release_values(target: ChartTarget, base: Mapping[str, Any], settings: ReleaseSettings) -> dict[str, Any]:
    """Final values of a release; ConfigError for overrides with unknown keys or nulls."""
    pin = charts.pinned(target.chart)
    key = settings.settings_key or f"{target.chart} values"
    # Pulumi drops null map entries before Helm sees them, so `null` cannot delete a chart default as it
    # would with `helm --values`; refuse it rather than silently keep the default.
    nulls = charts.null_paths(settings.values)
    if nulls:
        raise ConfigError(
            [
                f"{key}: '{path}' is null; Pulumi drops nulls, so the chart default would stay. Set the value "
                "you want instead (a list replaces the chart's list, a map is merged into the chart's map)."
                for path in nulls
            ]
        )
    if settings.timeout_seconds <= 0:
        raise ConfigError(
            f"{target.chart} timeout_seconds: {settings.timeout_seconds} is not allowed; give a positive number "
            "of seconds (e.g. 900)."
        )
    if settings.version in (None, pin.version):
        charts.check_values(target.chart, settings.values, key)
    else:
        # Key paths are only known for the pinned version; another version may add or drop keys.
        unknown = charts.unknown_value_paths(target.chart, settings.values)
        if unknown:
            pulumi.log.warn(
                f"{key}: {', '.join(unknown)} not values of {target.chart} {pin.version} (pinned); only a warning "
                f"because version {settings.version} is used instead."
            )
    return deep_merge(base, settings.values)


class ChartRelease(pulumi.ComponentResource):
    """A helm.v3.Release of a pinned chart; subclasses only choose the type token, chart and base values."""

    release: k8s.helm.v3.Release

    def __init__(
        self,
        type_token: str,
        name: str,
        target: ChartTarget,
        base_values: Mapping[str, Any],
        settings: ReleaseSettings,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__(type_token, name, None, opts)
        pin = charts.pinned(target.chart)
        values = release_values(target, base_values, settings)
        namespace = settings.namespace or target.namespace
        self.release = k8s.helm.v3.Release(
            name,
            k8s.helm.v3.ReleaseArgs(
                name=target.release_name,
                chart=pin.name,
                version=settings.version or pin.version,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=pin.repo),
                namespace=namespace,
                create_namespace=target.create_namespace,
                values=values,
                timeout=settings.timeout_seconds,
                atomic=settings.atomic,
                cleanup_on_fail=True,
            ),
            opts=child_options(self, opts),
        )
        self.register_outputs({"status": self.release.status, "namespace": namespace})


GPU_OPERATOR = ChartTarget(charts.GPU_OPERATOR, "gpu-operator", "gpu-operator", True)
DRA_DRIVER = ChartTarget(charts.DRA_DRIVER, "nvidia-dra-driver-gpu", "nvidia-dra-driver-gpu", True)
# The chart's docs install it into kube-system, next to the other node networking agents.
EFA_DEVICE_PLUGIN = ChartTarget(charts.EFA_DEVICE_PLUGIN, "aws-efa-k8s-device-plugin", "kube-system", False)


@dataclass
class GpuOperatorArgs:
    """Inputs of the GPU Operator release."""

    system_node_selector: dict[str, str]
    """Labels of the system node group, where the operator and NFD master run."""
    release: ReleaseSettings = field(default_factory=ReleaseSettings)
    """Version, values override and Helm options."""


class GpuOperator(ChartRelease):
    """NVIDIA GPU Operator with the driver and toolkit left to the AMI."""

    def __init__(self, name: str, args: GpuOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(
            "ultraserver:index:GpuOperator",
            name,
            GPU_OPERATOR,
            gpu_operator_values(args.system_node_selector),
            args.release,
            opts,
        )


@dataclass
class DraDriverArgs:
    """Inputs of the NVIDIA DRA driver release."""

    system_node_selector: dict[str, str]
    """Labels of the system node group, where the controller runs."""
    nvidia_driver_root: str = "/"
    """Host path of the NVIDIA driver; '/' because the AMI installs it on the host."""
    release: ReleaseSettings = field(default_factory=ReleaseSettings)
    """Version, values override and Helm options."""


class DraDriver(ChartRelease):
    """NVIDIA DRA driver serving ComputeDomains (IMEX channels) on GB200 nodes."""

    def __init__(self, name: str, args: DraDriverArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(
            "ultraserver:index:DraDriver",
            name,
            DRA_DRIVER,
            dra_driver_values(args.system_node_selector, args.nvidia_driver_root),
            args.release,
            opts,
        )


@dataclass
class EfaDevicePluginArgs:
    """Inputs of the EFA device plugin release."""

    release: ReleaseSettings = field(default_factory=ReleaseSettings)
    """Version, values override and Helm options."""


class EfaDevicePlugin(ChartRelease):
    """AWS EFA Kubernetes device plugin, tolerating the GPU taint."""

    def __init__(self, name: str, args: EfaDevicePluginArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(
            "ultraserver:index:EfaDevicePlugin",
            name,
            EFA_DEVICE_PLUGIN,
            efa_device_plugin_values(),
            args.release,
            opts,
        )
