"""nodeadm NodeConfig for AL2023 GPU nodes, delivered as MIME multipart user data.

The instance store (3 x 7.5 TB on a GB200 node) is assembled into RAID0 for containerd and kubelet.
The cluster section is only for nodes EKS does not bootstrap itself: self-managed nodes and any
launch template with its own AMI.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from email.mime.multipart import MIMEMultipart
from email.mime.nonmultipart import MIMENonMultipart
from typing import Any

import yaml

from ultraserver.facts.hardware.instances import LocalStorage
from ultraserver.facts.pins.ami import HOST_IMEX_SERVICE, NODECONFIG_CONTENT_TYPE

# cloud-init runs text/x-shellscript parts once at first boot; EKS keeps them when it merges its own user data.
SHELL_SCRIPT_CONTENT_TYPE = "text/x-shellscript"
# A fixed boundary keeps the user data, and so the launch template, identical between runs.
MIME_BOUNDARY = "//ultraserver-nodeconfig//"


@dataclass(frozen=True)
class ClusterDetails:
    """What a node needs to find and trust the cluster API server."""

    name: str
    api_server_endpoint: str
    certificate_authority: str
    """Base64-encoded cluster CA, as EKS returns it."""
    cidr: str
    """The cluster's Kubernetes service CIDR."""


@dataclass(frozen=True)
class NodeConfigSpec:
    """Inputs of one NodeConfig document."""

    local_storage: LocalStorage = "RAID0"
    """nodeadm instance.localStorage.strategy: RAID0, RAID10 or Mount."""
    kubelet_flags: list[str] = field(default_factory=list)
    """Extra kubelet flags, only for what the node-group API cannot carry."""
    cluster: ClusterDetails | None = None
    """Cluster section, for self-managed nodes and custom AMIs."""
    disable_host_imex: bool = True
    """Add a script that stops and masks the host nvidia-imex service (DRA ComputeDomains run their own)."""


def kubelet_flags(labels: Mapping[str, str], taints: Sequence[tuple[str, str, str]]) -> list[str]:
    """kubelet flags that register labels and (key, value, effect) taints, e.g. effect NoSchedule."""
    flags = []
    if labels:
        flags.append("--node-labels=" + ",".join(f"{k}={v}" for k, v in sorted(labels.items())))
    if taints:
        flags.append("--register-with-taints=" + ",".join(f"{k}={v}:{effect}" for k, v, effect in taints))
    return flags


def node_config(spec: NodeConfigSpec) -> dict[str, Any]:
    """The NodeConfig document as a dict."""
    body: dict[str, Any] = {"instance": {"localStorage": {"strategy": spec.local_storage}}}
    if spec.kubelet_flags:
        body["kubelet"] = {"flags": list(spec.kubelet_flags)}
    if spec.cluster is not None:
        body["cluster"] = {
            "name": spec.cluster.name,
            "apiServerEndpoint": spec.cluster.api_server_endpoint,
            "certificateAuthority": spec.cluster.certificate_authority,
            "cidr": spec.cluster.cidr,
        }
    return {"apiVersion": "node.eks.aws/v1alpha1", "kind": "NodeConfig", "spec": body}


def host_imex_script() -> str:
    """Shell script that stops, disables and masks the host IMEX daemon; a no-op error-free run if it is absent.

    Host IMEX and DRA-managed ComputeDomains are mutually exclusive (dra-driver-nvidia-gpu #524; docs/node-image.md).
    Masking also stops a later package update or preset from starting it again.
    """
    return (
        "#!/bin/bash\n"
        "# Host IMEX conflicts with the IMEX daemons of DRA ComputeDomains (docs/node-image.md).\n"
        f"systemctl disable --now {HOST_IMEX_SERVICE} 2>/dev/null || true\n"
        f"systemctl mask {HOST_IMEX_SERVICE}\n"
    )


def user_data(spec: NodeConfigSpec) -> str:
    """MIME multipart user data: the NodeConfig (application/node.eks.aws, not base64), then the IMEX script."""
    part = MIMENonMultipart(*NODECONFIG_CONTENT_TYPE.split("/"))
    part.set_payload(yaml.safe_dump(node_config(spec), sort_keys=False))
    message = MIMEMultipart("mixed", boundary=MIME_BOUNDARY)
    message.attach(part)
    if spec.disable_host_imex:
        script = MIMENonMultipart(*SHELL_SCRIPT_CONTENT_TYPE.split("/"))
        script.set_payload(host_imex_script())
        message.attach(script)
    return message.as_string()
