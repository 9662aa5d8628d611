"""The cluster's Kubernetes software for GB200: GPU Operator, DRA driver, EFA plugin, MPI operator, IMEX check."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.builders.drift_check import DriftCheckArgs
from ultraserver.builders.efa_check import EfaCheckArgs
from ultraserver.builders.helm_values import require_node_selector
from ultraserver.builders.kueue import KueueArgs
from ultraserver.builders.nccl_check import NAMESPACE as NCCL_NAMESPACE
from ultraserver.builders.nccl_check import NcclJobArgs
from ultraserver.builders.reclaim_drain import ReclaimDrainArgs
from ultraserver.config.settings import KubernetesSettings
from ultraserver.facts.hardware import devices
from ultraserver.facts.hardware.devices import NodeDevices
from ultraserver.problems import Described, Problem
from ultraserver.resources.arguments import checked, moved_into
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
from ultraserver.resources.imex_check import ImexCheck, ImexCheckArgs
from ultraserver.resources.kueue import KUEUE_RELEASE, Kueue, check_queue_namespaces
from ultraserver.resources.mpi_operator import MpiOperator, MpiOperatorArgs
from ultraserver.resources.nccl_check import NcclCheck
from ultraserver.resources.reclaim_drain import ReclaimDrain

T = TypeVar("T", bound=Any)


@checked(
    moved_into(
        "KubernetesSettings",
        "gpu_operator",
        "dra_driver",
        "efa_device_plugin",
        "devices",
        "dranet",
        "manifest_mirror",
        prometheus_stack="prometheus_stack=PrometheusStackSettings(enabled=True, ...)",
    )
)
@dataclass
class KubernetesLayerArgs:
    """Inputs of the Kubernetes layer: the stack's kubernetes section, the checks built for the stack's node groups,
    and the wiring (provider, system node labels, what to wait for)."""

    provider: k8s.Provider
    """Provider for the target cluster."""
    system_node_selector: dict[str, str]
    """Labels of the system node group (operators, controllers, MPI launchers run there)."""
    settings: KubernetesSettings = field(default_factory=KubernetesSettings)
    """The stack's kubernetes section as a model (``KubernetesSettings(devices=..., gpu_operator=...)``): the device
    mode (device plugins, or the DRA driver for GPUs and DRANET for EFA), each release's version, values and Helm
    options, kube-prometheus-stack (off unless enabled; the GPU Operator then creates no ServiceMonitor) and the
    manifest mirror."""
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    """What every install waits for: the cluster and the system node group (not the GPU node groups)."""
    mpi_operator: MpiOperatorArgs | None = field(default_factory=MpiOperatorArgs)
    """MPI operator install; None skips it (the IMEX check then cannot run)."""
    imex_check: ImexCheckArgs | None = None
    """IMEX nvbandwidth check per UltraServer; None deploys no check."""
    node_termination_handler: NodeTerminationHandlerArgs | None = None
    """Node Termination Handler in queue mode (self-managed groups); None installs none."""
    efa_check: EfaCheckArgs | None = None
    """nccl-tests all_reduce across UltraServers over EFA; None deploys no check."""
    nccl_check: list[NcclJobArgs] = field(default_factory=list)
    """nccl-tests all_reduce with MNNVL and NVLS per UltraServer; empty deploys none."""
    drift_check: DriftCheckArgs | None = None
    """CronJob re-running the node-facts check; None deploys none."""
    reclaim_drain: ReclaimDrainArgs | None = None
    """CronJob draining each Capacity Block's nodes before EC2 reclaims them; None deploys none."""
    kueue: KueueArgs | None = None
    """Kueue with the GB200 topology and the stack's GPU quota; None installs none (jobs then bypass queueing)."""

    def problems(self) -> list[Problem]:
        """MPIJob checks need the MPI operator; each check's workers claim devices as ``devices`` says (DRA claims in
        DRA mode, device-plugin resources otherwise): the layer's device mode is the one read."""
        checks = {"imex_check": self.imex_check, "efa_check": self.efa_check, "nccl_check": self.nccl_check}
        found = [
            Problem(
                f"KubernetesLayerArgs.{check}",
                Described("an MPIJob check with mpi_operator=None"),
                "the check only with the MPI operator (it runs as an MPIJob)",
                "enable the MPI operator or turn the check off",
            )
            for check, given in checks.items()
            if given and self.mpi_operator is None
        ]
        claimed: list[tuple[str, NodeDevices | None]] = (
            [("efa_check", self.efa_check.node_devices)] if self.efa_check else []
        )
        claimed += [(f"nccl_check[{i}]", job.node_devices) for i, job in enumerate(self.nccl_check)]
        if self.imex_check is not None:
            claimed += [(f"imex_check.targets[{i}]", t.node_devices) for i, t in enumerate(self.imex_check.targets)]
        dra = self.settings.devices == devices.DRA
        return found + [
            Problem(
                f"KubernetesLayerArgs.{key}.node_devices",
                Described("set" if node is not None else "None"),
                f"the node's devices exactly in DRA mode (here devices={self.settings.devices!r})",
                "build the checks in the layer's device mode (kubernetes_layer_args does)",
            )
            for key, node in claimed
            if (node is not None) != dra
        ]


