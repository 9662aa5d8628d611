"""How a GPU node registers: the labels and taints of the kubelet flags in its launch template's NodeConfig.

The plan's launch template carries the node's user data (base64 MIME, one part of type ``application/node.eks.aws``
holding nodeadm's NodeConfig); nodeadm hands ``spec.kubelet.flags`` to the kubelet, whose ``--node-labels`` and
``--register-with-taints`` the node registers with (kubelet flags reference, ``--node-labels <key=value pairs>``,
``--register-with-taints <key=value:effect pairs>``, read 2026-11-27).
"""

from __future__ import annotations

import base64
import email
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import yaml

from ultraserver.facts.kubernetes.scheduling import ULTRASERVER_LABEL
from ultraserver.offline.resource import PlanResource

NODECONFIG_TYPE = "application/node.eks.aws"


@dataclass(frozen=True)
class Registration:
    """The labels and taints a node of one node group registers with."""

    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[dict[str, str], ...] = ()


def kubelet_flags(user_data: str) -> list[str]:
    """The kubelet flags of the NodeConfig in a launch template's (base64) user data; [] when it has none."""
    message = email.message_from_string(base64.b64decode(user_data).decode())
    flags: list[str] = []
    for part in message.walk():
        if part.get_content_type() == NODECONFIG_TYPE:
            config: Any = yaml.safe_load(str(part.get_payload()))
            flags += ((config.get("spec") or {}).get("kubelet") or {}).get("flags") or []
    return flags


def registration(flags: Iterable[str]) -> Registration:
    """Labels and taints from ``--node-labels=k=v,...`` and ``--register-with-taints=k=v:Effect,...``."""
    labels: dict[str, str] = {}
    taints: list[dict[str, str]] = []
    for flag in flags:
        name, _, value = flag.partition("=")
        if name == "--node-labels":
            labels.update(dict(pair.split("=", 1) for pair in value.split(",") if pair))
        elif name == "--register-with-taints":
            for taint in filter(None, value.split(",")):
                pair, _, effect = taint.rpartition(":")
                key, _, taint_value = pair.partition("=")
                taints.append({"key": key, "value": taint_value, "effect": effect})
    return Registration(labels, tuple(taints))


def registrations(launch_templates: Iterable[PlanResource]) -> dict[str, Registration]:
    """Node group name (its ultraserver.io/ultraserver label) -> how its nodes register, from the plan."""
    found = {}
    for template in launch_templates:
        user_data = template.inputs.get("userData")
        if not isinstance(user_data, str):
            continue
        found_here = registration(kubelet_flags(user_data))
        if ULTRASERVER_LABEL in found_here.labels:
            found[found_here.labels[ULTRASERVER_LABEL]] = found_here
    return found
