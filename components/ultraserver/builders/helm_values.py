"""Helm values the toolkit sets for each pinned chart, and the deep merge of user overrides over them."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from ultraserver.facts.kubernetes.scheduling import GPU_PRESENT_LABEL
from ultraserver.facts.kubernetes.spares import GPU_NODE_DAEMON_TOLERATIONS
from ultraserver.facts.pins.charts import LEGACY_DRA_DRIVER_NAME
from ultraserver.problems import ConfigError, Problem


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """`base` with `override` laid over it: maps merge key by key, anything else (lists, scalars, None) replaces."""
    merged = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def require_node_selector(selector: Mapping[str, str], setting: str) -> dict[str, str]:
    """The selector as a dict, or ConfigError if it is empty or not string-to-string."""
    if not selector or not all(isinstance(k, str) and k and isinstance(v, str) for k, v in selector.items()):
        raise ConfigError(
            Problem(
                setting,
                dict(selector),
                'a node selector of at least one label, {"<label key>": "<value>"}, that the system node group carries',
                'give one, e.g. {"ultraserver.io/role": "system"}',
            )
        )
    return dict(selector)


def required_node_affinity(selector: Mapping[str, str]) -> dict[str, Any]:
    """A required node affinity matching every label of `selector`."""
    expressions = [{"key": key, "operator": "In", "values": [value]} for key, value in sorted(selector.items())]
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": expressions}]}
        }
    }


def gpu_operator_values(system_node_selector: Mapping[str, str], service_monitor: bool = False) -> dict[str, Any]:
    """GPU Operator values for the EKS AL2023 NVIDIA AMI: the AMI already ships the driver and container toolkit.

    `service_monitor` only together with the Prometheus stack: the operator creates the dcgm-exporter ServiceMonitor
    itself and, when the servicemonitors.monitoring.coreos.com CRD is missing, reports the dcgm-exporter state
    NotReady (NVIDIA/gpu-operator controllers/object_controls.go, `couldn't find ServiceMonitor CRD`).
    """
    system = require_node_selector(system_node_selector, "system_node_selector")
    return {
        # GPU metrics (DCGM exporter) for Prometheus and for finding failing GPUs between verify runs.
        "dcgmExporter": {"enabled": True, "serviceMonitor": {"enabled": service_monitor}},
        "driver": {"enabled": False},
        "toolkit": {"enabled": False},
        "devicePlugin": {"enabled": True},
        "nfd": {"enabled": True},
        # GFD sets nvidia.com/gpu.clique, which ComputeDomains and the clique pod affinity rely on.
        "gfd": {"enabled": True},
        # The AMI's driver enables CDMM on GB200, which rules out MIG.
        "migManager": {"enabled": False},
        "daemonsets": {"tolerations": [dict(t) for t in GPU_NODE_DAEMON_TOLERATIONS]},
        # Never the operator's own, experimental DRA stack (a GPUCluster CR with a second DRA driver): the toolkit
        # runs the DRA driver as its own release in both device modes. Off at the v26.7.0 default too (values.yaml
        # 568-576: the GPUCluster "is an experimental feature and is disabled by default"); set here so a default
        # that changes in a later chart cannot bring up a second driver beside the toolkit's.
        "gpuCluster": {"deployCR": False},
        "operator": {"nodeSelector": system},
        "node-feature-discovery": {"master": {"nodeSelector": system}, "gc": {"nodeSelector": system}},
    }


def dra_driver_values(system_node_selector: Mapping[str, str], nvidia_driver_root: str = "/") -> dict[str, Any]:
    """NVIDIA DRA driver values: ComputeDomains only, controller on system nodes, kubelet plugin on GPU nodes."""
    system = require_node_selector(system_node_selector, "system_node_selector")
    return {
        # Object names of the pre-0.4 chart, on every install: a stack first deployed at 25.x is upgraded in place
        # rather than given a second DaemonSet, Deployment and RBAC (facts/pins/charts.py LEGACY_DRA_DRIVER_NAME).
        "nameOverride": LEGACY_DRA_DRIVER_NAME,
        # The driver lives on the host (AMI), not under /run/nvidia/driver as when the GPU Operator installs it.
        "nvidiaDriverRoot": nvidia_driver_root,
        # In plugins mode GPUs are allocated by the device plugin (device_mode_values.py turns DRA GPUs on otherwise).
        "resources": {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}},
        # The chart pins the controller to control-plane nodes, which EKS does not expose: replace that
        # affinity (lists are replaced whole by Helm) and drop the control-plane toleration.
        "controller": {
            "nodeSelector": system,
            "affinity": required_node_affinity(system),
            "tolerations": [],
        },
        "kubeletPlugin": {
            "affinity": required_node_affinity({GPU_PRESENT_LABEL: "true"}),
            "tolerations": [dict(t) for t in GPU_NODE_DAEMON_TOLERATIONS],
        },
    }


def efa_device_plugin_values() -> dict[str, Any]:
    """EFA device plugin values: its DaemonSet must also run on the tainted GPU nodes."""
    return {"tolerations": [dict(t) for t in GPU_NODE_DAEMON_TOLERATIONS]}


def kube_prometheus_stack_values(system_node_selector: Mapping[str, str]) -> dict[str, Any]:
    """kube-prometheus-stack values: controllers on system nodes, and every ServiceMonitor in the cluster selected.

    With `serviceMonitorSelectorNilUsesHelmValues: false` and no selector, Prometheus picks up ServiceMonitors of
    other releases too (the GPU Operator's dcgm-exporter one); the default would select only this release's.
    """
    system = require_node_selector(system_node_selector, "system_node_selector")
    return {
        "prometheus": {
            "prometheusSpec": {
                "serviceMonitorSelectorNilUsesHelmValues": False,
                "podMonitorSelectorNilUsesHelmValues": False,
                "nodeSelector": system,
            }
        },
        "alertmanager": {"alertmanagerSpec": {"nodeSelector": system}},
        "prometheusOperator": {"nodeSelector": system},
        "grafana": {"nodeSelector": system},
        "kube-state-metrics": {"nodeSelector": system},
    }
