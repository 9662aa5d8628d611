"""The EFA check: an nccl-tests all_reduce_perf MPIJob across UltraServers that must run over EFA, not TCP.

Inside one UltraServer NCCL moves data over NVLink (MNNVL), so EFA is only exercised between UltraServers
(awslabs/awsome-distributed-ai micro-benchmarks/nccl-tests/README-gb200.md: "Across UltraServers ... traffic
falls onto EFA"). The job therefore spreads its workers over at least `ultraservers` NVLink cliques, asks for no
IMEX channel and disables MNNVL, so every byte between nodes crosses EFA.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ultraserver.builders import device_claims
from ultraserver.builders.mpijob import WorkerDevices, mpijob_manifest
from ultraserver.builders.node_report import NODE_NAME_ENV, launcher_script, worker_entrypoint
from ultraserver.config.settings import Settings
from ultraserver.config.views import group_node_devices, kueue_enabled, node_group_names, ultraservers_per_node_group
from ultraserver.facts.hardware import efa
from ultraserver.facts.hardware.devices import DeviceMode, NodeDevices
from ultraserver.facts.kubernetes.kueue import EXEMPT_ANNOTATION
from ultraserver.facts.kubernetes.scheduling import (
    CLIQUE_LABEL,
    EFA_RESOURCE,
    GPU_RESOURCE,
    GPU_TOLERATION,
    ULTRASERVER_LABEL,
)
from ultraserver.facts.pins.manifests import NCCL_TESTS_IMAGE
from ultraserver.problems import ConfigError, Problem

ALL_REDUCE_PERF = "/opt/nccl-tests/build/all_reduce_perf"
MPIRUN = "/opt/amazon/openmpi/bin/mpirun"
# Only large messages are judged, so the sweep starts at 1 GiB (the average over 8 B..16 GiB says little:
# 52.98 GB/s average vs 437.79 GB/s at 2 GiB in AWS's 2x p5 sample).
MIN_BYTES, MAX_BYTES = "1G", "16G"
LARGE_MESSAGE_BYTES = 1 << 30
EFFICIENCY = 0.5
"""Share of a node's EFA line rate the large-message all_reduce bus bandwidth must reach.

