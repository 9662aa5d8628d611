"""Rules for the Helm releases: GPU Operator, NVIDIA DRA driver, EFA device plugin.

Chart names and minimum versions come from facts (facts/charts.py, facts/version_set.minimum_version): the policy keeps
no copy of either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ultraserver.facts import charts
from ultraserver.facts.scheduling import GPU_TAINT_KEY
from ultraserver.facts.version_set import minimum_version
from ultraserver.facts.versions import version_at_least
from ultraserver.policy.model import (
    EKS_MANAGED_NODE_GROUP,
    HELM_RELEASE,
    LAUNCH_TEMPLATE,
    PlanResource,
    Rule,
    StackIndex,
    as_bool,
    as_list,
    get_path,
    is_unknown,
)
from ultraserver.policy.network_interfaces import has_efa

GPU_OPERATOR_MINIMUM = str(minimum_version(charts.GPU_OPERATOR))
EFA_PLUGIN_MINIMUM = str(minimum_version(charts.EFA_DEVICE_PLUGIN))


def chart_name(props: Mapping[str, Any]) -> str:
    """The chart's bare name, whether given as name, repo/name or a URL."""
    chart = props.get("chart")
    return chart.rstrip("/").rsplit("/", 1)[-1] if isinstance(chart, str) else ""


def values_of(props: Mapping[str, Any]) -> Mapping[str, Any]:
    """The release's values (empty when unset)."""
    values = props.get("values")
    return values if isinstance(values, Mapping) else {}


def _version_messages(props: Mapping[str, Any], minimum: str, what: str) -> list[str]:
    """A pinned chart version at least the minimum."""
    version = props.get("version")
    if is_unknown(version) or version_at_least(version, minimum):
        return []
    return [f"{what} chart version is {version!r}; pin {minimum} or later (set version on the release)."]


def check_gpu_operator_version(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[str]:
    """GPU Operator chart pinned at the minimum version or later."""
    if chart_name(props) != charts.GPU_OPERATOR:
        return []
    return _version_messages(props, str(opts["minVersion"]), "GPU Operator")


def check_gpu_operator_host_driver(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[str]:
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
        f"{' and '.join(on)} {'is' if len(on) == 1 else 'are'} enabled, but the AL2023 NVIDIA AMI already ships "
        f"them. Set {', '.join(k + '.enabled=false' for k in on)} in the GPU Operator values."
    ]


def check_gpu_operator_mig_manager(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[str]:
    """MIG manager off: driver 580 turns on CDMM, which does not support MIG."""
    if chart_name(props) != charts.GPU_OPERATOR:
        return []
    enabled = get_path(values_of(props), "migManager", "enabled")
    if as_bool(enabled) is False or is_unknown(enabled):
        return []
    return [
        "migManager is enabled (the chart's default), but MIG is unsupported with CDMM on driver 580. "
        "Set migManager.enabled=false in the GPU Operator values."
    ]


def check_gpu_operator_no_dra_driver(
    resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]
) -> list[str]:
    """The GPU Operator deploys no DRA driver of its own: its GPUCluster mode (values `gpuCluster.deployCR`, off by
    default) renders a second one beside the toolkit's release (NVIDIA/gpu-operator v26.7.0 values.yaml draDriver:
    "rendered only when gpuCluster.deployCR=true")."""
    if chart_name(props) != charts.GPU_OPERATOR:
        return []
    deploy = get_path(values_of(props), "gpuCluster", "deployCR")
    if as_bool(deploy) is not True:
        return []
    return [
        "gpuCluster.deployCR is true, so the GPU Operator deploys its own DRA driver beside the toolkit's "
        f"{charts.DRA_DRIVER} release (two kubelet plugins, two owners of the ComputeDomain CRDs). Leave "
        "gpuCluster.deployCR false in the GPU Operator values."
    ]


def check_dra_version(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[tuple[str, str]]:
    """DRA driver pinned exactly, under its new chart name at `minVersion` or later (forward-only since 0.4.0)."""
    out = []
    minimum = str(opts["minVersion"])
    for release in StackIndex(resources).of_type(HELM_RELEASE):
        name, version = chart_name(release.inputs), release.inputs.get("version")
        if name == charts.LEGACY_DRA_DRIVER_NAME:
            out.append(
                (
                    release.urn,
                    f"DRA driver chart {name} is the pre-0.4 name; the driver is published as {charts.DRA_DRIVER} "
                    f"{minimum} or later (its CRDs first, nameOverride {name}: docs/dra-driver-upgrade.md).",
                )
            )
        elif name == charts.DRA_DRIVER and not is_unknown(version) and not _release_at_least(version, minimum):
            out.append(
                (
                    release.urn,
                    f"DRA driver chart version is {version!r}. Pin an exact version, {minimum} or later: the chart "
                    "follows SemVer since 0.4.0 and cannot go back to 25.x.",
                )
            )
    return out


def _release_at_least(version: Any, minimum: str) -> bool:
    """Whether `version` is an exact release of the renamed DRA driver chart, at least `minimum`."""
    return isinstance(version, str) and charts.is_dra_driver_release(version) and version_at_least(version, minimum)


def check_dra_compute_domains(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[str]:
    """ComputeDomains stay enabled in the DRA driver (they carry IMEX on GB200)."""
    if chart_name(props) != charts.DRA_DRIVER:
        return []
    enabled = get_path(values_of(props), "resources", "computeDomains", "enabled")
    if as_bool(enabled) is not False:
        return []
    return [
        "resources.computeDomains.enabled is false, so no IMEX channels for multi-node NVLink. "
        "Set resources.computeDomains.enabled=true in the DRA driver values."
    ]


def check_dra_gpu_allocation(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[str]:
    """GPU allocation through DRA off (GPUs come from the device plugin) unless explicitly overridden."""
    if chart_name(props) != charts.DRA_DRIVER:
        return []
    values = values_of(props)
    enabled = get_path(values, "resources", "gpus", "enabled")
    if as_bool(enabled) is False or is_unknown(enabled) or as_bool(values.get("gpuResourcesEnabledOverride")):
        return []
    return [
        "resources.gpus.enabled is not false, so the DRA driver would allocate GPUs beside the GPU "
        "Operator's device plugin. Set resources.gpus.enabled=false (or gpuResourcesEnabledOverride=true "
        "if DRA GPU allocation is intended)."
    ]


def check_efa_plugin_present(resources: Sequence[PlanResource], opts: Mapping[str, Any]) -> list[tuple[str, str]]:
    """A stack with EFA interfaces installs the EFA device plugin, or DRANET in DRA mode (facts/devices.py)."""
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
        (
            u.urn,
            f"nodes get EFA interfaces but no {charts.EFA_DEVICE_PLUGIN} release is installed, so pods "
            f"cannot request vpc.amazonaws.com/efa. Install the chart ({EFA_PLUGIN_MINIMUM} or later), or DRANET "
            f"({charts.DRANET}) in DRA mode.",
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


def check_efa_plugin_tolerations(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[str]:
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
        f"the EFA device plugin does not tolerate taints {', '.join(missing)}, so it skips tainted GPU nodes. "
        f"Add tolerations [{{key: {missing[0]}, operator: Exists, effect: NoSchedule}}] to its values."
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
