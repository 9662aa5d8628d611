"""One MPIJob custom resource of a fabric check, declared so that any change reruns the check."""

from __future__ import annotations

from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.components.child_options import child_options


def mpijob_resource(
    name: str,
    manifest: dict[str, Any],
    parent: pulumi.Resource,
    opts: pulumi.ResourceOptions | None,
    after: list[pulumi.Resource],
) -> k8s.apiextensions.CustomResource:
    """The MPIJob of `manifest`, a child of `parent` waiting for `after`."""
    return k8s.apiextensions.CustomResource(
        name,
        api_version=manifest["apiVersion"],
        kind=manifest["kind"],
        metadata=manifest["metadata"],
        spec=manifest["spec"],
        # A finished MPIJob is not rerun in place: any change recreates it, which reruns the check.
        opts=child_options(
            parent,
            opts,
            pulumi.ResourceOptions(depends_on=after, replace_on_changes=["spec"], delete_before_replace=True),
        ),
    )
