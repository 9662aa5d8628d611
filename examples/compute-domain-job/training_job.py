"""The training workload as plain manifests: an Indexed Job running torchrun on every node of one UltraServer.

Each Job index is one node (one pod with all 4 GPUs); the pods find rank 0 through a headless Service,
join the job's ComputeDomain for IMEX channels, and stay inside one NVLink domain by the clique affinity.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ultraserver import (
    GPU_TOLERATION,
    LOCAL_QUEUE_NAME,
    ULTRASERVER_LABEL,
    ComputeDomainArgs,
    ConfigError,
    NodeDevices,
    Problem,
    claim_template,
    compute_domain_pod_pieces,
    layout_for,
    local_queue_manifest,
    node_devices,
    pod_claim,
    podset_topology_annotations,
    queue_labels,
    whole_node_resources,
)

PROJECT = "ultraserver-example-training"
DEFAULT_IMAGE = "nvcr.io/nvidia/pytorch:25.06-py3"
GPUS_PER_NODE = 4
INSTANCE_TYPE = "p6e-gb200.36xlarge"
DEVICE_MODES = ("plugins", "dra")
# A u-p6e-gb200x72 UltraServer has 18 instances; one NVLink domain cannot hold more nodes.
MAX_WORKERS = 18
# The largest EFA layout of p6e-gb200.36xlarge (ultraserver.efa 'maximum').
MAX_EFA_DEVICES = 16
RENDEZVOUS_PORT = 29500
NOTICE_DIR = "/etc/ultraserver"
"""Where the pod's own annotations appear as a file: the reclaim drain's notice (train.py ``NOTICE_FILE``)."""
SCRIPT_DIR = "/opt/train"
# Pulumi otherwise waits for the Job to complete, i.e. for the whole training run.
SKIP_AWAIT = {"pulumi.com/skipAwait": "true"}


@dataclass(frozen=True)
class TrainingJob:
    """One multi-node training run."""

    ultraserver: str
    """GPU node group (UltraServer) to run on: the value of the ultraserver.io/ultraserver node label."""
    workers: int
    """Nodes to use, one pod each with all of its GPUs."""
    name: str = "train"
    """Name of the Job; the Service, ConfigMap and ComputeDomain are named after it."""
    namespace: str = "training"
    """Namespace created for the run."""
    image: str = DEFAULT_IMAGE
    """Container image with PyTorch (arm64) and, for traffic between UltraServers, libfabric EFA and aws-ofi-nccl."""
    efa_devices: int = 4
    """EFA devices per node the pod takes; 4 with the platform's default one-per-nci-group layout."""
    devices: str = "plugins"
    """The cluster stack's device mode (its kubernetes.devices): device-plugin resources, or in "dra" a
    ResourceClaimTemplate of the whole node's GPUs and EFA devices, with a CPU share: Kueue places one pod per node."""
    efa_layout: str = "one-per-nci-group"
    """The node group's EFA layout preset (its efaLayout); in "dra" mode the claim takes the layout's EFA devices."""
    queue_name: str = LOCAL_QUEUE_NAME
    """Kueue LocalQueue to submit to (the platform's Kueue admits the whole job at once, inside one NVLink clique);
    empty submits the Job straight to the scheduler (a cluster without Kueue)."""


def check_training_job(job: TrainingJob) -> None:
    """Raise ConfigError naming every setting outside what one UltraServer allows."""
    problems = []
    if isinstance(job.workers, bool) or not 1 <= job.workers <= MAX_WORKERS:
        problems.append(
            Problem(
                f"{PROJECT}:workers",
                job.workers,
                f"1 to {MAX_WORKERS} (the job stays in one UltraServer: 9 nodes for u-p6e-gb200x36, 18 for "
                "u-p6e-gb200x72)",
                "lower it to the UltraServer's size",
            )
        )
    if isinstance(job.efa_devices, bool) or not 0 <= job.efa_devices <= MAX_EFA_DEVICES:
        problems.append(
            Problem(
                f"{PROJECT}:efaDevices",
                job.efa_devices,
                f"0 to {MAX_EFA_DEVICES}",
                "use the EFA devices per node of the node group's layout (stack output "
                "gpuNodeGroups.<name>.efaDevicesPerNode)",
            )
        )
    if job.devices not in DEVICE_MODES:
        problems.append(
            Problem(
                f"{PROJECT}:devices", job.devices, ", ".join(DEVICE_MODES), "use the cluster stack's kubernetes.devices"
            )
        )
    if not job.ultraserver:
        problems.append(
            Problem(f"{PROJECT}:ultraserver", job.ultraserver, "a GPU node group name of the cluster stack", "set it")
        )
    if problems:
        raise ConfigError(problems)


def compute_domain_args(job: TrainingJob) -> ComputeDomainArgs:
    """The job's own ComputeDomain: elastic, so it grows with the pods that join it."""
    return ComputeDomainArgs(name=f"{job.name}-compute-domain", namespace=job.namespace)


def device_claim_template(job: TrainingJob) -> dict[str, Any] | None:
    """In "dra" mode, the ResourceClaimTemplate every pod instantiates for its node's devices; None otherwise."""
    if job.devices != "dra":
        return None
    return claim_template(f"{job.name}-devices", job.namespace, dra_node(job))


def dra_node(job: TrainingJob) -> NodeDevices:
    """The devices one pod claims in "dra" mode: the whole node's GPUs and its layout's EFA devices."""
    return node_devices(INSTANCE_TYPE, layout_for(INSTANCE_TYPE, job.efa_layout, None, key=f"{PROJECT}:efaLayout"))


