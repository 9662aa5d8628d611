"""The IMEX check's plan: one nvbandwidth MPIJob per UltraServer, from the check targets the settings name."""

from __future__ import annotations

from dataclasses import dataclass, field

from ultraserver.builders.kueue import LOCAL_QUEUE_NAME
from ultraserver.builders.nvbandwidth_job import NvbandwidthJobArgs
from ultraserver.config.settings import Settings
from ultraserver.config.views import ImexTarget, imex_targets, kueue_enabled
from ultraserver.facts.aws import limits
from ultraserver.facts.hardware.devices import DeviceMode
from ultraserver.facts.hardware.ultraservers import NVLINK_THRESHOLD_GBPS
from ultraserver.facts.kubernetes.scheduling import DNS_LABEL
from ultraserver.problems import ConfigError, Problem


@dataclass
class ImexCheckArgs:
    """Inputs of the IMEX check."""

    targets: list[ImexTarget]
    """UltraServers to check, one MPIJob each."""
    nodes: int | None = 2
    """Nodes per UltraServer the job spans (2 up to the UltraServer's instance count); None spans all of them."""
    namespace: str = "imex-check"
    """Namespace created for the ComputeDomains and MPIJobs."""
    threshold_gbps: float = NVLINK_THRESHOLD_GBPS
    """Minimum GB/s every cross-node GPU pair must reach (judged by `ultraserver verify`)."""
    launcher_node_selector: dict[str, str] = field(default_factory=dict)
    """Labels of the system nodes for the launchers (KubernetesLayer passes its system selector)."""
    queue_name: str = ""
    """Kueue LocalQueue the jobs are submitted to (the check creates it in `namespace`); empty bypasses Kueue."""
    mode: DeviceMode = field(default_factory=DeviceMode)
    """The stack's device mode: how each worker takes its node's GPUs."""


def _problems(args: ImexCheckArgs) -> list[Problem]:
    """Bad names, duplicate targets, a threshold that is not positive."""
    problems: list[Problem] = []
    if not DNS_LABEL.fullmatch(args.namespace):
        problems.append(
            Problem(
                "imex_check.namespace",
                args.namespace,
                "a namespace name: up to 63 lowercase letters, digits and '-'",
                "rename it",
            )
        )
    names = [t.name for t in args.targets]
    for name in names:
        if not DNS_LABEL.fullmatch(f"nvbandwidth-{name}") or limits.over(limits.IMEX_TARGET_NAME, len(name)):
            problems.append(
                Problem(
                    "imex_check.targets",
                    name,
                    f"an UltraServer name of up to {limits.IMEX_TARGET_NAME.maximum} lowercase letters, digits and '-'",
                    "rename it",
                )
            )
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        problems.append(Problem("imex_check.targets", duplicates, "each name once", "make the names unique"))
    if args.threshold_gbps <= 0:
        problems.append(Problem("imex_check.threshold_gbps", args.threshold_gbps, "a positive GB/s", "raise it"))
    return problems


def job_args(args: ImexCheckArgs) -> list[NvbandwidthJobArgs]:
    """One nvbandwidth job per target; ConfigError on bad names or duplicates."""
    problems = _problems(args)
    if problems:
        raise ConfigError(problems)
    return [
        NvbandwidthJobArgs(
            name=name,
            namespace=args.namespace,
            nodes=t.available_nodes if args.nodes is None else args.nodes,
            max_nodes=t.instance_count,
            worker_node_selector=dict(t.node_selector),
            launcher_node_selector=dict(args.launcher_node_selector),
            fleet=t.name if t.ultraservers > 1 else "",
            queue_name=args.queue_name,
            # nvbandwidth copies over NVLink only: its workers claim the node's GPUs, not its EFA devices.
            node_devices=t.node_devices.gpus_only(),
            mode=args.mode,
        )
        for t in args.targets
        for name in target_job_names(t)
    ]


def target_job_names(target: ImexTarget) -> list[str]:
    """Job names of one target: 'nvbandwidth-<name>', or '-1'..'-N' for the N UltraServers of a grouped fleet."""
    if target.ultraservers == 1:
        return [f"nvbandwidth-{target.name}"]
    return [f"nvbandwidth-{target.name}-{index}" for index in range(1, target.ultraservers + 1)]


def imex_check_args(settings: Settings, mode: DeviceMode) -> ImexCheckArgs | None:
    """One nvbandwidth job per GPU node group (one NVLink domain each), when the check is on."""
    if not settings.imex_check.enabled or not settings.gpu_node_groups:
        return None
    return ImexCheckArgs(
        targets=imex_targets(settings),
        nodes=settings.imex_check.nodes,
        threshold_gbps=settings.imex_check.threshold_gbps,
        queue_name=LOCAL_QUEUE_NAME if kueue_enabled(settings) else "",
        mode=mode,
    )
