"""The nvbandwidth MPIJob manifests of the IMEX (multi-node NVLink) check: ComputeDomain, launcher and workers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ultraserver.builders import device_claims, mpijob
from ultraserver.builders.compute_domain import (
    MPI_ROLE_LABEL,
    ComputeDomainArgs,
    compute_domain_name,
    compute_domain_pod_pieces,
)
from ultraserver.builders.kueue import check_queue_labels, podset_topology_annotations
from ultraserver.builders.mpijob import WorkerDevices
from ultraserver.builders.node_report import NODE_NAME_ENV, launcher_script, worker_entrypoint
from ultraserver.facts.hardware.devices import DeviceMode, NodeDevices, node_gpus
from ultraserver.facts.hardware.instances import GB200_INSTANCE_TYPE
from ultraserver.facts.hardware.ultraservers import MAX_NODES
from ultraserver.facts.kubernetes.kueue import EXEMPT_ANNOTATION
from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL, GPU_RESOURCE, GPU_TOLERATION
from ultraserver.facts.pins.manifests import NVBANDWIDTH_IMAGE
from ultraserver.problems import ConfigError, Problem

TESTCASE = "multinode_device_to_device_memcpy_read_ce"
# The sample image runs sshd and mpirun as this unprivileged user, with its keys under its home.
_MPI_USER = 1000
_SSH_DIR = "/home/mpiuser/.ssh"
_SSHD_CONFIG = "/home/mpiuser/.sshd_config"
JOB_LABEL = "ultraserver.io/imex-check"
"""Label of every pod of one nvbandwidth job (value: the job name)."""
FLEET_LABEL = "ultraserver.io/imex-fleet"
"""Label of the workers of the jobs that share one node group of several UltraServers (value: the group)."""


@dataclass(frozen=True)
class NvbandwidthJobArgs(WorkerDevices):
    """One nvbandwidth run across `nodes` nodes of one UltraServer."""

    name: str
    """MPIJob name; the ComputeDomain is '<name>-compute-domain'."""
    namespace: str
    """Namespace of the MPIJob and its ComputeDomain."""
    nodes: int = 2
    """Worker nodes (one MPI worker of `gpus_per_node` ranks each), 2 up to `max_nodes`."""
    max_nodes: int = MAX_NODES
    """Instances in the UltraServer (facts.hardware.ultraservers.NODES of its type)."""
    worker_node_selector: Mapping[str, str] = field(default_factory=dict)
    """Labels that pick the UltraServer's nodes; empty lets the clique affinity pick any one NVLink domain."""
    launcher_node_selector: Mapping[str, str] = field(default_factory=dict)
    """Labels of the system nodes, where the launcher (no GPU) runs."""
    image: str = NVBANDWIDTH_IMAGE
    """Image with nvbandwidth built for multi-node, OpenMPI and sshd."""
    fleet: str = ""
    """Node group shared with other jobs (one per UltraServer of a grouped fleet): the workers then avoid every
    clique where another job of the fleet runs, so the fleet's N jobs test N different UltraServers."""
    queue_name: str = ""
    """Kueue LocalQueue (in `namespace`) to submit to; empty bypasses Kueue. A fleet job always bypasses it: Kueue's
    placement ignores the anti-affinity that sends the fleet's jobs to different UltraServers."""
    node_devices: NodeDevices = field(default_factory=lambda: node_gpus(GB200_INSTANCE_TYPE))
    """The GPUs of one node (not its EFA devices: nvbandwidth copies over NVLink only), which each worker takes."""
    mode: DeviceMode = field(default_factory=DeviceMode)
    """The stack's device mode: in DRA mode the workers claim their GPUs from `claim_template_name`, otherwise they
    request nvidia.com/gpu."""

    @property
    def queued(self) -> bool:
        """Whether the job is submitted through Kueue."""
        return bool(self.queue_name) and not self.fleet


def check_job_args(args: NvbandwidthJobArgs) -> None:
    """Raise ConfigError if the node count does not fit the UltraServer."""
    if isinstance(args.nodes, bool) or not isinstance(args.nodes, int) or not 2 <= args.nodes <= args.max_nodes:
        raise ConfigError(
            Problem(
                "imex_check.nodes",
                args.nodes,
                f"2 to {args.max_nodes}, the instances of the UltraServer (the check needs at least two nodes to "
                "cross the NVLink switch)",
                f"give 2 to {args.max_nodes}",
            )
        )


def compute_domain_args(args: NvbandwidthJobArgs) -> ComputeDomainArgs:
    """The ComputeDomain the job's workers join (elastic: numNodes 0)."""
    return ComputeDomainArgs(name=compute_domain_name(args.name), namespace=args.namespace)


def worker_labels(args: NvbandwidthJobArgs) -> dict[str, str]:
    """Labels of the job's worker pods (also the clique affinity's selector)."""
    labels = {JOB_LABEL: args.name, MPI_ROLE_LABEL: "worker"}
    if args.fleet:
        labels[FLEET_LABEL] = args.fleet
    return labels


