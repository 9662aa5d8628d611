"""Rules for the Helm releases: GPU Operator, NVIDIA DRA driver, EFA device plugin.

Chart names and minimum versions come from facts (facts/pins/charts.py, facts/version_set.minimum_version): the policy
keeps
no copy of either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ultraserver.facts.kubernetes.scheduling import GPU_TAINT_KEY
from ultraserver.facts.pins import charts
from ultraserver.facts.pins.charts import version_at_least
from ultraserver.facts.pins.version_set import minimum_version
from ultraserver.policy.model import (
    EKS_MANAGED_NODE_GROUP,
    HELM_RELEASE,
    LAUNCH_TEMPLATE,
    PlanResource,
    Rule,
    StackIndex,
    as_bool,
    as_list,
    chart_name,
    get_path,
    is_unknown,
)
from ultraserver.policy.network_interfaces import has_efa
from ultraserver.problems import Described, Problem

GPU_OPERATOR_MINIMUM = str(minimum_version(charts.GPU_OPERATOR))
EFA_PLUGIN_MINIMUM = str(minimum_version(charts.EFA_DEVICE_PLUGIN))


def values_of(props: Mapping[str, Any]) -> Mapping[str, Any]:
    """The release's values (empty when unset)."""
    values = props.get("values")
    return values if isinstance(values, Mapping) else {}


def check_gpu_operator_version(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """GPU Operator chart pinned at the minimum version or later."""
    version, minimum = props.get("version"), str(opts["minVersion"])
    if chart_name(props) != charts.GPU_OPERATOR or is_unknown(version) or version_at_least(version, minimum):
        return []
    return [
        Problem(
            "version",
            version,
            f"a GPU Operator chart version of {minimum} or later",
            f"pin {minimum} or later (set version on the release)",
        )
    ]


def check_gpu_operator_host_driver(
    resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]
) -> list[Problem]:
    """With the AL2023 NVIDIA AMI the driver and toolkit come with the AMI, so the operator must not install them."""
    if chart_name(props) != charts.GPU_OPERATOR:
        return []
    values = values_of(props)
    on = [
        key
        for key in ("driver", "toolkit")
        if as_bool(get_path(values, key, "enabled")) is not False and not is_unknown(get_path(values, key, "enabled"))
    ]
    if not on:
        return []
    return [
        Problem(
            f"values.{key}.enabled",
            Described("enabled"),
            "false: the AL2023 NVIDIA AMI already ships the driver and the container toolkit",
            f"set {key}.enabled=false in the GPU Operator values",
        )
        for key in on
    ]


def check_gpu_operator_mig_manager(
    resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]
) -> list[Problem]:
    """MIG manager off: driver 580 turns on CDMM, which does not support MIG."""
    if chart_name(props) != charts.GPU_OPERATOR:
        return []
    enabled = get_path(values_of(props), "migManager", "enabled")
    if as_bool(enabled) is False or is_unknown(enabled):
        return []
    return [
        Problem(
            "values.migManager.enabled",
            Described("enabled (the chart's default)" if enabled is None else str(enabled)),
            "false: MIG is unsupported with CDMM on driver 580",
            "set migManager.enabled=false in the GPU Operator values",
        )
    ]


def check_gpu_operator_no_dra_driver(
    resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]
) -> list[Problem]:
    """The GPU Operator deploys no DRA driver of its own: its GPUCluster mode (values `gpuCluster.deployCR`, off by
    default) renders a second one beside the toolkit's release (NVIDIA/gpu-operator v26.7.0 values.yaml draDriver:
    "rendered only when gpuCluster.deployCR=true")."""
    if chart_name(props) != charts.GPU_OPERATOR:
        return []
    deploy = get_path(values_of(props), "gpuCluster", "deployCR")
    if as_bool(deploy) is not True:
        return []
    return [
        Problem(
            "values.gpuCluster.deployCR",
            deploy,
            f"false: with true the GPU Operator deploys its own DRA driver beside the toolkit's {charts.DRA_DRIVER} "
            "release (two kubelet plugins, two owners of the ComputeDomain CRDs)",
            "leave gpuCluster.deployCR false in the GPU Operator values",
        )
    ]


