"""The cluster's Kubernetes software for GB200: GPU Operator, DRA driver, EFA plugin or DRANET, MPI operator, fabric
checks, Kueue, drift check and reclaim drain, all derived from the stack's settings (builders/layer_parts.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import Any, TypeVar

import pulumi
import pulumi_kubernetes as k8s

from ultraserver import clock
from ultraserver.arguments import checked, checked_component
from ultraserver.builders.kueue import KueueArgs
from ultraserver.builders.layer_parts import LayerParts, layer_parts
from ultraserver.builders.nccl_check import NAMESPACE as NCCL_NAMESPACE
from ultraserver.config.rules import run_rules
from ultraserver.config.settings import KubernetesSettings, Settings
from ultraserver.config.views import needs_termination_handler
from ultraserver.facts.kubernetes.scheduling import system_node_labels
from ultraserver.problems import ConfigError, Described, Problem, blocking
from ultraserver.resources.dranet import Dranet, DranetArgs
from ultraserver.resources.drift_check import DriftCheck
from ultraserver.resources.efa_check import EfaCheck
from ultraserver.resources.helm_release import (
    DRA_DRIVER_RELEASE,
    GPU_OPERATOR_RELEASE,
    KUBE_PROMETHEUS_STACK_RELEASE,
    DraDriver,
    DraDriverArgs,
    EfaDevicePlugin,
    EfaDevicePluginArgs,
    GpuOperator,
    GpuOperatorArgs,
    NodeTerminationHandler,
    NodeTerminationHandlerArgs,
    PrometheusStack,
    PrometheusStackArgs,
)
from ultraserver.resources.imex_check import ImexCheck
from ultraserver.resources.kueue import KUEUE_RELEASE, Kueue, check_queue_namespaces
from ultraserver.resources.mpi_operator import MpiOperator, MpiOperatorArgs
from ultraserver.resources.nccl_check import NcclCheck
from ultraserver.resources.reclaim_drain import ReclaimDrain

T = TypeVar("T", bound=Any)


_SETTINGS = "it moved into settings=Settings(kubernetes=KubernetesSettings(...))"
MOVED = {
    **{
        name: f"{_SETTINGS}: write kubernetes=KubernetesSettings({name}=...)"
        for name in ("gpu_operator", "dra_driver", "efa_device_plugin", "devices", "dranet", "manifest_mirror")
    },
    "prometheus_stack": f"{_SETTINGS}: write kubernetes=KubernetesSettings(prometheus_stack="
    "PrometheusStackSettings(enabled=True, ...))",
    "system_node_selector": "remove it: the layer runs its controllers on the system node group's labels "
    "(system_node_labels(), which the Cluster component gives its system nodes)",
    "imex_check": "remove it: the layer derives the check from settings; write settings=Settings(imex_check="
    "ImexCheckSettings(...))",
    "efa_check": "remove it: the layer derives the check from settings; write settings=Settings(efa_check="
    "EfaCheckSettings(...))",
    "nccl_check": "remove it: the layer derives the check from settings; write settings=Settings(nccl_check="
    "NcclCheckSettings(...))",
    "kueue": "remove it: the layer derives Kueue and its quota from settings; write settings=Settings(kubernetes="
    "KubernetesSettings(kueue=KueueSettings(...)))",
    "drift_check": "remove it: the layer derives the check from settings; write settings=Settings(health="
    "HealthSettings(drift_check=DriftCheckSettings(...)))",
    "reclaim_drain": "remove it: the layer derives the drain from settings' gpu_node_groups (their Capacity Block "
    "windows); pass warning_queue_url=<the ReclaimWarnings queue's URL>",
    "node_termination_handler": "remove it: the layer installs the handler for settings' self-managed groups; pass "
    "termination_queue_url=<the termination queue's URL> (its release settings: KubernetesSettings("
    "node_termination_handler=...))",
}
"""The arguments of the earlier KubernetesLayerArgs that the layer derives from its settings now, and what to write."""


@checked(MOVED)
@dataclass
class KubernetesLayerArgs:
    """Inputs of the Kubernetes layer: the stack's settings, from which it derives every part once (``parts``), and
    the wiring (provider, what to wait for, the queues the platform made)."""

    settings: Settings
    """The whole stack as a model (``Settings(region=..., cluster=ClusterSettings(...), gpu_node_groups=(...),
    kubernetes=KubernetesSettings(...), ...)``, or ``parse_settings`` of a stack file): the releases and device mode
    (``kubernetes``), the checks, Kueue's quota and the drain follow from it."""
    provider: k8s.Provider
    """Provider for the target cluster."""
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    """What every install waits for: the cluster and the system node group (not the GPU node groups)."""
    termination_queue_url: pulumi.Input[str] | None = None
    """URL of the Node Termination Handler's SQS queue (the platform's EventQueue): the handler drains self-managed
    nodes before scale-in or a block's end; None installs no handler (with self-managed groups, a warning)."""
    warning_queue_url: pulumi.Input[str] | None = None
    """URL of the queue EC2's Capacity Block expiration warnings arrive on (the platform's ReclaimWarnings); the
    reclaim drain reads it. None: the drain goes by the settings' windows alone."""
    alert_topic_arn: pulumi.Input[str] | None = None
    """The stack's alert topic (the platform's Alerts): the reclaim drain publishes what needs a person there (a
    failed call, EC2's dates differing from the stack's, a paid block with no node, a failed check). None: printed
    in its Job's log only."""
    mpi_operator: bool = True
    """Install the MPI operator; without it no MPIJob check may be on (settings' imex_check, efa_check, nccl_check)."""
    now: datetime | None = None
    """Clock for the Capacity Block windows: checks and Kueue quota leave out the groups whose every block has ended;
    UTC now when unset."""

    @cached_property
    def parts(self) -> LayerParts:
        """The checks, Kueue, drift check and drain, derived once from the settings in one device mode."""
        return layer_parts(self.settings, self.now or clock.now(), self.warning_queue_url, self.alert_topic_arn)

    def problems(self) -> list[Problem]:
        """The settings' own rules (a program may build Settings without parse_settings), what the parts refuse, and
        MPIJob checks without the MPI operator."""
        found = blocking(run_rules(self.settings, (self.now or clock.now()).date()))
        if found:
            return found
        try:
            parts = self.parts
        except ConfigError as error:
            return error.items
        checks = {
            "imex_check": parts.imex_check,
            "efa_check": parts.efa_check,
            "nccl_check": parts.nccl_check,
        }
        found += [
            Problem(
                f"KubernetesLayerArgs.settings.{check}",
                Described("an MPIJob check with mpi_operator=False"),
                "the check only with the MPI operator (it runs as an MPIJob)",
                "leave mpi_operator on or turn the check off in settings",
            )
            for check, given in checks.items()
            if given and not self.mpi_operator
        ]
        return found


