"""What a node label of the settings must be for the kubelet to set it at registration."""

from __future__ import annotations

import re

from ultraserver.facts.aws import limits
from ultraserver.facts.kubernetes.scheduling import (
    CLIQUE_LABEL,
    GPU_PRESENT_LABEL,
    SYSTEM_ROLE_LABEL,
    ULTRASERVER_LABEL,
)

# Kubernetes label syntax (https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/).
_LABEL_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_LABEL_PREFIX = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
# The kubelet may set labels on its own node under kubernetes.io / k8s.io only in these
# (NodeRestriction admission;
# https://kubernetes.io/docs/reference/access-authn-authz/admission-controllers/#noderestriction).
KUBELET_ALLOWED_PREFIXES = ("kubelet.kubernetes.io", "node.kubernetes.io")
KUBELET_ALLOWED_LABELS = (
    "kubernetes.io/hostname",
    "kubernetes.io/arch",
    "kubernetes.io/os",
    "beta.kubernetes.io/instance-type",
    "node.kubernetes.io/instance-type",
    "failure-domain.beta.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "topology.kubernetes.io/zone",
)

OWNED_LABELS = {
    ULTRASERVER_LABEL: "set by the toolkit to the node's UltraServer (its value would replace yours)",
    SYSTEM_ROLE_LABEL: "set by the toolkit on system nodes (controllers would land on GPU nodes)",
    CLIQUE_LABEL: "set by GPU Feature Discovery from the NVLink fabric (a registered value fakes an NVLink domain)",
    GPU_PRESENT_LABEL: "set by GPU Feature Discovery from the hardware",
}
"""Node labels others own: a user's value is dropped or misleads every check and workload that selects by it."""


def label_allowed(name: str, value: str) -> str | None:
    """What a node label must be when it would be refused (syntax, kubelet prefix, comma in value, a label the
    toolkit or GPU Feature Discovery owns), or None."""
    if name in OWNED_LABELS:
        return f"a label of your own: {name} is {OWNED_LABELS[name]}"
    prefix, _, short = name.rpartition("/")
    if not _LABEL_NAME.fullmatch(short) or limits.over(limits.KUBERNETES_LABEL_NAME, len(short)):
        return "a label name: up to 63 of letters, digits, -, _ and ., starting and ending alphanumeric"
    if prefix and (not _LABEL_PREFIX.fullmatch(prefix) or limits.over(limits.KUBERNETES_LABEL_PREFIX, len(prefix))):
        return "a label prefix that is a DNS subdomain (lowercase, e.g. example.com/)"
    restricted = prefix.endswith(("kubernetes.io", "k8s.io"))
    if restricted and name not in KUBELET_ALLOWED_LABELS and not prefix.endswith(KUBELET_ALLOWED_PREFIXES):
        return "no kubernetes.io or k8s.io prefix other than kubelet.kubernetes.io/ and node.kubernetes.io/ (kubelet)"
    if "," in value:
        return "a value without commas (the kubelet's --node-labels is comma-separated)"
    if value and (not _LABEL_NAME.fullmatch(value) or limits.over(limits.KUBERNETES_LABEL_NAME, len(value))):
        return "a label value: up to 63 of letters, digits, -, _ and ., starting and ending alphanumeric"
    return None
