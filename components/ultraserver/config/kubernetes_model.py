"""The Kubernetes layer's settings: the device mode, the chart releases it installs and where it pulls them from."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, ConfigDict, Field, ValidationInfo
from pydantic.alias_generators import to_camel

from ultraserver.config.fields import PROJECT, ChartMirror, ImageMirror, ManifestMirror, Model
from ultraserver.config.release_model import KueueSettings, PrometheusStackSettings, ReleaseSettings
from ultraserver.facts.hardware import devices as device_facts
from ultraserver.facts.pins import charts as chart_facts

RELEASE_KEYS = {
    "gpu_operator": chart_facts.GPU_OPERATOR,
    "dra_driver": chart_facts.DRA_DRIVER,
    "efa_device_plugin": chart_facts.EFA_DEVICE_PLUGIN,
    "node_termination_handler": chart_facts.NODE_TERMINATION_HANDLER,
    "prometheus_stack": chart_facts.KUBE_PROMETHEUS_STACK,
    "kueue": chart_facts.KUEUE,
    "dranet": chart_facts.DRANET,
}
"""Release field -> chart name."""


def _keyed(field: str) -> AfterValidator:
    """Gives a release its stack key (``<project>:kubernetes.<field>``, for errors about its values) and the layer's
    chart mirror (a field before the releases) on a copy, as settings are frozen; the field is named here, not from
    the validation info, which older pydantic-core leaves without it for a default (pydantic/pydantic-core#1826)."""

    def name(release: ReleaseSettings, info: ValidationInfo) -> ReleaseSettings:
        project = (info.context or {}).get("project", PROJECT)
        key = release.settings_key or f"{project}:kubernetes.{to_camel(field)}"
        update = {"chart_mirror": info.data.get("chart_mirror", ""), "settings_key": key}
        changed = any(getattr(release, k) != v for k, v in update.items())
        return release.model_copy(update=update) if changed else release

    return AfterValidator(name)


class KubernetesSettings(Model):
    """The Kubernetes layer: GPU Operator, DRA driver, EFA device plugin or DRANET, NTH, Prometheus, MPI operator."""

    # Defaults are validated too, so each default release gets its stack key (_keyed).
    model_config = ConfigDict(validate_default=True)

    devices: Literal[device_facts.MODES] = Field(  # type: ignore[valid-type]
        device_facts.DEFAULT_MODE,
        description="How pods get GPUs and EFA: device plugins, or DRA drivers (1.35+; docs/device-modes.md).",
    )
    chart_mirror: ChartMirror = Field(
        "",
        description="Pull every chart here instead of its own repository: an https:// Helm repository holding each "
        "chart under its name, or an oci:// registry path holding each at <path>/<chart>, at the pinned versions "
        "(`pulumi up` and `plan --render` alike; docs/deploy.md).",
    )

    gpu_operator: Annotated[ReleaseSettings, _keyed("gpu_operator")] = Field(
        default_factory=ReleaseSettings, description="NVIDIA GPU Operator chart."
    )
    dra_driver: Annotated[ReleaseSettings, _keyed("dra_driver")] = Field(
        default_factory=ReleaseSettings, description="NVIDIA DRA driver chart."
    )
    efa_device_plugin: Annotated[ReleaseSettings, _keyed("efa_device_plugin")] = Field(
        default_factory=ReleaseSettings, description="AWS EFA Kubernetes device plugin chart."
    )
    dranet: Annotated[ReleaseSettings, _keyed("dranet")] = Field(
        default_factory=ReleaseSettings, description="DRANET chart (EFA in DRA mode)."
    )
    node_termination_handler: Annotated[ReleaseSettings, _keyed("node_termination_handler")] = Field(
        default_factory=ReleaseSettings,
        description="AWS Node Termination Handler (on when any GPU group is self-managed).",
    )
    prometheus_stack: Annotated[PrometheusStackSettings, _keyed("prometheus_stack")] = Field(
        default_factory=PrometheusStackSettings,
        description="kube-prometheus-stack (enabled: true to install).",
    )
    kueue: Annotated[KueueSettings, _keyed("kueue")] = Field(
        default_factory=KueueSettings,
        description="Kueue (on by default when the stack has GPU groups).",
    )
    layer: Literal["same-stack", "separate-stack"] = Field(
        "same-stack", description="Deploy the Kubernetes layer in this stack or in a separate stack."
    )
    image_mirror: ImageMirror = Field(
        "",
        description="Pull the toolkit's own job images (reclaim drain, drift check) from this registry path instead "
        "of their own registries: it holds each under its repository path at the pinned digest, as an ECR "
        "pull-through cache does (docs/deploy.md). A private cluster that cannot reach public.ecr.aws needs it, or "
        "its drain never starts.",
    )
    manifest_mirror: ManifestMirror = Field(
        "",
        description="Read the pinned manifests (DRA driver CRDs, MPI operator) here instead of GitHub: an https:// "
        "URL prefix or a local directory holding each file under its pinned name; its sha256 is checked all the same.",
    )

    @property
    def prometheus_stack_enabled(self) -> bool:
        """Whether kube-prometheus-stack is installed."""
        return self.prometheus_stack.enabled
