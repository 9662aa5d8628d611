"""Plain data of the Node Termination Handler: its role's policy and the chart values (its queue: EventQueue)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ultraserver.builders.helm_values import require_node_selector
from ultraserver.facts.aws import node_termination as nth


def handler_policy() -> dict[str, Any]:
    """The queue processor's permissions, exactly the README's list."""
    return {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": list(nth.POD_ACTIONS), "Resource": "*"}],
    }


# The value that carries the queue URL, only known once the queue exists.
QUEUE_URL_KEY = "queueURL"


def handler_values(region: str, system_node_selector: Mapping[str, str]) -> dict[str, Any]:
    """Chart values for queue mode (plus QUEUE_URL_KEY): drain on the queue's events, on system nodes."""
    system = require_node_selector(system_node_selector, "system_node_selector")
    return {
        "enableSqsTerminationDraining": True,
        # Pods cannot read the region from IMDS when the hop limit is 1; give it explicitly.
        "awsRegion": region,
        "serviceAccount": {"create": True, "name": nth.SERVICE_ACCOUNT},
        "checkTagBeforeDraining": True,
        "managedTag": nth.MANAGED_TAG,
        "nodeSelector": system,
    }