def own_namespaces(settings: KubernetesSettings, parts: LayerParts) -> dict[str, str]:
    """Namespaces the layer creates itself (checks, and releases that create theirs), with what creates them."""
    owners: dict[str, str] = {}
    if parts.kueue is not None:
        owners[parts.kueue.settings.namespace or KUEUE_RELEASE.namespace] = "Kueue"
    for what, check in (
        ("IMEX check", parts.imex_check),
        ("EFA check", parts.efa_check),
        ("drift check", parts.drift_check),
        ("reclaim drain", parts.reclaim_drain),
    ):
        if check is not None:
            owners[check.namespace] = what
    if parts.nccl_check:
        owners[NCCL_NAMESPACE] = "NCCL check"
    releases = [
        ("GPU Operator", settings.gpu_operator, GPU_OPERATOR_RELEASE),
        ("DRA driver", settings.dra_driver, DRA_DRIVER_RELEASE),
    ]
    if settings.prometheus_stack_enabled:
        releases.append(("Prometheus stack", settings.prometheus_stack, KUBE_PROMETHEUS_STACK_RELEASE))
    for what, release, target in releases:
        owners[release.namespace or target.namespace] = what
    return owners


def _on_system(args: T, selector_field: str, system: dict[str, str]) -> T:
    """``args`` with its node selector defaulted to the system nodes (controllers and launchers run there)."""
    return args if getattr(args, selector_field) else replace(args, **{selector_field: system})


def unmanaged_namespaces(settings: KubernetesSettings, parts: LayerParts, kueue: KueueArgs) -> list[str]:
    """The stack's own namespaces, left out of Kueue's fail-closed webhooks, except those whose jobs it queues."""
    queued = {*kueue.local_queue_namespaces}
    if parts.imex_check is not None and parts.imex_check.queue_name:
        queued.add(parts.imex_check.namespace)
    if any(j.queue_name for j in parts.nccl_check):
        queued.add(NCCL_NAMESPACE)
    return sorted({*kueue.unmanaged_namespaces, *own_namespaces(settings, parts)} - queued)