Conservative, to be calibrated on the first real run and then raised: the published multi-node AWS runs reach
59-64% of line rate (4x p4d: 29.61 GB/s of 50 GB/s at 1 GiB, NVIDIA/nccl#527; 2x p5en with fewer EFA devices:
257 GB/s of 400 GB/s), and 2-node runs can exceed line rate because of tree algorithms (nccl-tests#22), so no
published figure calibrates GB200. Half the line rate still separates EFA (1600 Gbps per GB200 node, so
800 Gbps = 100 GB/s) from a TCP fallback, which cannot get near it."""
WORKER_LABEL = "ultraserver.io/efa-check"
EXEMPT_REASON = "spans UltraServers over EFA on purpose; Kueue topology placement would pack it into one"


@dataclass
class EfaCheckArgs(WorkerDevices):
    """Inputs of the EFA check."""

    node_groups: list[str]
    """Values of the ultraserver.io/ultraserver label the workers may run on (same EFA layout)."""
    node_devices: NodeDevices
    """The GPUs and EFA devices of one node (of the layout the node groups share), which each worker takes whole."""
    min_bus_bandwidth_gbps: float
    """Large-message all_reduce bus bandwidth to reach, in Gbit/s (nccl-tests prints GB/s: x8)."""
    ultraservers: int = 2
    """UltraServers (NVLink cliques) the workers spread over, at least 2."""
    nodes_per_ultraserver: int = 1
    """Workers per UltraServer; the job has ultraservers x nodes_per_ultraserver workers."""
    name: str = "nccl-efa"
    """MPIJob name."""
    namespace: str = "efa-check"
    """Namespace created for the job."""
    image: str = NCCL_TESTS_IMAGE
    """arm64 image with EFA-enabled NCCL, aws-ofi-nccl, Open MPI and nccl-tests."""
    launcher_node_selector: Mapping[str, str] = field(default_factory=dict)
    """Labels of the system nodes, where the launcher (no GPU) runs."""
    kueue: bool = False
    """Kueue runs in the cluster. The check still bypasses it, and says why on the MPIJob: it must spread over
    several UltraServers, and Kueue's topology placement packs a job into as few domains as it can (it does not
    read topologySpreadConstraints), so a queued check could be placed inside one UltraServer and never run."""
    mode: DeviceMode = field(default_factory=DeviceMode)
    """The stack's device mode: in DRA mode each worker claims its node's devices from `claim_template_name`,
    otherwise it requests nvidia.com/gpu and vpc.amazonaws.com/efa."""

    @property
    def efa_devices(self) -> int:
        """EFA devices each worker takes (all of its node's)."""
        return self.node_devices.efa_devices

    @property
    def workers(self) -> int:
        """Worker pods (nodes) of the job."""
        return self.ultraservers * self.nodes_per_ultraserver


def check_args(args: EfaCheckArgs) -> None:
    """ConfigError for counts the job cannot run with."""
    problems = []
    if args.ultraservers < 2:
        problems.append(
            Problem("efa_check.ultraservers", args.ultraservers, "2 or more", "EFA is only used between UltraServers")
        )
    if args.nodes_per_ultraserver < 1:
        problems.append(Problem("efa_check.nodes_per_ultraserver", args.nodes_per_ultraserver, "1 or more", "set 1"))
    if args.efa_devices < 1:
        problems.append(
            Problem("efa_check.efa_devices", args.efa_devices, "1 or more", "use a layout with EFA devices")
        )
    if args.min_bus_bandwidth_gbps <= 0:
        problems.append(
            Problem(
                "efa_check.min_bus_bandwidth_gbps",
                args.min_bus_bandwidth_gbps,
                "a positive Gbit/s",
                "leave it unset to derive it",
            )
        )
    if not args.node_groups:
        problems.append(Problem("efa_check.node_groups", [], "at least one GPU node group", "add GPU node groups"))
    if problems:
        raise ConfigError(problems)


def launcher_command(args: EfaCheckArgs) -> list[str]:
    """mpirun of all_reduce_perf: one rank per GPU, NCCL_DEBUG=INFO so verify can read which network NCCL chose."""
    env = [
        # Remote ranks start over ssh with a clean environment: pass the image's paths along.
        "PATH",
        "LD_LIBRARY_PATH",
        "LD_PRELOAD",
        "FI_PROVIDER=efa",
        "FI_EFA_FORK_SAFE=1",
        "NCCL_DEBUG=INFO",
        "NCCL_SOCKET_IFNAME=^docker,lo,veth",
        # No IMEX channel is requested and MNNVL is off, so traffic between nodes has to use the network.
        "NCCL_MNNVL_ENABLE=0",
    ]
    command = [MPIRUN, "--allow-run-as-root", "--tag-output", "-np", str(args.workers * args.gpus_per_node)]
    command += ["--map-by", f"ppr:{args.gpus_per_node}:node", "--bind-to", "none"]
    for item in env:
        command += ["-x", item]
    command += ["--mca", "pml", "^ucx", "--mca", "btl", "tcp,self", "--mca", "btl_tcp_if_exclude", "lo,docker0"]
    command += [ALL_REDUCE_PERF, "-b", MIN_BYTES, "-e", MAX_BYTES, "-f", "2", "-g", "1", "-c", "1", "-n", "20"]
    return command


def worker_labels(args: EfaCheckArgs) -> dict[str, str]:
    """Labels of the worker pods (also the spread constraint's selector)."""
    return {WORKER_LABEL: args.name, "ultraserver.io/mpi-role": "worker"}


def worker_pod_template(args: EfaCheckArgs) -> dict[str, Any]:
    """A worker: a whole node (all GPUs and EFA devices), spread over NVLink cliques."""
    labels = worker_labels(args)
    return {
        "metadata": {"labels": labels},
        "spec": {
            "tolerations": [GPU_TOLERATION],
            "affinity": {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchExpressions": [
                                    {"key": ULTRASERVER_LABEL, "operator": "In", "values": sorted(args.node_groups)},
                                    {"key": CLIQUE_LABEL, "operator": "Exists"},
                                ]
                            }
                        ]
                    }
                }
            },
            # At most one worker more in any clique than in another, over at least `ultraservers` cliques:
            # minDomains makes fewer eligible cliques count as empty ones, so the workers cannot share one.
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "minDomains": args.ultraservers,
                    "topologyKey": CLIQUE_LABEL,
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": labels},
                }
            ],
            "containers": [
                {
                    "name": "mpi-worker",
                    "image": args.image,
                    # UNVERIFIED: the image's sshd path; mpi-operator v2 workers must run sshd (the launcher
                    # reaches them with the keys it mounts at /root/.ssh, the default sshAuthMountPath).
                    "command": ["/bin/sh", "-c"],
                    "args": worker_entrypoint(["/usr/sbin/sshd", "-De"]),
                    "env": [NODE_NAME_ENV],
                    "resources": _worker_resources(args),
                    "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
                }
            ],
            # NCCL's shared-memory transport needs more than the container runtime's 64 MiB /dev/shm.
            "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}],
            **_pod_claims(args),
        },
    }


