"""Rule: a Helm release that skips the wait is not atomic, and a release with DaemonSets on GPU nodes skips it.

Helm waits whenever a release is atomic, whatever skipAwait says (facts/pins/charts.py): `skipAwait: true` with
`atomic: true` still waits for every pod, so one GPU node that cannot start a DaemonSet pod rolls the release back
on every node.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ultraserver.facts.pins import charts
from ultraserver.policy.model import HELM_RELEASE, Rule, as_bool, chart_name
from ultraserver.problems import Problem


def check_release_waits(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """skipAwait and atomic together, or a GPU-node chart whose release waits."""
    skip_await, atomic = bool(as_bool(props.get("skipAwait"))), bool(as_bool(props.get("atomic")))
    name = chart_name(props)
    if skip_await and atomic:
        return [
            Problem(
                "atomic",
                True,
                f"false with skipAwait on the release of {name!r}: Helm waits whenever a release is atomic "
                "(helm pkg/action/install.go:289, upgrade.go:158)",
                "set atomic false",
            )
        ]
    if name in charts.ON_GPU_NODES and charts.waits(atomic, skip_await):
        return [
            Problem(
                "skipAwait",
                skip_await,
                f"true (and atomic false) on the release of {name!r}: it waits for its DaemonSet pods on every GPU "
                "node, so one unhealthy node fails (or rolls back) the release everywhere",
                "set skipAwait true and atomic false",
            )
        ]
    return []


RULES: tuple[Rule, ...] = (
    Rule(
        name="helm-release-wait",
        description=(
            "A Helm release that skips the wait is not atomic (Helm waits whenever a release is atomic), and a "
            "release with DaemonSets on every GPU node (GPU Operator, DRA driver, EFA plugin, DRANET, the Prometheus "
            "stack's node exporter) skips the wait."
        ),
        fix="Set skipAwait true and atomic false on releases with DaemonSets on GPU nodes.",
        resource_types=(HELM_RELEASE,),
        check_resource=check_release_waits,
    ),
)