def check_dra_version(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """DRA driver pinned exactly, under its new chart name at `minVersion` or later (forward-only since 0.4.0)."""
    out = []
    minimum = str(opts["minVersion"])
    for release in StackIndex(resources).of_type(HELM_RELEASE):
        name, version = chart_name(release.inputs), release.inputs.get("version")
        if name == charts.LEGACY_DRA_DRIVER_NAME:
            out.append(
                Problem(
                    release.urn,
                    Described(f"DRA driver chart {name}, the pre-0.4 name"),
                    f"the driver as published since 0.4.0: {charts.DRA_DRIVER} {minimum} or later",
                    f"install {charts.DRA_DRIVER} (its CRDs first, nameOverride {name}: docs/dra-driver-upgrade.md)",
                )
            )
        elif name == charts.DRA_DRIVER and not is_unknown(version) and not _release_at_least(version, minimum):
            out.append(
                Problem(
                    release.urn,
                    version,
                    f"an exact DRA driver chart version, {minimum} or later: the chart follows SemVer since 0.4.0 "
                    "and cannot go back to 25.x",
                    f"pin an exact version, {minimum} or later",
                )
            )
    return out


def _release_at_least(version: Any, minimum: str) -> bool:
    """Whether `version` is an exact release of the renamed DRA driver chart, at least `minimum`."""
    return isinstance(version, str) and charts.is_dra_driver_release(version) and version_at_least(version, minimum)


def check_dra_compute_domains(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """ComputeDomains stay enabled in the DRA driver (they carry IMEX on GB200)."""
    if chart_name(props) != charts.DRA_DRIVER:
        return []
    enabled = get_path(values_of(props), "resources", "computeDomains", "enabled")
    if as_bool(enabled) is not False:
        return []
    return [
        Problem(
            "values.resources.computeDomains.enabled",
            enabled,
            "true: without ComputeDomains there are no IMEX channels for multi-node NVLink",
            "set resources.computeDomains.enabled=true in the DRA driver values",
        )
    ]


def check_dra_gpu_allocation(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """GPU allocation through DRA off (GPUs come from the device plugin) unless explicitly overridden."""
    if chart_name(props) != charts.DRA_DRIVER:
        return []
    values = values_of(props)
    enabled = get_path(values, "resources", "gpus", "enabled")
    if as_bool(enabled) is False or is_unknown(enabled) or as_bool(values.get("gpuResourcesEnabledOverride")):
        return []
    return [
        Problem(
            "values.resources.gpus.enabled",
            enabled,
            "false: the DRA driver would allocate GPUs beside the GPU Operator's device plugin",
            "set resources.gpus.enabled=false (or gpuResourcesEnabledOverride=true if DRA GPU allocation is intended)",
        )
    ]


def check_efa_plugin_present(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[Problem]:
    """A stack with EFA interfaces installs the EFA device plugin, or DRANET in DRA mode (facts/hardware/devices.py)."""
    index = StackIndex(resources)
    if any(chart_name(r.inputs) in (charts.EFA_DEVICE_PLUGIN, charts.DRANET) for r in index.of_type(HELM_RELEASE)):
        return []
    # A stack that declares nothing in Kubernetes has its Kubernetes layer in another stack (kubernetes.layer
    # separate-stack, the kubernetes-layer/ project), whose own plan is checked by this rule's sibling rules.
    if not any(r.type.startswith("kubernetes:") for r in resources):
        return []
    users = [t for t in index.of_type(LAUNCH_TEMPLATE) if has_efa(t.inputs)]
    users += [g for g in index.of_type(EKS_MANAGED_NODE_GROUP) if as_bool(g.inputs.get("enableEfaSupport"))]
    return [
        Problem(
            u.urn,
            Described(f"nodes with EFA interfaces and no {charts.EFA_DEVICE_PLUGIN} release"),
            "an EFA device plugin, so pods can request vpc.amazonaws.com/efa",
            f"install the chart ({EFA_PLUGIN_MINIMUM} or later), or DRANET ({charts.DRANET}) in DRA mode",
        )
        for u in users
    ]


def _tolerates(toleration: Any, key: str) -> bool:
    """The toleration admits pods onto a NoSchedule taint with this key."""
    if not isinstance(toleration, Mapping) or toleration.get("effect") not in (None, "", "NoSchedule"):
        return False
    if toleration.get("key") in (None, ""):
        return toleration.get("operator") == "Exists"
    return bool(toleration.get("key") == key)


def check_efa_plugin_tolerations(
    resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]
) -> list[Problem]:
    """The EFA device plugin tolerates the GPU taint, so it runs on the GPU nodes."""
    if chart_name(props) != charts.EFA_DEVICE_PLUGIN:
        return []
    tolerations = get_path(values_of(props), "tolerations")
    if is_unknown(tolerations):
        return []
    missing = [k for k in opts["taintKeys"] if not any(_tolerates(t, k) for t in as_list(tolerations))]
    if not missing:
        return []
    return [
        Problem(
            "values.tolerations",
            tolerations,
            f"tolerations of the GPU taints {', '.join(missing)} (without them the plugin skips tainted GPU nodes)",
            f"add tolerations [{{key: {missing[0]}, operator: Exists, effect: NoSchedule}}] to its values",
        )
    ]


RULES: tuple[Rule, ...] = (
    Rule(
        name="gpu-operator-version",
        description=f"The GPU Operator chart is pinned at {GPU_OPERATOR_MINIMUM} or later (the EKS UltraServer guide's "
        "minimum, or NVIDIA's oldest supported release line if newer).",
        fix=f"Set the release version to {GPU_OPERATOR_MINIMUM} or later.",
        resource_types=(HELM_RELEASE,),
        check_resource=check_gpu_operator_version,
        config_schema={"minVersion": {"type": "string", "description": "Oldest allowed chart version."}},
        defaults={"minVersion": GPU_OPERATOR_MINIMUM},
    ),
    Rule(
        name="gpu-operator-host-driver",
        description="With the AL2023 NVIDIA AMI, the GPU Operator installs neither driver nor container toolkit.",
        fix="Set driver.enabled=false and toolkit.enabled=false.",
        resource_types=(HELM_RELEASE,),
        check_resource=check_gpu_operator_host_driver,
    ),
    Rule(
        name="gpu-operator-mig-manager-disabled",
        description="The GPU Operator's MIG manager is off (driver 580 enables CDMM; MIG is unsupported).",
        fix="Set migManager.enabled=false.",
        resource_types=(HELM_RELEASE,),
        check_resource=check_gpu_operator_mig_manager,
    ),
    Rule(
        name="gpu-operator-no-dra-driver",
        description="The GPU Operator deploys no DRA driver of its own (GPUCluster mode off); the toolkit installs it.",
        fix="Leave gpuCluster.deployCR false.",
        resource_types=(HELM_RELEASE,),
        check_resource=check_gpu_operator_no_dra_driver,
    ),
    Rule(
        name="dra-driver-version",
        description="The DRA driver is the dra-driver-nvidia-gpu chart at an exact version, 0.4.0 or later "
        "(ComputeDomains with numNodes 0 need 25.8.0 or later, which every release under the new name is; no way "
        "back to 25.x).",
        fix="Use chart dra-driver-nvidia-gpu at the pinned version (docs/dra-driver-upgrade.md).",
        check_stack=check_dra_version,
        config_schema={"minVersion": {"type": "string", "description": "Oldest DRA driver version accepted."}},
        defaults={"minVersion": ".".join(map(str, charts.DRA_DRIVER_FIRST_SEMVER))},
    ),
    Rule(
        name="dra-driver-compute-domains-enabled",
        description="The NVIDIA DRA driver has ComputeDomains enabled.",
        fix="Set resources.computeDomains.enabled=true.",
        resource_types=(HELM_RELEASE,),
        check_resource=check_dra_compute_domains,
    ),
    Rule(
        name="dra-driver-gpu-allocation-disabled",
        description="The NVIDIA DRA driver does not allocate GPUs unless gpuResourcesEnabledOverride is set.",
        fix="Set resources.gpus.enabled=false.",
        resource_types=(HELM_RELEASE,),
        check_resource=check_dra_gpu_allocation,
    ),
    Rule(
        name="efa-device-plugin-present",
        description="A stack whose nodes have EFA interfaces installs the EFA device plugin (DRANET in DRA mode).",
        fix=f"Add the {charts.EFA_DEVICE_PLUGIN} Helm release, or {charts.DRANET} in DRA mode.",
        check_stack=check_efa_plugin_present,
    ),
    Rule(
        name="efa-device-plugin-tolerates-gpu",
        description="The EFA device plugin tolerates the GPU taint (nvidia.com/gpu).",
        fix="Add a NoSchedule toleration for nvidia.com/gpu to the chart values.",
        resource_types=(HELM_RELEASE,),
        check_resource=check_efa_plugin_tolerations,
        config_schema={
            "taintKeys": {
                "type": "array",
                "items": {"type": "string"},
                "description": "Taint keys on GPU nodes the plugin must tolerate.",
            }
        },
        defaults={"taintKeys": [GPU_TAINT_KEY]},
    ),
)
