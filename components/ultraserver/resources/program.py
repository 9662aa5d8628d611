"""The programs of ``pulumi up`` and ``ultraserver plan``: the platform, and the Kubernetes layer on its own."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.builders.kubeconfig import scoped_kubeconfig_text
from ultraserver.builders.reclaim_drain import drain_blocks
from ultraserver.config.aws_identity import kubeconfig_env
from ultraserver.config.settings import PROJECT, Settings, parse_settings
from ultraserver.config.views import needs_termination_handler
from ultraserver.facts.kubernetes.scheduling import system_node_labels
from ultraserver.problems import ConfigError, Problem
from ultraserver.resources.kubernetes_layer import KubernetesLayer, KubernetesLayerArgs
from ultraserver.resources.platform import Platform, PlatformArgs


def load_settings(project: str | None = None) -> Settings:
    """Read and validate the running Pulumi program's stack config (keys of `project`, default: this project)."""
    # The SDK has no public "all keys" call; the config map is what the engine handed the program.
    from pulumi.runtime.config import CONFIG

    return parse_settings(dict(CONFIG.get()), project or pulumi.get_project() or PROJECT, pulumi.get_stack())


class StackConfigError(ConfigError, pulumi.RunError):
    """Invalid stack settings: Pulumi prints a RunError as its message alone, without a traceback."""


def _settings(project: str | None = None) -> Settings:
    try:
        return load_settings(project)
    except StackConfigError:
        raise
    except ConfigError as err:
        raise StackConfigError(err.items) from None


def run() -> Platform:
    """Validate the stack settings, declare the platform and export its outputs."""
    settings = _settings()
    try:
        platform = Platform("ultraserver", PlatformArgs(settings=settings))
    except StackConfigError:
        raise
    except ConfigError as err:
        raise StackConfigError(err.items) from None
    pulumi.export("clusterName", platform.cluster.name)
    pulumi.export("kubeconfig", platform.cluster.kubeconfig)
    pulumi.export("vpcId", platform.network.vpc_id)
    pulumi.export("efaSecurityGroupId", platform.network.efa_security_group.id)
    # What the kubernetes-layer/ project reads through its StackReference (kubeconfig and clusterName above).
    pulumi.export("kubernetesLayer", settings.kubernetes.layer)
    pulumi.export("systemNodeSelector", system_node_labels())
    if platform.alerts is not None:
        pulumi.export("alertTopicArn", platform.alerts.topic_arn)
    if platform.termination_queue is not None:
        pulumi.export("nodeTerminationQueueUrl", platform.termination_queue.queue.url)
    if platform.reclaim_warnings is not None:
        pulumi.export("reclaimWarningQueueUrl", platform.reclaim_warnings.queue.url)
    pulumi.export(
        "gpuNodeGroups",
        {
            name: {"fullSize": g.full_size, "efaDevicesPerNode": g.layout.efa_devices}
            for name, g in platform.gpu_node_groups.items()
        },
    )
    return platform


def platform_stack_name() -> str:
    """The platform stack of the same name, as a StackReference names it (organization/project/stack)."""
    return f"{pulumi.get_organization()}/{PROJECT}/{pulumi.get_stack()}"


def _kubeconfig_text(value: Any, settings: Settings) -> str:
    """The platform stack's kubeconfig output, running `aws eks get-token` as this stack's AWS identity."""
    env = kubeconfig_env(settings)
    return scoped_kubeconfig_text(value, settings.aws_profile, settings.deployer_role_arn, env)


def run_kubernetes() -> KubernetesLayer:
    """The kubernetes-layer/ project: the Kubernetes layer of a `kubernetes.layer: separate-stack` stack.

    It reads the same stack file as the platform (stackConfigDir ../stacks), takes the cluster's kubeconfig from
    the platform stack through a StackReference, and is deployed from inside the VPC (docs/deploy.md "Reachability").
    """
    settings = _settings(PROJECT)
    if settings.kubernetes.layer != "separate-stack":
        raise StackConfigError(
            Problem(
                f"{PROJECT}:kubernetes.layer",
                settings.kubernetes.layer,
                "separate-stack for the kubernetes-layer/ project",
                "this stack's platform program installs the Kubernetes layer itself, so deploy only the root "
                "project, or set kubernetes.layer: separate-stack",
            )
        )
    platform = pulumi.StackReference(platform_stack_name())
    layer = layer_from_platform(settings, platform)
    pulumi.export("clusterName", platform.require_output("clusterName"))
    return layer


def layer_from_platform(
    settings: Settings, platform: pulumi.StackReference, now: datetime | None = None
) -> KubernetesLayer:
    """The Kubernetes layer on the cluster a platform stack exports (its kubeconfig, and the queues and topic the layer
    wires when the settings call for them), as kubernetes-layer/ declares it; ``rehearse --deploy`` declares it the
    same way against a stand-in platform stack."""
    kubeconfig: pulumi.Output[str] = pulumi.Output.secret(platform.require_output("kubeconfig")).apply(
        lambda value: _kubeconfig_text(value, settings)
    )
    provider = k8s.Provider("cluster", kubeconfig=kubeconfig)
    queue_url = platform.require_output("nodeTerminationQueueUrl") if needs_termination_handler(settings) else None
    # The platform declares the warning queue exactly when the drain has blocks (Platform.reclaim_warnings).
    warnings = platform.require_output("reclaimWarningQueueUrl") if drain_blocks(settings) else None
    # The drain pages through the platform's alert topic (exported exactly when the platform declares alerts).
    topic = platform.require_output("alertTopicArn") if warnings is not None and settings.alerts_enabled else None
    try:
        layer = KubernetesLayer(
            f"{settings.cluster.name}-k8s",
            KubernetesLayerArgs(
                settings=settings,
                provider=provider,
                termination_queue_url=queue_url,
                warning_queue_url=warnings,
                alert_topic_arn=topic,
                now=now,
            ),
        )
    except ConfigError as err:
        raise StackConfigError(err.items) from None
    return layer
