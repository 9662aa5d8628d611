"""The namespace a fabric check's jobs run in, and its LocalQueue when the jobs are queued through Kueue."""

from __future__ import annotations

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.builders.kueue import local_queue_manifest
from ultraserver.builders.mpijob import namespace_manifest
from ultraserver.resources.child_options import child_options
from ultraserver.resources.replaced_resource import custom_resource


def check_namespace(
    name: str, namespace: str, queue_name: str, parent: pulumi.Resource, opts: pulumi.ResourceOptions | None
) -> tuple[pulumi.ResourceOptions, list[pulumi.Resource]]:
    """Declare the namespace (and the LocalQueue `queue_name` in it, feeding the stack's ClusterQueue); return the
    options of objects in the namespace and what the check's jobs must wait for."""
    created = k8s.core.v1.Namespace(
        name, metadata=namespace_manifest(namespace)["metadata"], opts=child_options(parent, opts)
    )
    in_namespace = child_options(parent, opts, pulumi.ResourceOptions(depends_on=[created]))
    if not queue_name:
        return in_namespace, []
    return in_namespace, [custom_resource(f"{name}-queue", local_queue_manifest(namespace, queue_name), in_namespace)]