def worker_affinity(args: NvbandwidthJobArgs, clique_affinity: dict[str, Any]) -> dict[str, Any]:
    """The clique affinity of the ComputeDomain, plus (in a fleet) anti-affinity to the fleet's other jobs."""
    if not args.fleet:
        return clique_affinity
    others = {
        "labelSelector": {
            "matchExpressions": [
                {"key": FLEET_LABEL, "operator": "In", "values": [args.fleet]},
                {"key": JOB_LABEL, "operator": "NotIn", "values": [args.name]},
            ]
        },
        "topologyKey": CLIQUE_LABEL,
    }
    return {**clique_affinity, "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [others]}}


def _security_context() -> dict[str, Any]:
    """Run as the image's MPI user, never root."""
    return {"runAsUser": _MPI_USER, "runAsNonRoot": True}


def launcher_command(args: NvbandwidthJobArgs) -> list[str]:
    """mpirun command line: one rank per GPU, `gpus_per_node` ranks per node."""
    return [
        "mpirun",
        "--bind-to",
        "core",
        "--map-by",
        f"ppr:{args.gpus_per_node}:node",
        "-np",
        str(args.nodes * args.gpus_per_node),
        "--report-bindings",
        "-q",
        "nvbandwidth",
        "-t",
        TESTCASE,
    ]


def launcher_pod_template(args: NvbandwidthJobArgs) -> dict[str, Any]:
    """Pod template of the launcher: on system nodes, no GPU."""
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "mpi-launcher",
                "image": args.image,
                "command": ["/bin/sh", "-c"],
                # Each worker names its node first (verify maps it to the UltraServer), then nvbandwidth runs.
                "args": [launcher_script(["mpirun"], args.nodes, launcher_command(args))],
                "securityContext": _security_context(),
            }
        ]
    }
    if args.launcher_node_selector:
        spec["nodeSelector"] = dict(args.launcher_node_selector)
    return {
        "metadata": {"labels": {JOB_LABEL: args.name, "ultraserver.io/mpi-role": "launcher"}},
        "spec": spec,
    }


def worker_pod_template(args: NvbandwidthJobArgs) -> dict[str, Any]:
    """Pod template of a worker: all GPUs of one node, the IMEX channel claim, one NVLink clique."""
    labels = worker_labels(args)
    pieces = compute_domain_pod_pieces(compute_domain_args(args), labels)
    spec: dict[str, Any] = {
        "affinity": worker_affinity(args, pieces.affinity),
        "tolerations": [GPU_TOLERATION],
        "containers": [
            {
                "name": "mpi-worker",
                "image": args.image,
                # Record the node name (downward API) for the launcher's node report, then run sshd.
                "command": ["/bin/sh", "-c"],
                "args": worker_entrypoint(["/usr/sbin/sshd", "-De", "-f", _SSHD_CONFIG]),
                "env": [NODE_NAME_ENV],
                "securityContext": _security_context(),
                # GPUs from the device plugin or a DRA claim, the IMEX channel from the ComputeDomain's DRA claim.
                "resources": _worker_resources(args, pieces.container_claim),
            }
        ],
        "resourceClaims": [pieces.resource_claim],
    }
    if args.mode.dra:
        spec["resourceClaims"].append(device_claims.pod_claim(args.claim_template_name))
    if args.worker_node_selector:
        spec["nodeSelector"] = dict(args.worker_node_selector)
    metadata: dict[str, Any] = {"labels": labels}
    if args.queued:
        # The whole job fits one UltraServer: Kueue admits it only into one NVLink clique.
        metadata["annotations"] = podset_topology_annotations(args.nodes, args.max_nodes)
    return {"metadata": metadata, "spec": spec}


def _worker_resources(args: NvbandwidthJobArgs, channel_claim: dict[str, str]) -> dict[str, Any]:
    """A worker container's resources: the channel claim, and the node's GPUs as a plugin resource or a DRA claim."""
    if args.mode.dra:
        return device_claims.whole_node_resources(args.node_devices, channel_claim)
    return {"limits": {GPU_RESOURCE: args.gpus_per_node}, "claims": [channel_claim]}


def job_metadata(args: NvbandwidthJobArgs) -> dict[str, dict[str, str]]:
    """Labels and annotations of the MPIJob: the Kueue queue, or why a fleet job bypasses it."""
    if args.queued:
        return {"labels": check_queue_labels(args.queue_name)}
    if args.queue_name:
        return {
            "annotations": {
                EXEMPT_ANNOTATION: "fleet job: Kueue's placement ignores the anti-affinity to the fleet's other jobs"
            }
        }
    return {}


def mpijob_manifest(args: NvbandwidthJobArgs) -> dict[str, Any]:
    """The MPIJob (kubeflow.org/v2beta1) running nvbandwidth's multi-node copy-engine read test."""
    check_job_args(args)
    return mpijob.mpijob_manifest(
        args.name,
        args.namespace,
        args.gpus_per_node,
        launcher_pod_template(args),
        worker_pod_template(args),
        args.nodes,
        job_metadata(args),
        sshAuthMountPath=_SSH_DIR,
    )
