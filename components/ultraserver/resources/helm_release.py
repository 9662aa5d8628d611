"""Helm releases of the pinned charts: one generic wiring, one thin component per chart."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.arguments import checked, checked_component
from ultraserver.builders.device_mode_values import dra_driver_mode_values, gpu_operator_mode_values
from ultraserver.builders.helm_values import (
    deep_merge,
    dra_driver_values,
    efa_device_plugin_values,
    gpu_operator_values,
    kube_prometheus_stack_values,
)
from ultraserver.builders.node_termination import QUEUE_URL_KEY, handler_values
from ultraserver.config.settings import ReleaseSettings
from ultraserver.facts.hardware.devices import COMPUTE_DOMAIN_CRD, DRA_DRIVER_NAMESPACE, DeviceMode
from ultraserver.facts.pins import charts, gpu_operator, manifests
from ultraserver.facts.pins.manifests import CRD_KIND
from ultraserver.problems import ConfigError, Problem
from ultraserver.resources.child_options import child_options
from ultraserver.resources.pinned_manifest import PinnedManifestArgs, PinnedManifestGroup


@dataclass(frozen=True)
class ChartTarget:
    """Where and under which name a chart is installed."""

    chart: str
    """Catalog name of the chart (see ultraserver.facts.pins.charts)."""
    release_name: str
    """Helm release name (fixed, so object names match the upstream docs)."""
    namespace: str
    """Usual namespace of the chart."""
    create_namespace: bool
    """Whether Helm creates the namespace (False for kube-system)."""
    disable_openapi_validation: bool = False
    """Skip Helm's OpenAPI validation of rendered objects (pulumi-kubernetes applies it on install only)."""

    @property
    def skip_await(self) -> bool:
        """Whether the release skips Helm's wait (and so is not atomic): its DaemonSets run on every GPU node."""
        return self.chart in charts.ON_GPU_NODES


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
                Problem(
                    f"{key}.{path}",
                    None,
                    "a value (Pulumi drops nulls, so the chart default would stay)",
                    "set the value you want (a list replaces the chart's list, a map is merged into the chart's map)",
                )
                for path in nulls
            ]
        )
    if settings.timeout_seconds <= 0:
        raise ConfigError(
            Problem(
                f"{target.chart} timeout_seconds",
                settings.timeout_seconds,
                "a positive number of seconds",
                "give e.g. 900",
            )
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


@checked_component
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
        late_values: Mapping[str, pulumi.Input[Any]] | None = None,
    ) -> None:
        super().__init__(type_token, name, None, opts)
        pin = charts.pinned(target.chart)
        values = release_values(target, base_values, settings)
        # Top-level values only known at deploy time (e.g. a queue URL): their keys are checked now.
        late = dict(late_values or {})
        charts.check_values(target.chart, dict.fromkeys(late, ""), f"{target.chart} values")
        values_input: pulumi.Input[Mapping[str, Any]] = (
            pulumi.Output.all(**late).apply(lambda known: {**values, **known}) if late else values
        )
        namespace = settings.namespace or target.namespace
        chart, repo = charts.chart_reference(pin, settings.chart_mirror)
        before = self._before_release(name, settings, opts)
        release_opts = child_options(self, opts, pulumi.ResourceOptions(depends_on=before) if before else None)
        self.release = k8s.helm.v3.Release(
            name,
            k8s.helm.v3.ReleaseArgs(
                name=target.release_name,
                chart=chart,
                version=settings.version or pin.version,
                repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=repo) if repo else None,
                namespace=namespace,
                create_namespace=target.create_namespace,
                values=values_input,
                timeout=settings.timeout_seconds,
                # Helm waits whenever a release is atomic (facts/pins/charts.py), so a release that skips the wait is
                # not.
                atomic=settings.atomic and not target.skip_await,
                cleanup_on_fail=True,
                skip_await=target.skip_await or None,
                disable_openapi_validation=target.disable_openapi_validation or None,
                skip_crds=self._skip_crds(settings) or None,
            ),
            opts=release_opts,
        )
        self.register_outputs({"status": self.release.status, "namespace": namespace})

    def _before_release(
        self, name: str, settings: ReleaseSettings, opts: pulumi.ResourceOptions | None
    ) -> list[pulumi.Resource]:
        """Children the release waits for (e.g. CRDs the toolkit manages itself); none by default."""
        return []

    def _skip_crds(self, settings: ReleaseSettings) -> bool:
        """Whether Helm leaves the chart's crds/ alone because the toolkit applies them."""
        return False


