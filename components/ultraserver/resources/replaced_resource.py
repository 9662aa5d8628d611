"""Custom resources from plain manifests; some are replaced, never updated, when their spec changes.

Two kinds need replacing: a ComputeDomain (its CRD makes spec immutable, so a new spec needs a new object under the same
name) and a fabric check's MPIJob (a finished MPIJob is not rerun in place; recreating it reruns the check).
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.resources.child_options import child_options


def custom_resource(
    name: str, manifest: dict[str, Any], opts: pulumi.ResourceOptions | None = None
) -> k8s.apiextensions.CustomResource:
    """The object of ``manifest`` (apiVersion, kind, metadata, spec), updated in place on a change."""
    return k8s.apiextensions.CustomResource(
        name,
        api_version=manifest["apiVersion"],
        kind=manifest["kind"],
        metadata=manifest["metadata"],
        spec=manifest["spec"],
        opts=opts,
    )


def top_level_resource(
    name: str, manifest: dict[str, Any], opts: pulumi.ResourceOptions | None = None
) -> pulumi.CustomResource:
    """The object of ``manifest`` whose fields sit beside its metadata, with no spec (Kueue's WorkloadPriorityClass:
    ``value``, ``description``), which ``CustomResource`` cannot carry: the same type token
    (``kubernetes:<apiVersion>:<kind>``) and provider version as ``CustomResource`` uses, every field as given."""
    pinned = pulumi.ResourceOptions(version=version("pulumi_kubernetes"))
    return pulumi.CustomResource(
        f"kubernetes:{manifest['apiVersion']}:{manifest['kind']}",
        name,
        dict(manifest),
        pulumi.ResourceOptions.merge(opts, pinned),
    )


def replaced_custom_resource(
    name: str,
    manifest: dict[str, Any],
    parent: pulumi.Resource,
    opts: pulumi.ResourceOptions | None,
    after: list[pulumi.Resource] | None = None,
) -> k8s.apiextensions.CustomResource:
    """The object of `manifest`, a child of `parent` waiting for `after`, deleted and recreated on a change of its spec
    or its labels. Labels too: Kueue's job webhook refuses adding a ``kueue.x-k8s.io/priority-class`` label to a job
    that is not suspended ("WorkloadPriorityClass cannot be added to a non-suspended workload",
    ValidateUpdateForWorkloadPriorityClassName, pkg/controller/jobframework/validation.go at v0.19.2), which a check
    MPIJob that has run is, so an update in place of a deployed check would fail the deploy. A nested path is a
    property path replaceOnChanges takes (Pulumi docs, resource option replaceOnChanges: ``["spec.input"]`` on a
    Kubernetes CustomResource)."""
    replaced = pulumi.ResourceOptions(
        depends_on=after, replace_on_changes=["spec", "metadata.labels"], delete_before_replace=True
    )
    return custom_resource(name, manifest, child_options(parent, opts, replaced))
