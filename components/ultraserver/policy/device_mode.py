"""Rules of the DRA device mode: no workload asks for the device plugins' extended resources there.

In DRA mode (facts/devices.py) GPUs and EFA devices are DRA devices; ``nvidia.com/gpu`` and ``vpc.amazonaws.com/efa``
are not advertised by any node, so a pod asking for them stays Pending. A plan is in DRA mode when it installs DRANET
(the aws-dranet chart), which the toolkit installs only in that mode.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ultraserver.facts import charts, devices
from ultraserver.policy.model import HELM_RELEASE, PlanResource, Rule, as_list, get_path
from ultraserver.policy.workloads import pod_sets
from ultraserver.problems import Described, Problem


def _release_chart(resource: PlanResource) -> str:
    chart = resource.inputs.get("chart")
    return chart.rstrip("/").rsplit("/", 1)[-1] if isinstance(chart, str) else ""


def dra_mode(resources: Sequence[PlanResource]) -> bool:
    """Whether the plan installs DRANET, i.e. EFA (and GPUs) come through DRA."""
    return any(r.type == HELM_RELEASE and _release_chart(r) == charts.DRANET for r in resources)


def _plugin_resources(template: Mapping[str, Any]) -> list[str]:
    """Device-plugin resources any container of a pod template asks for."""
    spec = template.get("spec") or {}
    found: set[str] = set()
    for container in [*as_list(spec.get("containers")), *as_list(spec.get("initContainers"))]:
        found |= set(devices.requests_plugin_resource(get_path(container, "resources")))
    return sorted(found)


def check_no_plugin_resources(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """In DRA mode, every workload that asks for nvidia.com/gpu or vpc.amazonaws.com/efa."""
    if not dra_mode(resources):
        return []
    out = []
    for r in resources:
        if not r.type.startswith("kubernetes:") or not isinstance(r.inputs.get("spec"), Mapping):
            continue
        found = sorted({n for _, t in pod_sets(r.inputs.get("kind"), r.inputs["spec"]) for n in _plugin_resources(t)})
        if found:
            name = get_path(r.inputs, "metadata", "name")
            out.append(
                Problem(
                    r.urn,
                    Described(f"{r.inputs.get('kind')} {name!r} requests {', '.join(found)}"),
                    f"devices claimed through DRA: no node advertises {', '.join(found)} in DRA mode "
                    f"(kubernetes.devices: {devices.DRA})",
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
            "In DRA device mode, no workload requests nvidia.com/gpu or vpc.amazonaws.com/efa (no device plugin "
            "advertises them)."
        ),
        fix="Claim GPUs and EFA devices with a ResourceClaimTemplate (gpu.nvidia.com, efa.networking.k8s.aws).",
        check_stack=check_no_plugin_resources,
    ),
)