# Helm waits for every DaemonSet pod when it waits at all, and it waits whenever a release is atomic, whatever
# skipAwait says (facts/pins/charts.py, read in Helm's and pulumi-kubernetes's sources). So the releases with DaemonSets
# on every GPU node (charts.ON_GPU_NODES: GPU Operator, DRA driver kubelet plugin, EFA plugin, DRANET, the Prometheus
# stack's node exporter) skip the await and are not atomic: one unhealthy GPU node can no longer roll them back on
# every node. Template and API errors still fail the release; the fabric checks (the IMEX nvbandwidth check per
# UltraServer, `ultraserver verify`) are the health signal.
#
# GPU Operator upgrades: the chart's `operator.upgradeCRD` pre-upgrade hook Job (kept at its default, true) applies
# the new ClusterPolicy/NVIDIADriver CRDs, and needs Helm's OpenAPI validation off so the new ClusterPolicy is not
# checked against the old CRD (values.yaml at v26.7.0, line 87: "requires --disable-openapi-validation flag").
# Limitation: pulumi-kubernetes sets DisableOpenAPIValidation in helmCreate only, not in helmUpdate (helm_release.go,
# read at commit cdd7cc16), and `disable_crd_hooks` would disable every hook, the CRD Job included. So an upgrade
# whose ClusterPolicy uses fields the old CRD lacks fails before the hook (nothing is applied; the release is not
# atomic, see above, so it stays failed rather than rolling back); then apply the new CRDs first as NVIDIA's upgrade
# guide describes (docs/deploy.md "Upgrading the GPU Operator and the DRA driver").
MODE_MOVED = {
    "devices": "it became the device mode as one value: write mode=DeviceMode(name='dra', kubernetes_version=...)"
}
"""Where the device-mode string an earlier release took went."""

GPU_OPERATOR_RELEASE = ChartTarget(
    charts.GPU_OPERATOR, "gpu-operator", gpu_operator.NAMESPACE, True, disable_openapi_validation=True
)
# The DRA driver keeps its pre-0.4 release name (charts.LEGACY_DRA_DRIVER_NAME): a release named differently would be a
# second installation, and pulumi-kubernetes replaces a Release only when `name` or `namespace` changes (a new chart,
# repository or version is an in-place helm upgrade: provider/pkg/provider/helm_release.go:907 at v4.32.0).
DRA_DRIVER_RELEASE = ChartTarget(charts.DRA_DRIVER, charts.LEGACY_DRA_DRIVER_NAME, DRA_DRIVER_NAMESPACE, True)
# The chart's docs install it into kube-system, next to the other node networking agents.
EFA_DEVICE_PLUGIN_RELEASE = ChartTarget(charts.EFA_DEVICE_PLUGIN, "aws-efa-k8s-device-plugin", "kube-system", False)
KUBE_PROMETHEUS_STACK_RELEASE = ChartTarget(charts.KUBE_PROMETHEUS_STACK, "kube-prometheus-stack", "monitoring", True)


@checked(MODE_MOVED)
@dataclass
class GpuOperatorArgs:
    """Inputs of the GPU Operator release."""

    system_node_selector: dict[str, str]
    """Labels of the system node group, where the operator and NFD master run."""
    release: ReleaseSettings = field(default_factory=ReleaseSettings)
    """Version, values override and Helm options."""
    service_monitor: bool = False
    """Create the dcgm-exporter ServiceMonitor; only when the Prometheus Operator CRDs are installed first."""
    mode: DeviceMode = field(default_factory=DeviceMode)
    """The stack's device mode (config.views.device_mode): the operator's device plugin runs in plugins mode only."""


