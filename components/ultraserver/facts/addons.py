"""EKS add-ons the cluster declares, and which of them need running nodes to become ACTIVE.

An add-on whose workload is a Deployment (CoreDNS) reaches ACTIVE only once its pods run; the EKS API waits
for that (Terraform AWS provider ``internal/service/eks/addon.go``, ``waitAddonCreated``). DaemonSet add-ons
(vpc-cni, kube-proxy, eks-pod-identity-agent) are ACTIVE with zero nodes.
"""

from __future__ import annotations

COREDNS = "coredns"
POD_IDENTITY_AGENT = "eks-pod-identity-agent"
NODE_MONITORING_AGENT = "eks-node-monitoring-agent"
NODE_BOUND_ADDONS: frozenset[str] = frozenset({COREDNS})
