"""Kubernetes object name rules, from https://kubernetes.io/docs/concepts/overview/working-with-objects/names/.

A DNS label (RFC 1123; namespaces, Services, most names the toolkit derives) has at most 63 characters: lowercase
letters, digits and '-', starting and ending with a letter or digit. A DNS subdomain (ComputeDomain and most other
object names) has at most 253 characters and may also contain '.'.
"""

from __future__ import annotations

import re

DNS_LABEL_PATTERN = r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"
"""A DNS label, unanchored (for pattern arguments that anchor it themselves)."""
DNS_LABEL = re.compile(DNS_LABEL_PATTERN)
DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?")