class GpuOperator(ChartRelease):
    """NVIDIA GPU Operator with the driver and toolkit left to the AMI."""

    def __init__(self, name: str, args: GpuOperatorArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(
            "ultraserver:index:GpuOperator",
            name,
            GPU_OPERATOR_RELEASE,
            deep_merge(
                gpu_operator_values(args.system_node_selector, args.service_monitor),
                gpu_operator_mode_values(args.mode),
            ),
            args.release,
            opts,
        )


@checked(MODE_MOVED)
@dataclass
class DraDriverArgs:
    """Inputs of the NVIDIA DRA driver release."""

    system_node_selector: dict[str, str]
    """Labels of the system node group, where the controller runs."""
    nvidia_driver_root: str = "/"
    """Host path of the NVIDIA driver; '/' because the AMI installs it on the host."""
    mode: DeviceMode = field(default_factory=DeviceMode)
    """The stack's device mode (config.views.device_mode): the driver allocates GPUs too in DRA mode."""
    release: ReleaseSettings = field(default_factory=ReleaseSettings)
    """Version, values override and Helm options."""
    manifest_mirror: str = ""
    """Where the CRDs are read instead of GitHub (PinnedManifestArgs.mirror); empty reads the pinned URLs."""


class DraDriver(ChartRelease):
    """DRA driver for NVIDIA GPUs serving ComputeDomains (IMEX channels) on GB200 nodes.

    Helm installs a chart's crds/ on first install only and never upgrades them, so the toolkit applies the driver's
    CRDs itself (downloaded, digest-checked, server-side, taking over from Helm) before the release, which skips
    crds/: a chart version bump comes with its CRDs, applied first as the driver's upgrade guide asks. The GPU
    Operator waits for these CRDs too (``crd_owner``), so its older copies are never installed.

    The CRDs are declared whatever the chart version: a resource that leaves the program is deleted by ``pulumi up``,
    and deleting a CRD deletes every ComputeDomain with it (Helm never puts them back). They are also
    ``retain_on_delete``, so a rename or any later change that drops them leaves them in the cluster. Not ``protect``:
    that would make every ``pulumi destroy`` of a stack (routine once its Capacity Blocks end) fail until each CRD is
    unprotected by hand, and retain already keeps them and the ComputeDomains when Pulumi lets go of them.
    """

    crds: list[PinnedManifestGroup]
    """The toolkit-applied CRDs (those of the pinned chart version, whatever version the release runs)."""
    crd_mirror: str
    """Where the CRDs are read (DraDriverArgs.manifest_mirror)."""

    def _before_release(
        self, name: str, settings: ReleaseSettings, opts: pulumi.ResourceOptions | None
    ) -> list[pulumi.Resource]:
        self.crds = []
        pinned = charts.pinned(charts.DRA_DRIVER).version
        if settings.version not in (None, pinned):
            pulumi.log.warn(
                f"{name}: DRA driver version {settings.version} is not the pinned one ({pinned}): the toolkit keeps "
                f"applying the CRDs of {pinned}, never deleting them, and Helm skips the chart's own. Pin the new "
                "version's CRDs in ultraserver.facts.pins.manifests before relying on fields it adds."
            )
        for crd, pin in manifests.DRA_DRIVER_CRDS.items():
            # The ComputeDomain CRD group keeps the name it had before the CRDs were two: a new name would be a new
            # resource, and deleting the old one deletes the CRD and every ComputeDomain with it.
            group = f"{name}-crd" if crd == COMPUTE_DOMAIN_CRD else f"{name}-crd-{crd.partition('.')[0]}"
            self.crds.append(
                PinnedManifestGroup(
                    group,
                    PinnedManifestArgs(pin, force_kinds=(CRD_KIND,), mirror=self.crd_mirror, retain_kinds=(CRD_KIND,)),
                    opts=child_options(self, opts, pulumi.ResourceOptions(retain_on_delete=True)),
                )
            )
        return list(self.crds)

    def _skip_crds(self, settings: ReleaseSettings) -> bool:
        return True

    def crd_owner(self) -> list[pulumi.Resource]:
        """What a release shipping the same CRDs waits for: the toolkit's CRDs."""
        return list(self.crds)

    def __init__(self, name: str, args: DraDriverArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        self.crd_mirror = args.manifest_mirror  # read by _before_release, which the base constructor calls
        super().__init__(
            "ultraserver:index:DraDriver",
            name,
            DRA_DRIVER_RELEASE,
            deep_merge(
                dra_driver_values(args.system_node_selector, args.nvidia_driver_root),
                dra_driver_mode_values(args.mode),
            ),
            args.release,
            opts,
        )


@checked()
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
            EFA_DEVICE_PLUGIN_RELEASE,
            efa_device_plugin_values(),
            args.release,
            opts,
        )


NODE_TERMINATION_HANDLER_RELEASE = ChartTarget(
    charts.NODE_TERMINATION_HANDLER, "aws-node-termination-handler", "kube-system", False
)


@checked()
@dataclass
class NodeTerminationHandlerArgs:
    """Inputs of the Node Termination Handler release (queue mode, for self-managed groups)."""

    queue_url: pulumi.Input[str]
    """URL of the SQS queue the EventBridge rules feed (the handler's EventQueue)."""
    region: str
    """AWS region of the queue and the Auto Scaling groups."""
    system_node_selector: dict[str, str] = field(default_factory=dict)
    """Labels of the system node group, where the queue processor runs."""
    release: ReleaseSettings = field(default_factory=ReleaseSettings)
    """Version, values override and Helm options."""


class NodeTerminationHandler(ChartRelease):
    """AWS Node Termination Handler: cordons and drains a self-managed node before its instance goes away."""

    def __init__(self, name: str, args: NodeTerminationHandlerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(
            "ultraserver:index:NodeTerminationHandler",
            name,
            NODE_TERMINATION_HANDLER_RELEASE,
            handler_values(args.region, args.system_node_selector),
            args.release,
            opts,
            late_values={QUEUE_URL_KEY: args.queue_url},
        )


@checked()
@dataclass
class PrometheusStackArgs:
    """Inputs of the optional kube-prometheus-stack release."""

    system_node_selector: dict[str, str]
    """Labels of the system node group, where Prometheus, Alertmanager, Grafana and the operator run."""
    release: ReleaseSettings = field(default_factory=ReleaseSettings)
    """Version, values override and Helm options."""


class PrometheusStack(ChartRelease):
    """kube-prometheus-stack: Prometheus Operator and its CRDs, Prometheus selecting every ServiceMonitor."""

    def __init__(self, name: str, args: PrometheusStackArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(
            "ultraserver:index:PrometheusStack",
            name,
            KUBE_PROMETHEUS_STACK_RELEASE,
            kube_prometheus_stack_values(args.system_node_selector),
            args.release,
            opts,
        )