def pod_labels(job: TrainingJob) -> dict[str, str]:
    """Labels of the job's pods (the Service and the clique affinity select by them)."""
    return {"app.kubernetes.io/name": job.name, "app.kubernetes.io/component": "trainer"}


def namespace_manifest(job: TrainingJob) -> dict[str, Any]:
    """The run's namespace."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": job.namespace}}


def local_queue(job: TrainingJob) -> dict[str, Any]:
    """The namespace's LocalQueue, feeding the platform's ClusterQueue."""
    return local_queue_manifest(job.namespace, job.queue_name)


def script_config_map(job: TrainingJob, script: str) -> dict[str, Any]:
    """The training script, mounted into every pod."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": f"{job.name}-script", "namespace": job.namespace},
        "data": {"train.py": script},
    }


def service_manifest(job: TrainingJob) -> dict[str, Any]:
    """Headless Service giving each pod the DNS name <job>-<index>.<job>; rank 0 is the rendezvous."""
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": job.name, "namespace": job.namespace},
        "spec": {
            "clusterIP": "None",
            "selector": pod_labels(job),
            # Ranks look up rank 0 while pods are still starting, before any is ready.
            "publishNotReadyAddresses": True,
            "ports": [{"name": "rendezvous", "port": RENDEZVOUS_PORT}],
        },
    }


def torchrun_args(job: TrainingJob) -> list[str]:
    """torchrun arguments: one rank per GPU, node rank from the Job completion index, rank 0's pod as master."""
    return [
        f"--nnodes={job.workers}",
        f"--nproc_per_node={GPUS_PER_NODE}",
        "--node_rank=$(NODE_RANK)",
        f"--master_addr={job.name}-0.{job.name}",
        f"--master_port={RENDEZVOUS_PORT}",
        f"{SCRIPT_DIR}/train.py",
    ]


def job_manifest(job: TrainingJob) -> dict[str, Any]:
    """The Indexed Job: `workers` pods at once; each takes all 4 GPUs of a node, so one pod per node."""
    check_training_job(job)
    labels = pod_labels(job)
    pieces = compute_domain_pod_pieces(compute_domain_args(job), labels)
    template = device_claim_template(job)
    claims = [pieces.resource_claim] + ([pod_claim(template["metadata"]["name"])] if template else [])
    resources: dict[str, Any]
    if template:
        # Kueue's topology-aware placement does not count claims: the CPU share makes it place one pod per node.
        resources = whole_node_resources(dra_node(job), pieces.container_claim)
    else:
        resources = {"claims": [pieces.container_claim], "limits": {"nvidia.com/gpu": GPUS_PER_NODE}}
        if job.efa_devices:
            resources["limits"]["vpc.amazonaws.com/efa"] = job.efa_devices
    container = {
        "name": "trainer",
        "image": job.image,
        "command": ["torchrun"],
        "args": torchrun_args(job),
        "env": [
            {
                "name": "NODE_RANK",
                "valueFrom": {
                    "fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}
                },
            },
            {"name": "FI_PROVIDER", "value": "efa"},
        ],
        "ports": [{"name": "rendezvous", "containerPort": RENDEZVOUS_PORT}],
        # GPUs and EFA from device plugins or one DRA claim, the IMEX channel from the ComputeDomain's DRA claim.
        "resources": resources,
        "volumeMounts": [
            {"name": "script", "mountPath": SCRIPT_DIR, "readOnly": True},
            {"name": "dshm", "mountPath": "/dev/shm"},
            # The reclaim drain's notice: its annotations (reclaim-at, evict-at, checkpoint-requested-at) appear
            # here when the block ends; train.py checks between steps and checkpoints before evict-at.
            {"name": "notice", "mountPath": NOTICE_DIR, "readOnly": True},
        ],
    }
    # Through Kueue: the queue label on the Job; the pods require one clique (the job fits one UltraServer).
    template_metadata: dict[str, Any] = {"labels": labels}
    if job.queue_name:
        template_metadata["annotations"] = podset_topology_annotations(job.workers, MAX_WORKERS)
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": job.name,
            "namespace": job.namespace,
            "labels": {**labels, **queue_labels(job.queue_name)},
            "annotations": dict(SKIP_AWAIT),
        },
        "spec": {
            "completionMode": "Indexed",
            "completions": job.workers,
            "parallelism": job.workers,
            # One lost rank breaks the collective: fail the run rather than restart a single pod.
            "backoffLimit": 0,
            "template": {
                "metadata": template_metadata,
                "spec": {
                    "subdomain": job.name,
                    "restartPolicy": "Never",
                    "nodeSelector": {ULTRASERVER_LABEL: job.ultraserver},
                    "tolerations": [GPU_TOLERATION],
                    "affinity": pieces.affinity,
                    "resourceClaims": claims,
                    "containers": [container],
                    "volumes": [
                        {"name": "script", "configMap": {"name": f"{job.name}-script"}},
                        # NCCL and data loaders need more shared memory than the container default of 64 MiB.
                        {"name": "dshm", "emptyDir": {"medium": "Memory"}},
                        # The kubelet rewrites this file when the pod's annotations change (Kubernetes docs,
                        # "Expose Pod Information to Containers Through Files": a downward API volume's fields are
                        # updated; how soon is the kubelet's sync period, not documented to the minute).
                        {
                            "name": "notice",
                            "downwardAPI": {
                                "items": [{"path": "annotations", "fieldRef": {"fieldPath": "metadata.annotations"}}]
                            },
                        },
                    ],
                },
            },
        },
    }
