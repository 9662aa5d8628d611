"""EKS add-ons the cluster declares, their pinned versions, and which of them need running nodes to become ACTIVE.

An add-on whose workload is a Deployment (CoreDNS) reaches ACTIVE only once its pods run; the EKS API waits
for that (Terraform AWS provider ``internal/service/eks/addon.go``, ``waitAddonCreated``). DaemonSet add-ons
(vpc-cni, kube-proxy, eks-pod-identity-agent) are ACTIVE with zero nodes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

COREDNS = "coredns"
POD_IDENTITY_AGENT = "eks-pod-identity-agent"
NODE_MONITORING_AGENT = "eks-node-monitoring-agent"
NODE_BOUND_ADDONS: frozenset[str] = frozenset({COREDNS})
VPC_CNI = "vpc-cni"
KUBE_PROXY = "kube-proxy"


@dataclass(frozen=True)
class AddonPin:
    """The addonVersion the toolkit pins for one add-on on one Kubernetes minor, with where it was read."""

    version: str
    """EKS addonVersion (v1.13.2-eksbuild.11); empty: not verified, the EKS default of the day is used."""
    source: str
    checked: date
    verified: bool = True
    """False when no AWS page confirmed the version (then it is a peer's pin, or unpinned)."""


_COREDNS_TABLE = (
    "EKS user guide managing-coredns ('CoreDNS versions', docs.aws.amazon.com/ja_jp/.../managing-coredns.md)"
)
_KUBE_PROXY_TABLE = (
    "EKS user guide managing-kube-proxy ('kube-proxy versions', docs.amazonaws.cn/zh_cn/.../managing-kube-proxy.md)"
)
_PEER = "UNVERIFIED: not in the EKS guide copies searched; pinned by a peer CDK configuration (addonVersions map)"
_NONE = "UNVERIFIED: no published addonVersion found for this minor; the EKS default of the day is used"
_CHECKED = date(2026, 11, 25)

# Pinned addonVersion per add-on and Kubernetes minor: an unpinned add-on is whatever AWS's default is on the day of
# the first deploy, so two stacks built a month apart would differ. Each row says where it was read; "latest version
# of the Amazon EKS add-on type for each Kubernetes version" is what the EKS guide's tables list.
ADDON_VERSIONS: dict[str, dict[str, AddonPin]] = {
    COREDNS: {
        "1.33": AddonPin("v1.12.4-eksbuild.18", _COREDNS_TABLE, _CHECKED),
        "1.34": AddonPin("v1.13.2-eksbuild.11", _COREDNS_TABLE, _CHECKED),
        "1.35": AddonPin("v1.14.3-eksbuild.3", _COREDNS_TABLE, _CHECKED),
        "1.36": AddonPin("v1.14.3-eksbuild.3", _COREDNS_TABLE, _CHECKED),
    },
    KUBE_PROXY: {
        "1.33": AddonPin("v1.33.10-eksbuild.2", _KUBE_PROXY_TABLE, _CHECKED),
        "1.34": AddonPin("v1.34.6-eksbuild.2", _KUBE_PROXY_TABLE, _CHECKED),
        "1.35": AddonPin("v1.35.3-eksbuild.2", _KUBE_PROXY_TABLE, _CHECKED),
        "1.36": AddonPin("", _NONE, _CHECKED, verified=False),
    },
    VPC_CNI: {
        minor: AddonPin("v1.21.1-eksbuild.5", _PEER, _CHECKED, verified=False) for minor in ("1.33", "1.34", "1.35")
    }
    | {"1.36": AddonPin("", _NONE, _CHECKED, verified=False)},
    POD_IDENTITY_AGENT: {
        minor: AddonPin("v1.3.10-eksbuild.2", _PEER, _CHECKED, verified=False) for minor in ("1.33", "1.34", "1.35")
    }
    | {"1.36": AddonPin("", _NONE, _CHECKED, verified=False)},
    # The agent's Go module is at v1.7.0 (pkg.go.dev, published 2026-08-04; read 2026-11-25), but no published
    # addonVersion (the eksbuild suffix EKS adds) was found: the EKS default of the day is used; preflight reads it.
    NODE_MONITORING_AGENT: {
        minor: AddonPin("", _NONE + " (agent module v1.7.0)", _CHECKED, verified=False)
        for minor in ("1.33", "1.34", "1.35", "1.36")
    },
}


def pinned_version(addon: str, kubernetes_version: str) -> str:
    """The toolkit's addonVersion for an add-on on a minor ('' when none is pinned: the EKS default)."""
    pin = ADDON_VERSIONS.get(addon, {}).get(kubernetes_version)
    return pin.version if pin else ""


def addon_version(addon: str, override: str, kubernetes_version: str) -> str:
    """The stack's addonVersion: its own override, else the toolkit's pin for the minor ('' is EKS's default)."""
    return override or pinned_version(addon, kubernetes_version)
