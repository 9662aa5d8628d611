"""The settings of a chart release: version, values, namespace and Helm options, shared by every release the
Kubernetes layer installs (``KubernetesSettings`` in config.kubernetes_model), and the two releases with more."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, StrictBool, StrictInt, StrictStr
from pydantic.json_schema import SkipJsonSchema

from ultraserver.config.fields import Model, pattern
from ultraserver.facts.kubernetes.scheduling import DNS_LABEL_PATTERN


class ReleaseSettings(Model):
    """User-tunable settings shared by every chart release."""

    version: Annotated[str, pattern(r"v?[0-9]+\.[0-9]+\.[0-9]+", "an exact chart version such as 1.2.3")] | None = (
        Field(None, description="Chart version; empty keeps the toolkit's pinned version (recommended).")
    )
    values: dict[StrictStr, Any] = Field(
        default_factory=dict, description="Values deep-merged over the toolkit's values (maps merge, lists replace)."
    )
    namespace: Annotated[str, pattern(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?", "a namespace name")] | None = Field(
        None, description="Namespace of the release; empty uses the chart's usual namespace."
    )
    timeout_seconds: StrictInt = Field(
        900, ge=60, le=7200, description="How long Helm waits for the release's resources to become ready."
    )
    atomic: StrictBool = Field(
        True, description="Roll back a failed install or upgrade instead of leaving it half done."
    )
    settings_key: SkipJsonSchema[str | None] = Field(None, alias="__settingsKey", exclude=True)
    """Settings key named in error messages about `values` (KubernetesSettings sets it; '<chart> values' without)."""
    chart_mirror: SkipJsonSchema[str] = Field("", alias="__chartMirror", exclude=True)
    """Where the chart is pulled instead of its own repository: ``KubernetesSettings.chart_mirror``, which sets it on
    every release (empty: the chart's own repository)."""


class PrometheusStackSettings(ReleaseSettings):
    """kube-prometheus-stack, off unless enabled."""

    enabled: StrictBool = Field(False, description="Install kube-prometheus-stack.")


class KueueSettings(ReleaseSettings):
    """Kueue: gang admission, GPU quota and UltraServer/NVLink-clique topology for jobs."""

    enabled: StrictBool | None = Field(None, description="Install Kueue; default: on when the stack has GPU groups.")
    local_queue_namespaces: tuple[
        Annotated[str, pattern(DNS_LABEL_PATTERN, "a namespace name (DNS-1123 label)")], ...
    ] = Field(
        ("default",),
        description="Namespaces that get a LocalQueue (created if missing) for submitting jobs.",
    )
