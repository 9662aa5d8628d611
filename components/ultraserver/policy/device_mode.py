"""Rules of the DRA device mode: no workload asks for a device-plugin resource nothing serves there.

In DRA mode (facts/hardware/devices.py) GPUs and EFA devices are DRA devices and no node advertises ``nvidia.com/gpu``
or
``vpc.amazonaws.com/efa``. From Kubernetes 1.36 the scheduler serves ``nvidia.com/gpu`` through the DRA driver's
DeviceClass (its ``extendedResourceName``; facts/hardware/devices.py DRA_EXTENDED_RESOURCES), so there only EFA requests
are left unserved; below 1.36, or when the plan holds no cluster to read the minor from (a separate Kubernetes layer),
both are. A plan is in DRA mode when it installs DRANET (the aws-dranet chart), which the toolkit installs only in
that mode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ultraserver.facts.hardware import devices
from ultraserver.facts.pins import charts
from ultraserver.policy.cluster import cluster_view
from ultraserver.policy.model import CLUSTER_TYPES, PlanResource, Rule, as_list, get_path, releases_of
from ultraserver.policy.workloads import pod_sets
from ultraserver.problems import Described, Problem


def dra_mode(resources: Sequence[PlanResource]) -> bool:
    """Whether the plan installs DRANET, i.e. EFA (and GPUs) come through DRA."""
    return bool(releases_of(resources, charts.DRANET))


def _plugin_resources(template: Mapping[str, Any]) -> list[str]:
    """Device-plugin resources any container of a pod template asks for."""
    spec = template.get("spec") or {}
    found: set[str] = set()
    for container in [*as_list(spec.get("containers")), *as_list(spec.get("initContainers"))]:
        found |= set(devices.requests_plugin_resource(get_path(container, "resources")))
    return sorted(found)


def kubernetes_version(resources: Sequence[PlanResource]) -> str | None:
    """The Kubernetes version of the plan's EKS cluster; None when the plan declares none."""
    for r in resources:
        view = cluster_view(r.type, r.inputs) if r.type in CLUSTER_TYPES else None
        if view is not None and isinstance(view.version, str):
            return view.version
    return None


def _unserved(version: str | None) -> str:
    """Why a DRA-mode node serves none of the requested device-plugin resources, at this minor."""
    at = f"Kubernetes {version}" if version else "an unknown Kubernetes version (no cluster in this plan)"
    served = ", ".join(sorted(devices.DRA_EXTENDED_RESOURCES))
    if devices.served_through_dra(next(iter(devices.DRA_EXTENDED_RESOURCES)), version):
        return f"no node advertises them in DRA mode and, on {at}, DeviceClasses serve only {served}"
    minimum = devices.EXTENDED_RESOURCE_MIN_KUBERNETES
    return f"no node advertises them in DRA mode and below {minimum} (here {at}) no DeviceClass serves them"


def check_no_plugin_resources(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """In DRA mode, every workload that asks for a device-plugin resource no DeviceClass serves at the cluster's
    minor (vpc.amazonaws.com/efa always, nvidia.com/gpu below 1.36)."""
    if not dra_mode(resources):
        return []
    version = kubernetes_version(resources)
    out = []
    for r in resources:
        if not r.type.startswith("kubernetes:") or not isinstance(r.inputs.get("spec"), Mapping):
            continue
        asked = {n for _, t in pod_sets(r.inputs.get("kind"), r.inputs["spec"]) for n in _plugin_resources(t)}
        found = sorted(n for n in asked if not devices.served_through_dra(n, version))
        if found:
            name = get_path(r.inputs, "metadata", "name")
            out.append(
                Problem(
                    r.urn,
                    Described(f"{r.inputs.get('kind')} {name!r} requests {', '.join(found)}"),
                    f"devices claimed through DRA (kubernetes.devices: {devices.DRA}): {_unserved(version)}",
                    "claim the devices through a ResourceClaimTemplate of DeviceClasses "
                    f"{devices.GPU_DEVICE_CLASS} and {devices.EFA_DEVICE_CLASS} (builders/device_claims.py), or run "
                    "the stack in plugins mode",
                )
            )
    return out


RULES: tuple[Rule, ...] = (
    Rule(
        name="dra-mode-no-plugin-resources",
        description=(
            "In DRA device mode, no workload requests a device-plugin resource nothing serves: "
            "vpc.amazonaws.com/efa never, nvidia.com/gpu below Kubernetes 1.36 (from 1.36 the DRA driver's DeviceClass "
            "serves it as its extendedResourceName)."
        ),
        fix="Claim GPUs and EFA devices with a ResourceClaimTemplate (gpu.nvidia.com, efa.networking.k8s.aws).",
        check_stack=check_no_plugin_resources,
    ),
)