def _worker_resources(args: EfaCheckArgs) -> dict[str, Any]:
    """A worker's devices: every GPU and EFA device of its node, as plugin resources or one DRA claim."""
    if args.mode.dra:
        return device_claims.whole_node_resources(args.node_devices)
    plugin = {GPU_RESOURCE: args.gpus_per_node, EFA_RESOURCE: args.efa_devices}
    return {"limits": dict(plugin), "requests": dict(plugin)}


def _pod_claims(args: EfaCheckArgs) -> dict[str, Any]:
    """The worker pod's resourceClaims in DRA mode (nothing in plugins mode)."""
    if not args.mode.dra:
        return {}
    return {"resourceClaims": [device_claims.pod_claim(args.claim_template_name)]}


def launcher_pod_template(args: EfaCheckArgs) -> dict[str, Any]:
    """The launcher: mpirun on a system node, no GPU."""
    # Each worker names its node first, so verify can check the run really spanned several UltraServers.
    script = launcher_script([MPIRUN, "--allow-run-as-root"], args.workers, launcher_command(args))
    spec: dict[str, Any] = {
        "containers": [{"name": "mpi-launcher", "image": args.image, "command": ["/bin/sh", "-c"], "args": [script]}]
    }
    if args.launcher_node_selector:
        spec["nodeSelector"] = dict(args.launcher_node_selector)
    return {"metadata": {"labels": {WORKER_LABEL: args.name, "ultraserver.io/mpi-role": "launcher"}}, "spec": spec}


def efa_mpijob_manifest(args: EfaCheckArgs) -> dict[str, Any]:
    """The MPIJob (kubeflow.org/v2beta1) of the EFA check."""
    check_args(args)
    return mpijob_manifest(
        args.name,
        args.namespace,
        args.gpus_per_node,
        launcher_pod_template(args),
        worker_pod_template(args),
        args.workers,
        {"annotations": {EXEMPT_ANNOTATION: EXEMPT_REASON}} if args.kueue else None,
    )


def derived_min_bus_bandwidth_gbps(efa_bandwidth_gbps: float) -> float:
    """The threshold from the layout: a node's EFA bandwidth (devices x per-device Gbit/s, capped) x EFFICIENCY."""
    return efa_bandwidth_gbps * EFFICIENCY


def efa_check_args(settings: Settings, mode: DeviceMode) -> EfaCheckArgs | None:
    """The EFA check of a stack, or None when it is off (auto: on with two or more UltraServers of one layout).

    The workers request every EFA device, so they may only run on node groups with one layout: the largest set
    of UltraServers sharing a layout is used.
    """
    check = settings.efa_check
    pools: dict[tuple[str, int, int], list[tuple[str, int]]] = {}
    nodes: dict[tuple[str, int, int], NodeDevices] = {}
    for group in settings.gpu_node_groups:
        summary = efa.summarize_layout(group.instance_type, list(group.efa_interfaces))
        key = (group.instance_type, summary.efa_devices, summary.efa_bandwidth_gbps)
        nodes.setdefault(key, group_node_devices(group))
        pools.setdefault(key, []).extend((name, ultraservers_per_node_group(group)) for name in node_group_names(group))
    best = max(pools.items(), key=lambda item: sum(n for _, n in item[1]), default=None)
    available = sum(n for _, n in best[1]) if best else 0
    enabled = check.enabled if check.enabled is not None else available >= check.ultraservers
    if not enabled:
        return None
    if best is None or available < check.ultraservers:
        raise ConfigError(
            Problem(
                "ultraserver-eks:efaCheck.ultraservers",
                check.ultraservers,
                f"at most {available} (the UltraServers that share one EFA layout)",
                "lower efaCheck.ultraservers, give the groups one efaLayout, or set efaCheck.enabled: false",
            )
        )
    key, groups = best
    bandwidth = key[2]
    return EfaCheckArgs(
        node_groups=[name for name, _ in groups],
        node_devices=nodes[key],
        min_bus_bandwidth_gbps=check.min_bus_bandwidth_gbps or derived_min_bus_bandwidth_gbps(bandwidth),
        ultraservers=check.ultraservers,
        nodes_per_ultraserver=check.nodes_per_ultraserver,
        kueue=kueue_enabled(settings),
        mode=mode,
    )
