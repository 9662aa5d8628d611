"""What the plan's Helm releases install that the day-2 code reads: the DeviceClasses, and the namespace and labels of
the DRA driver's kubelet plugin pods.

Read from the rendered charts when the rehearsal has them (``--api real --charts``: ``rehearse/charts.py`` renders
them with a real Helm); else from each release's values in the plan by the pinned charts' own rules
(``facts/hardware/devices.py``, held to the packaged charts rendered by a real Helm in tests/rehearse/test_charted.py),
so a rehearsal needs no Helm. Never from what verify expects: a stack whose DRA driver values turn ComputeDomains off
gets no ComputeDomain DeviceClass here, and verify fails it as it would fail the real cluster.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ultraserver.facts.hardware import devices
from ultraserver.facts.pins.charts import DRA_DRIVER, DRANET
from ultraserver.offline.helm_template import ReleaseInput

KUBELET_PLUGIN_SUFFIX = "-kubelet-plugin"
"""The DRA driver chart names its kubelet plugin DaemonSet `<name>-kubelet-plugin` (templates/kubeletplugin.yaml:20
at v0.4.1)."""


@dataclass(frozen=True)
class Charted:
    """The charts' objects the day-2 code reads."""

    device_classes: tuple[str, ...] = ()
    kubelet_plugin: tuple[str, dict[str, str]] | None = None
    """(namespace, labels) of the kubelet plugin's pods; None when no release runs one."""

    def device_class_objects(self) -> list[dict[str, Any]]:
        """The DeviceClasses as API objects (their selectors left out: no check reads them)."""
        return [
            {"apiVersion": devices.RESOURCE_API_VERSION, "kind": "DeviceClass", "metadata": {"name": name}}
            for name in self.device_classes
        ]


def from_values(releases: Sequence[ReleaseInput]) -> Charted:
    """What the releases install, by each pinned chart's rule over the values the plan gives it."""
    classes: tuple[str, ...] = ()
    plugin = None
    for release in releases:
        if release.chart == DRA_DRIVER:
            classes += devices.dra_driver_device_classes(release.values)
            plugin = plugin or devices.kubelet_plugin_pods(release.values, release.name, release.namespace)
        elif release.chart == DRANET:
            classes += devices.dranet_device_classes(release.values)
    return Charted(classes, plugin)


def from_rendered(objects: Sequence[Mapping[str, Any]]) -> Charted:
    """What the rendered objects are: their DeviceClasses, and the pod template of the kubelet plugin DaemonSet."""
    classes = tuple(str(o["metadata"]["name"]) for o in objects if o.get("kind") == "DeviceClass")
    plugin = None
    for obj in objects:
        meta = obj.get("metadata") or {}
        if obj.get("kind") == "DaemonSet" and str(meta.get("name", "")).endswith(KUBELET_PLUGIN_SUFFIX):
            labels = ((obj["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
            plugin = (str(meta.get("namespace", "")), {str(k): str(v) for k, v in labels.items()})
            break
    return Charted(classes, plugin)