@checked_component
class KubernetesLayer(pulumi.ComponentResource):
    """Installs the node software GB200 UltraServers need, in dependency order, plus the optional IMEX check."""

    gpu_operator: GpuOperator
    prometheus_stack: PrometheusStack | None
    dra_driver: DraDriver
    efa_device_plugin: EfaDevicePlugin | None
    dranet: Dranet | None
    mpi_operator: MpiOperator | None
    imex_check: ImexCheck | None
    node_termination_handler: NodeTerminationHandler | None
    efa_check: EfaCheck | None
    nccl_check: NcclCheck | None
    drift_check: DriftCheck | None
    reclaim_drain: ReclaimDrain | None
    kueue: Kueue | None

    def __init__(self, name: str, args: KubernetesLayerArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:KubernetesLayer", name, None, opts)
        system = system_node_labels()
        k8s_settings, parts = args.settings.kubernetes, args.parts
        if parts.kueue is not None:
            check_queue_namespaces(parts.kueue, own_namespaces(k8s_settings, parts))

        def child(*after: pulumi.Resource) -> pulumi.ResourceOptions:
            """Options of a direct child: this layer's provider, waiting for `after` only."""
            return pulumi.ResourceOptions(parent=self, providers=[args.provider], depends_on=list(after))

        base = args.depends_on
        self.prometheus_stack = (
            PrometheusStack(
                f"{name}-prometheus-stack", PrometheusStackArgs(system, k8s_settings.prometheus_stack), child(*base)
            )
            if k8s_settings.prometheus_stack_enabled
            else None
        )
        # The DRA driver's CRDs come first: the GPU Operator's chart ships older copies of the ComputeDomain CRDs in its
        # crds/, and Helm creates only those that are absent (helm v3.20.2 pkg/action/install.go:174-176), so with the
        # driver's applied first no chart ever installs a second version. The operator's CRD hooks leave them alone
        # (NVIDIA/gpu-operator v26.7.0 templates/upgrade_crd.yaml:88-97, cleanup_crd.yaml:41-47 list only its own).
        # The driver does not wait for the operator: both skip Helm's wait (facts/pins/charts.py), so ordering them
        # never meant GFD's clique labels were there; the checks below wait for both.
        self.dra_driver = DraDriver(
            f"{name}-dra-driver",
            DraDriverArgs(
                system,
                release=k8s_settings.dra_driver,
                mode=parts.mode,
                manifest_mirror=k8s_settings.manifest_mirror,
            ),
            child(*base),
        )
        # The dcgm-exporter ServiceMonitor needs the Prometheus Operator CRDs first (the operator reports NotReady
        # without them), so it is on only with the stack, and the GPU Operator then waits for the stack.
        monitored = [self.prometheus_stack] if self.prometheus_stack else []
        self.gpu_operator = GpuOperator(
            f"{name}-gpu-operator",
            GpuOperatorArgs(system, k8s_settings.gpu_operator, service_monitor=bool(monitored), mode=parts.mode),
            child(*base, *monitored, *self.dra_driver.crd_owner()),
        )
        # The release that publishes EFA devices: DRANET in DRA mode, else the EFA device plugin; the EFA check waits
        # for it.
        efa_release: pulumi.Resource
        self.efa_device_plugin, self.dranet = None, None
        if parts.mode.dra:
            efa_release = self.dranet = Dranet(f"{name}-dranet", DranetArgs(k8s_settings.dranet), child(*base))
        else:
            efa_release = self.efa_device_plugin = EfaDevicePlugin(
                f"{name}-efa-device-plugin", EfaDevicePluginArgs(k8s_settings.efa_device_plugin), child(*base)
            )
        self.mpi_operator = None
        if args.mpi_operator:
            mpi = MpiOperatorArgs(mirror=k8s_settings.manifest_mirror)
            self.mpi_operator = MpiOperator(f"{name}-mpi-operator", mpi, child(*base))
        self.kueue = None
        queued: list[pulumi.Resource] = []
        if parts.kueue is not None:
            kueue_args = _on_system(parts.kueue, "system_node_selector", system)
            kueue_args = replace(kueue_args, unmanaged_namespaces=unmanaged_namespaces(k8s_settings, parts, kueue_args))
            # Kueue also picks up a job CRD installed after it starts, but only when it next polls for the API
            # (kubernetes-sigs/kueue#2574, since v0.8); until then its MPIJob webhook is not there to suspend a new
            # MPIJob. Installing it after the MPI operator's CRD closes that window for the checks' MPIJobs.
            # Its ServiceMonitor (values enablePrometheus) needs the Prometheus Operator's CRDs: after the stack too.
            after = [*([self.mpi_operator] if self.mpi_operator else []), *monitored]
            self.kueue = Kueue(f"{name}-kueue", kueue_args, child(*base, *after))
            # A queued job needs Kueue's webhooks (they suspend it until admission), its ClusterQueue and the checks'
            # priority class.
            queued = [self.kueue.release, self.kueue.cluster_queue, self.kueue.check_priority]
        self.node_termination_handler = None
        if args.termination_queue_url is None and needs_termination_handler(args.settings):
            pulumi.log.warn(
                f"{name}: settings have self-managed GPU groups but no termination_queue_url: no Node Termination "
                "Handler drains their nodes before scale-in or a block's end (the Platform component makes the queue)"
            )
        if args.termination_queue_url is not None:
            handler_args = NodeTerminationHandlerArgs(
                queue_url=args.termination_queue_url,
                region=args.settings.region,
                system_node_selector=system,
                release=k8s_settings.node_termination_handler,
            )
            self.node_termination_handler = NodeTerminationHandler(
                f"{name}-node-termination-handler", handler_args, child(*base)
            )
        self._declare_checks(name, args, system, child, efa_release, queued)
        self.register_outputs(
            {
                "efaCheckJob": self.efa_check.job_name if self.efa_check else None,
                "imexCheckNamespace": parts.imex_check.namespace if parts.imex_check else None,
                "imexCheckJobs": self.imex_check.job_names if self.imex_check else [],
            }
        )

    def _declare_checks(
        self,
        name: str,
        args: KubernetesLayerArgs,
        system: dict[str, str],
        child: Callable[..., pulumi.ResourceOptions],
        efa_release: pulumi.Resource,
        queued: list[pulumi.Resource],
    ) -> None:
        """The IMEX, EFA and NCCL checks (MPIJobs, so only with the MPI operator) and the drift check; the EFA checks
        wait for ``efa_release`` (the release that publishes EFA devices), queued jobs for ``queued`` (Kueue)."""
        base, parts = args.depends_on, args.parts
        # The arguments refused a check without the MPI operator.
        mpi = [self.mpi_operator] if self.mpi_operator is not None else []
        self.imex_check = None
        if parts.imex_check is not None:
            check_args = _on_system(parts.imex_check, "launcher_node_selector", system)
            self.imex_check = ImexCheck(
                f"{name}-imex-check", check_args, child(*mpi, self.gpu_operator, self.dra_driver, *queued)
            )
        self.efa_check = None
        if parts.efa_check is not None:
            efa_args = _on_system(parts.efa_check, "launcher_node_selector", system)
            self.efa_check = EfaCheck(f"{name}-efa-check", efa_args, child(*mpi, efa_release, *queued))
        self.nccl_check = None
        if parts.nccl_check:
            jobs = [_on_system(j, "launcher_node_selector", system) for j in parts.nccl_check]
            self.nccl_check = NcclCheck(
                f"{name}-nccl-check", jobs, child(*mpi, self.gpu_operator, self.dra_driver, efa_release, *queued)
            )
        self.drift_check = None
        if parts.drift_check is not None:
            drift_args = _on_system(parts.drift_check, "node_selector", system)
            self.drift_check = DriftCheck(f"{name}-drift-check", drift_args, child(*base))
        self.reclaim_drain = None
        if parts.reclaim_drain is not None:
            # The check jobs as deployed, for the drain's run at each join.
            rechecked = [
                *(self.imex_check.manifests if self.imex_check else []),
                *([self.efa_check.manifest] if self.efa_check else []),
                *(self.nccl_check.manifests if self.nccl_check else []),
            ]
            drain_args = replace(_on_system(parts.reclaim_drain, "node_selector", system), checks=rechecked)
            # The drift check's namespace too: the drain reads its Jobs (a Role there).
            checks = [c for c in (self.imex_check, self.efa_check, self.nccl_check, self.drift_check) if c is not None]
            self.reclaim_drain = ReclaimDrain(f"{name}-reclaim-drain", drain_args, child(*base, *queued, *checks))
