"""What a node label of the settings must be for the kubelet to set it at registration."""

from __future__ import annotations

import re

from ultraserver.facts.aws import limits

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


def label_allowed(name: str, value: str) -> str | None:
    """What a node label must be when it would be refused (syntax, kubelet prefix, comma in value), or None."""
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
