"""The NCCL check: nccl-tests all_reduce_perf across one UltraServer's ComputeDomain, the way GB200 is measured.

Every node of the UltraServer (18 by default) runs one worker with all its GPUs and EFA devices and the job's
ComputeDomain channel; NCCL_MNNVL_ENABLE=1 and NCCL_NVLS_ENABLE=1 make NCCL use multi-node NVLink and NVLink
SHARP inside the domain (the shape of awslabs/awsome-distributed-training micro-benchmarks/nccl-tests/kubernetes/
nccl-tests-gb200.yaml; that file was not read at a commit here, so the shape is UNVERIFIED). GPUs and EFA come from
the stack's device mode: plugin resources, or one DRA claim of the whole node's GPUs and EFA devices with a CPU share
that keeps Kueue's topology-aware placement to one worker per node (builders/device_claims.py).

Default threshold: 600 GB/s large-message bus bandwidth, below the 811 GB/s a published 2-node GB200 MNNVL run
reached (lixueduan.com "GB200 MNNVL" nccl-tests post, read 2026-11-25; no AWS figure for 18 nodes was found, so it is
UNVERIFIED at that scale and meant to be calibrated with ncclCheck.minBusBandwidthGbytes).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ultraserver.builders import device_claims, mpijob
from ultraserver.builders.compute_domain import ComputeDomainArgs, compute_domain_name, compute_domain_pod_pieces
from ultraserver.builders.efa_check import ALL_REDUCE_PERF, MAX_BYTES, MIN_BYTES, MPIRUN
from ultraserver.builders.kueue import LOCAL_QUEUE_NAME, check_queue_labels, podset_topology_annotations
from ultraserver.builders.mpijob import WorkerDevices
from ultraserver.builders.node_report import NODE_NAME_ENV, launcher_script, worker_entrypoint
from ultraserver.config.settings import Settings
from ultraserver.config.views import imex_targets, kueue_enabled
from ultraserver.facts.hardware.devices import DeviceMode, NodeDevices
from ultraserver.facts.kubernetes.scheduling import EFA_RESOURCE, GPU_RESOURCE, GPU_TOLERATION
from ultraserver.facts.pins.manifests import NCCL_TESTS_IMAGE
from ultraserver.problems import ConfigError, Problem

NAMESPACE = "nccl-check"
JOB_LABEL = "ultraserver.io/nccl-check"
MNNVL_ENV = ("NCCL_MNNVL_ENABLE=1", "NCCL_NVLS_ENABLE=1")
"""What makes the run use multi-node NVLink (MNNVL) and NVLink SHARP (NVLS) inside the ComputeDomain."""


@dataclass(frozen=True)
class NcclJobArgs(WorkerDevices):
    """One all_reduce_perf run over `nodes` nodes of one UltraServer."""

    name: str
    """MPIJob name ('nccl-<UltraServer>'); the ComputeDomain is '<name>-compute-domain'."""
    nodes: int
    """Worker nodes, one MPI worker of `gpus_per_node` ranks each."""
    max_nodes: int
    """Instances in the UltraServer (9 or 18): the Kueue topology request."""
    worker_node_selector: Mapping[str, str]
    """Labels that pick the UltraServer's nodes."""
    node_devices: NodeDevices
    """The GPUs and EFA devices of one node of the UltraServer, which each worker takes whole."""
    min_bus_bandwidth_gbytes: float
    """Large-message bus bandwidth `ultraserver verify` requires, in GB/s."""
    namespace: str = NAMESPACE
    """Namespace created for the check."""
    image: str = NCCL_TESTS_IMAGE
    """arm64 image with NCCL, aws-ofi-nccl, Open MPI and nccl-tests."""
    launcher_node_selector: Mapping[str, str] = field(default_factory=dict)
    """Labels of the system nodes, where the launcher (no GPU) runs."""
    queue_name: str = ""
    """Kueue LocalQueue to submit to; empty bypasses Kueue."""
    mode: DeviceMode = field(default_factory=DeviceMode)
    """The stack's device mode: in DRA mode each worker claims its node's devices from `claim_template_name`,
    otherwise it requests nvidia.com/gpu and vpc.amazonaws.com/efa."""

    @property
    def domain(self) -> ComputeDomainArgs:
        """The job's own ComputeDomain (elastic: it grows with the workers that join it)."""
        return ComputeDomainArgs(name=compute_domain_name(self.name), namespace=self.namespace)


