"""The GPU Operator's operands as they run on a GPU node (chart gpu-operator v26.7.0).

The operator creates one DaemonSet per operand from the ClusterPolicy; each enabled operand puts one pod on every GPU
node. Their pods carry the ClusterPolicy's `daemonsets.labels`, which the chart fills with
`app.kubernetes.io/managed-by: gpu-operator` (templates/_helpers.tpl:51-53 "gpu-operator.operand-labels", rendered into
templates/clusterpolicy.yaml:37-39 at v26.7.0). That the operator copies those labels onto the operand pods, and the
`app` label of each operand below, come from the operator's asset manifests, which were not read here: UNVERIFIED.
"""

from __future__ import annotations

NAMESPACE = "gpu-operator"
"""The release's usual namespace (the operands run there too)."""
OPERAND_SELECTOR = "app.kubernetes.io/managed-by=gpu-operator"
"""Label selector of every operand pod (the chart's operand labels)."""
OPERAND_APPS: dict[str, str] = {
    "devicePlugin": "nvidia-device-plugin-daemonset",
    "gfd": "gpu-feature-discovery",
    "dcgmExporter": "nvidia-dcgm-exporter",
    "validator": "nvidia-operator-validator",
}
"""ClusterPolicy section -> the `app` label of its operand's pods (UNVERIFIED, see above)."""
DEFAULT_ON = frozenset(OPERAND_APPS)
"""Operands the chart enables by default (values.yaml `enabled: true` of each section; the validator has no switch)."""
APP_LABEL = "app"
