"""Node labels and taints GB200 nodes carry, the tolerations and selectors that follow from them, and Kubernetes's
object name rules."""

from __future__ import annotations

import re

GPU_TAINT_KEY = "nvidia.com/gpu"
"""Taint on every GPU node, so only pods that ask for GPUs land there."""
GPU_TAINT_VALUE = "true"
GPU_TAINT_EFFECT = "NoSchedule"
"""Kubernetes spelling; the EKS node group API spells it NO_SCHEDULE."""
GPU_TOLERATION: dict[str, str] = {"key": GPU_TAINT_KEY, "operator": "Exists", "effect": GPU_TAINT_EFFECT}
GPU_RESOURCE = "nvidia.com/gpu"
"""Extended resource of the NVIDIA device plugin: GPUs a pod requests."""
EFA_RESOURCE = "vpc.amazonaws.com/efa"
"""Extended resource of the AWS EFA device plugin: EFA devices a pod requests."""
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
"""Well-known node label with the EC2 instance type
(https://kubernetes.io/docs/reference/labels-annotations-taints/)."""
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"
"""Set by GPU Feature Discovery on nodes with NVIDIA GPUs."""
CLIQUE_LABEL = "nvidia.com/gpu.clique"
"""Set by GPU Feature Discovery (<ClusterUUID>.<CliqueID>): nodes sharing a value share one NVLink domain."""
SYSTEM_ROLE_LABEL = "ultraserver.io/role"
SYSTEM_ROLE_VALUE = "system"
ULTRASERVER_LABEL = "ultraserver.io/ultraserver"
"""Names the UltraServer (node group) a GPU node belongs to; checks and workloads select one NVLink domain by it."""


def system_node_labels() -> dict[str, str]:
    """Labels of the system nodes; controllers select them with a node selector."""
    return {SYSTEM_ROLE_LABEL: SYSTEM_ROLE_VALUE}


# Kubernetes object name rules, from https://kubernetes.io/docs/concepts/overview/working-with-objects/names/.
#
# A DNS label (RFC 1123; namespaces, Services, most names the toolkit derives) has at most 63 characters: lowercase
# letters, digits and '-', starting and ending with a letter or digit. A DNS subdomain (ComputeDomain and most other
# object names) has at most 253 characters and may also contain '.'.
DNS_LABEL_PATTERN = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
"""A DNS label, unanchored (for pattern arguments that anchor it themselves)."""
DNS_LABEL = re.compile(DNS_LABEL_PATTERN)
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
