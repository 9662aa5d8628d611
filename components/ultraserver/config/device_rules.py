"""The device mode's rules: DRA mode needs the Kubernetes minor its drivers document, and no device-plugin release.

The facts (modes, the minimum minor and its source) live in ``facts/hardware/devices.py``; docs/device-modes.md compares
the
modes.
"""

from __future__ import annotations

from datetime import date

from ultraserver.config.model import Settings
from ultraserver.facts.hardware import devices
from ultraserver.facts.pins import charts
from ultraserver.problems import Problem


def device_mode(s: Settings, today: date) -> list[Problem]:
    """DRA mode on a Kubernetes minor older than DRANET's is refused, naming both settings and the fix; so are values
    for the EFA release the mode does not install."""
    mode, version = s.kubernetes.devices, s.cluster.kubernetes_version
    found = []
    if devices.needs_newer_kubernetes(mode, version):
        found.append(
            Problem(
                f"{s.project}:kubernetes.devices",
                f"{mode} on Kubernetes {version}",
                f"DRA mode on Kubernetes {devices.DRA_MIN_KUBERNETES} or newer ({charts.DRANET} "
                f'{charts.pinned(charts.DRANET).version} README: "Kubernetes {devices.DRA_MIN_KUBERNETES}+")',
                f'set {s.project}:cluster.kubernetesVersion: "{devices.DRA_MIN_KUBERNETES}" (upgrade one minor at a '
                f"time, docs/versions.md), or kubernetes.devices: {devices.PLUGINS}",
            )
        )
    # Values of the release the mode does not install would be dropped without a word.
    unused = (
        ("efaDevicePlugin", s.kubernetes.efa_device_plugin) if mode == devices.DRA else ("dranet", s.kubernetes.dranet)
    )
    name, release = unused
    if release.values:
        used = "dranet" if mode == devices.DRA else "efaDevicePlugin"
        found.append(
            Problem(
                f"{s.project}:kubernetes.{name}.values",
                sorted(release.values),
                f"no {name} values with kubernetes.devices: {mode} (that release is not installed)",
                f"remove them, or set them under kubernetes.{used}",
            )
        )
    return found