def mpi_operator_args(args: KubernetesLayerArgs) -> MpiOperatorArgs | None:
    """The MPI operator install, reading its manifest from the layer's mirror unless it names its own."""
    if args.mpi_operator is None or args.mpi_operator.mirror:
        return args.mpi_operator
    return replace(args.mpi_operator, mirror=args.settings.manifest_mirror)


def own_namespaces(args: KubernetesLayerArgs) -> dict[str, str]:
    """Namespaces the layer creates itself (checks, and releases that create theirs), with what creates them."""
    owners: dict[str, str] = {}
    if args.kueue is not None:
        owners[args.kueue.release.namespace or KUEUE_RELEASE.namespace] = "Kueue"
    for what, check in (
        ("IMEX check", args.imex_check),
        ("EFA check", args.efa_check),
        ("drift check", args.drift_check),
        ("reclaim drain", args.reclaim_drain),
    ):
        if check is not None:
            owners[check.namespace] = what
    if args.nccl_check:
        owners[NCCL_NAMESPACE] = "NCCL check"
    releases = [
        ("GPU Operator", args.settings.gpu_operator, GPU_OPERATOR_RELEASE),
        ("DRA driver", args.settings.dra_driver, DRA_DRIVER_RELEASE),
    ]
    if args.settings.prometheus_stack_enabled:
        releases.append(("Prometheus stack", args.settings.prometheus_stack, KUBE_PROMETHEUS_STACK_RELEASE))
    for what, release, target in releases:
        owners[release.namespace or target.namespace] = what
    return owners


def _on_system(args: T, selector_field: str, system: dict[str, str]) -> T:
    """``args`` with its node selector defaulted to the system nodes (controllers and launchers run there)."""
    return args if getattr(args, selector_field) else replace(args, **{selector_field: system})