def launcher_command(args: NcclJobArgs) -> list[str]:
    """mpirun of all_reduce_perf: one rank per GPU, MNNVL and NVLS on, NCCL_DEBUG=INFO for the log tail."""
    env = ["PATH", "LD_LIBRARY_PATH", "LD_PRELOAD", "FI_PROVIDER=efa", "NCCL_DEBUG=INFO", *MNNVL_ENV]
    command = [MPIRUN, "--allow-run-as-root", "--tag-output", "-np", str(args.nodes * args.gpus_per_node)]
    command += ["--map-by", f"ppr:{args.gpus_per_node}:node", "--bind-to", "none"]
    for item in env:
        command += ["-x", item]
    command += [ALL_REDUCE_PERF, "-b", MIN_BYTES, "-e", MAX_BYTES, "-f", "2", "-g", "1", "-c", "1", "-n", "20"]
    return command


def _worker_resources(args: NcclJobArgs, channel: dict[str, str]) -> dict[str, Any]:
    if args.mode.dra:
        return device_claims.whole_node_resources(args.node_devices, channel)
    plugin = {GPU_RESOURCE: args.gpus_per_node, EFA_RESOURCE: args.node_devices.efa_devices}
    return {"limits": dict(plugin), "requests": dict(plugin), "claims": [channel]}


def worker_pod_template(args: NcclJobArgs) -> dict[str, Any]:
    """A worker: one whole node of the UltraServer, its ComputeDomain channel, its GPUs and EFA devices."""
    labels = {JOB_LABEL: args.name, "ultraserver.io/mpi-role": "worker"}
    pieces = compute_domain_pod_pieces(args.domain, labels)
    claims = [pieces.resource_claim]
    if args.mode.dra:
        claims.append(device_claims.pod_claim(args.claim_template_name))
    container = {
        "name": "mpi-worker",
        "image": args.image,
        "command": ["/bin/sh", "-c"],
        "args": worker_entrypoint(["/usr/sbin/sshd", "-De"]),
        "env": [NODE_NAME_ENV],
        "resources": _worker_resources(args, pieces.container_claim),
        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
    }
    metadata: dict[str, Any] = {"labels": labels}
    if args.queue_name:
        metadata["annotations"] = podset_topology_annotations(args.nodes, args.max_nodes)
    return {
        "metadata": metadata,
        "spec": {
            "nodeSelector": dict(args.worker_node_selector),
            "tolerations": [GPU_TOLERATION],
            "affinity": pieces.affinity,
            "containers": [container],
            "resourceClaims": claims,
            # NCCL's shared-memory transport needs more than the container runtime's 64 MiB /dev/shm.
            "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}],
        },
    }


def mpijob_manifest(args: NcclJobArgs) -> dict[str, Any]:
    """The MPIJob (kubeflow.org/v2beta1) of one UltraServer's NCCL run."""
    script = launcher_script([MPIRUN, "--allow-run-as-root"], args.nodes, launcher_command(args))
    launcher: dict[str, Any] = {
        "metadata": {"labels": {JOB_LABEL: args.name, "ultraserver.io/mpi-role": "launcher"}},
        "spec": {"containers": [{"name": "mpi-launcher", "image": args.image, "command": ["/bin/sh", "-c"]}]},
    }
    launcher["spec"]["containers"][0]["args"] = [script]
    if args.launcher_node_selector:
        launcher["spec"]["nodeSelector"] = dict(args.launcher_node_selector)
    metadata = {"labels": check_queue_labels(args.queue_name)} if args.queue_name else None
    return mpijob.mpijob_manifest(
        args.name, args.namespace, args.gpus_per_node, launcher, worker_pod_template(args), args.nodes, metadata
    )


def nccl_check_args(settings: Settings, mode: DeviceMode) -> list[NcclJobArgs]:
    """One run per UltraServer node group when ncclCheck is on (a grouped fleet's run lands on one of its cliques)."""
    check = settings.nccl_check
    if not check.enabled:
        return []
    queue = LOCAL_QUEUE_NAME if kueue_enabled(settings) else ""
    jobs = []
    for target in imex_targets(settings):
        nodes = target.available_nodes if check.nodes is None else check.nodes
        if nodes > target.available_nodes:
            raise ConfigError(
                Problem(
                    f"{settings.project}:ncclCheck.nodes",
                    nodes,
                    f"at most {target.available_nodes} (the nodes of UltraServer {target.name})",
                    'lower it, or use "all"',
                )
            )
        jobs.append(
            NcclJobArgs(
                name=f"nccl-{target.name}",
                nodes=nodes,
                max_nodes=target.instance_count,
                worker_node_selector=dict(target.node_selector),
                node_devices=target.node_devices,
                min_bus_bandwidth_gbytes=check.min_bus_bandwidth_gbytes,
                queue_name=queue,
                mode=mode,
            )
        )
    return jobs
