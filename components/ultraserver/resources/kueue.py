"""Kueue: the pinned chart on the system nodes, then the GB200 Topology, ResourceFlavor, ClusterQueue and the
LocalQueues jobs are submitted to."""

from __future__ import annotations

from collections.abc import Mapping

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.arguments import checked_component
from ultraserver.builders.kueue import (
    CLUSTER_QUEUE_NAME,
    FLAVOR_NAME,
    KueueArgs,
    check_priority_class_manifest,
    cluster_queue_manifest,
    flavor_names,
    kueue_values,
    local_queue_manifest,
    resource_flavor_manifest,
    topology_manifest,
    unplaced_flavor_manifest,
)
from ultraserver.builders.mpijob import namespace_manifest
from ultraserver.facts.kubernetes import kueue as kueue_facts
from ultraserver.facts.pins import charts
from ultraserver.problems import ConfigError, Problem
from ultraserver.resources.child_options import child_options
from ultraserver.resources.helm_release import ChartRelease, ChartTarget
from ultraserver.resources.replaced_resource import custom_resource, top_level_resource

KUEUE_RELEASE = ChartTarget(charts.KUEUE, "kueue", kueue_facts.NAMESPACE, True)
"""The Kueue release: chart, release name and namespace (created by Helm)."""
# Namespaces that exist in every cluster: a LocalQueue there needs no Namespace object of ours.
BUILT_IN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})


def check_queue_namespaces(args: KueueArgs, taken: Mapping[str, str]) -> None:
    """ConfigError when a LocalQueue namespace is one the layer creates itself (`taken`: namespace -> what made it):
    its Namespace object would be declared twice, and the checks bring their own LocalQueue."""
    clash = sorted(n for n in args.local_queue_namespaces if n in taken)
    if clash:
        raise ConfigError(
            Problem(
                f"{args.settings.settings_key or 'kubernetes.kueue'}.localQueueNamespaces",
                clash,
                "namespaces for your teams' jobs, not the stack's own ("
                + ", ".join(f"{n}: {taken[n]}" for n in sorted(taken))
                + ")",
                "remove them (the checks submit through their own LocalQueue)",
            )
        )


class KueueRelease(ChartRelease):
    """The Kueue Helm release (controller, webhooks, CRDs).

    The chart renders its CRDs as templates (charts/kueue/templates/crd/, written there by hack/processing-plan.yaml in
    kubernetes-sigs/kueue), so Helm installs and upgrades them with the release, unlike crds/ (UNVERIFIED at exactly
    v0.19.2: read at a commit near it; see docs/kueue.md).
    """

    def __init__(self, name: str, args: KueueArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(
            "ultraserver:index:KueueRelease",
            name,
            KUEUE_RELEASE,
            kueue_values(
                args.system_node_selector,
                args.settings.version,
                args.unmanaged_namespaces,
                args.settings.namespace or KUEUE_RELEASE.namespace,
                KUEUE_RELEASE.release_name,
                args.mode,
            ),
            args.settings,
            opts,
        )


@checked_component
class Kueue(pulumi.ComponentResource):
    """Kueue with the stack's GB200 topology and GPU quota; jobs wait for `release` and their LocalQueue."""

    release: KueueRelease
    cluster_queue: k8s.apiextensions.CustomResource
    check_priority: pulumi.CustomResource
    """The fabric checks' WorkloadPriorityClass. A job naming a class Kueue cannot get gets no Workload
    (ExtractPriority, pkg/controller/jobframework/reconciler.go at v0.19.2), so the checks are created after it."""
    local_queues: dict[str, k8s.apiextensions.CustomResource]

    def __init__(self, name: str, args: KueueArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:Kueue", name, None, opts)
        self.release = KueueRelease(name, args, child_options(self, opts))
        # The queue objects need the release's CRDs and its admission webhooks (served by the controller, which
        # validate and default every Kueue object). The Release waits for the controller Deployment to be ready
        # before it completes (pulumi-kubernetes provider/pkg/provider/helm_release.go: `client.Wait =
        # !newRelease.SkipAwait`; skip_await stays off for this release), so depending on it is enough.
        after_release = child_options(self, opts, pulumi.ResourceOptions(depends_on=[self.release]))
        self.check_priority = top_level_resource(
            f"{name}-check-priority", check_priority_class_manifest(), after_release
        )
        # Topology levels are immutable (Kueue's Topology CRD): a new list needs a new object under the same name.
        topology = custom_resource(
            f"{name}-topology",
            topology_manifest(),
            pulumi.ResourceOptions.merge(
                after_release, pulumi.ResourceOptions(replace_on_changes=["spec"], delete_before_replace=True)
            ),
        )
        flavors: list[pulumi.Resource] = []
        for instance_type, flavor in flavor_names(args.capacity).items():
            # The GB200 flavor keeps the resource names it had when it was the only one.
            suffix = "" if flavor == FLAVOR_NAME else f"-{flavor}"
            placed = custom_resource(
                f"{name}-flavor{suffix}",
                resource_flavor_manifest(instance_type, flavor),
                child_options(self, opts, pulumi.ResourceOptions(depends_on=[self.release, topology])),
            )
            unplaced = custom_resource(
                f"{name}-flavor{suffix}-no-topology", unplaced_flavor_manifest(instance_type, flavor), after_release
            )
            flavors += [placed, unplaced]
        self.cluster_queue = custom_resource(
            f"{name}-cluster-queue",
            cluster_queue_manifest(args.capacity, args.mode),
            child_options(self, opts, pulumi.ResourceOptions(depends_on=[self.release, *flavors])),
        )
        self.local_queues = {}
        for namespace in args.local_queue_namespaces:
            after: list[pulumi.Resource] = [self.release, self.cluster_queue]
            if namespace not in BUILT_IN_NAMESPACES:
                after.append(
                    k8s.core.v1.Namespace(
                        f"{name}-{namespace}",
                        metadata=namespace_manifest(namespace)["metadata"],
                        opts=child_options(self, opts),
                    )
                )
            self.local_queues[namespace] = custom_resource(
                f"{name}-{namespace}-queue",
                local_queue_manifest(namespace),
                child_options(self, opts, pulumi.ResourceOptions(depends_on=after)),
            )
        self.register_outputs(
            {
                "clusterQueue": CLUSTER_QUEUE_NAME,
                "localQueueNamespaces": list(args.local_queue_namespaces),
                "gpuQuota": args.total.gpus,
            }
        )