def unmanaged_namespaces(args: KubernetesLayerArgs, kueue: KueueArgs) -> list[str]:
    """The stack's own namespaces, left out of Kueue's fail-closed webhooks, except those whose jobs it queues."""
    queued = {*kueue.local_queue_namespaces}
    if args.imex_check is not None and args.imex_check.queue_name:
        queued.add(args.imex_check.namespace)
    if any(j.queue_name for j in args.nccl_check):
        queued.add(NCCL_NAMESPACE)
    return sorted({*kueue.unmanaged_namespaces, *own_namespaces(args)} - queued)


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
        system = require_node_selector(args.system_node_selector, "system_node_selector")
        k8s_settings = args.settings
        if args.kueue is not None:
            check_queue_namespaces(args.kueue, own_namespaces(args))

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
                devices=k8s_settings.devices,
                manifest_mirror=k8s_settings.manifest_mirror,
            ),
            child(*base),
        )
        # The dcgm-exporter ServiceMonitor needs the Prometheus Operator CRDs first (the operator reports NotReady
        # without them), so it is on only with the stack, and the GPU Operator then waits for the stack.
        monitored = [self.prometheus_stack] if self.prometheus_stack else []
        self.gpu_operator = GpuOperator(
            f"{name}-gpu-operator",
            GpuOperatorArgs(
                system, k8s_settings.gpu_operator, service_monitor=bool(monitored), devices=k8s_settings.devices
            ),
            child(*base, *monitored, *self.dra_driver.crd_owner()),
        )
        # The release that publishes EFA devices: DRANET in DRA mode, else the EFA device plugin; the EFA check waits
        # for it.
        efa_release: pulumi.Resource
        self.efa_device_plugin, self.dranet = None, None
        if k8s_settings.devices == devices.DRA:
            efa_release = self.dranet = Dranet(f"{name}-dranet", DranetArgs(k8s_settings.dranet), child(*base))
        else:
            efa_release = self.efa_device_plugin = EfaDevicePlugin(
                f"{name}-efa-device-plugin", EfaDevicePluginArgs(k8s_settings.efa_device_plugin), child(*base)
            )
        mpi = mpi_operator_args(args)
        self.mpi_operator = MpiOperator(f"{name}-mpi-operator", mpi, child(*base)) if mpi else None
        self.kueue = None
        queued: list[pulumi.Resource] = []
        if args.kueue is not None:
            kueue_args = _on_system(args.kueue, "system_node_selector", system)
            kueue_args = replace(kueue_args, unmanaged_namespaces=unmanaged_namespaces(args, kueue_args))
            # Kueue also picks up a job CRD installed after it starts, but only when it next polls for the API
            # (kubernetes-sigs/kueue#2574, since v0.8); until then its MPIJob webhook is not there to suspend a new
            # MPIJob. Installing it after the MPI operator's CRD closes that window for the checks' MPIJobs.
            self.kueue = Kueue(
                f"{name}-kueue", kueue_args, child(*base, *([self.mpi_operator] if self.mpi_operator else []))
            )
            # A queued job needs Kueue's webhooks (they suspend it until admission) and its ClusterQueue.
            queued = [self.kueue.release, self.kueue.cluster_queue]
        self.node_termination_handler = None
        if args.node_termination_handler is not None:
            handler_args = _on_system(args.node_termination_handler, "system_node_selector", system)
            self.node_termination_handler = NodeTerminationHandler(
                f"{name}-node-termination-handler", handler_args, child(*base)
            )
        self._declare_checks(name, args, system, child, efa_release, queued)
        self.register_outputs(
            {
                "efaCheckJob": self.efa_check.job_name if self.efa_check else None,
                "imexCheckNamespace": args.imex_check.namespace if args.imex_check else None,
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
        base = args.depends_on
        # The arguments refused a check without the MPI operator.
        mpi = [self.mpi_operator] if self.mpi_operator is not None else []
        self.imex_check = None
        if args.imex_check is not None:
            check_args = _on_system(args.imex_check, "launcher_node_selector", system)
            self.imex_check = ImexCheck(
                f"{name}-imex-check", check_args, child(*mpi, self.gpu_operator, self.dra_driver, *queued)
            )
        self.efa_check = None
        if args.efa_check is not None:
            efa_args = _on_system(args.efa_check, "launcher_node_selector", system)
            self.efa_check = EfaCheck(f"{name}-efa-check", efa_args, child(*mpi, efa_release, *queued))
        self.nccl_check = None
        if args.nccl_check:
            jobs = [_on_system(j, "launcher_node_selector", system) for j in args.nccl_check]
            self.nccl_check = NcclCheck(
                f"{name}-nccl-check", jobs, child(*mpi, self.gpu_operator, self.dra_driver, efa_release, *queued)
            )
        self.drift_check = None
        if args.drift_check is not None:
            drift_args = _on_system(args.drift_check, "node_selector", system)
            self.drift_check = DriftCheck(f"{name}-drift-check", drift_args, child(*base))
        self.reclaim_drain = None
        if args.reclaim_drain is not None:
            # The check jobs as deployed, for the drain's run at each join.
            rechecked = [
                *(self.imex_check.manifests if self.imex_check else []),
                *([self.efa_check.manifest] if self.efa_check else []),
                *(self.nccl_check.manifests if self.nccl_check else []),
            ]
            drain_args = replace(_on_system(args.reclaim_drain, "node_selector", system), checks=rechecked)
            # The drift check's namespace too: the drain reads its Jobs (a Role there).
            checks = [c for c in (self.imex_check, self.efa_check, self.nccl_check, self.drift_check) if c is not None]
            self.reclaim_drain = ReclaimDrain(f"{name}-reclaim-drain", drain_args, child(*base, *queued, *checks))
