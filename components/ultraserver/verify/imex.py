"""Reading the IMEX check's verdict back from the cluster: the launcher log of each nvbandwidth MPIJob."""

from __future__ import annotations

import os
from typing import Any, Protocol

from ultraserver.builders.nvbandwidth_job import DEFAULT_THRESHOLD_GBPS, GPUS_PER_NODE
from ultraserver.verify.nvbandwidth import CheckResult, check_bandwidth, parse_bandwidth_matrix

KUBERNETES_CLIENT_REQUIREMENT = "kubernetes>=31,<36"


class CheckError(RuntimeError):
    """The check could not be read from the cluster (job missing or not finished, no client)."""


class PodReader(Protocol):
    """The two CoreV1Api calls the check needs (kubernetes.client.CoreV1Api satisfies it)."""

    def list_namespaced_pod(self, namespace: str, label_selector: str = ...) -> Any:
        """Pods in a namespace matching a label selector."""

    def read_namespaced_pod_log(self, name: str, namespace: str) -> str:
        """A pod's log."""


def launcher_log(api: PodReader, namespace: str, job_name: str) -> str:
    """Log of the MPIJob's newest finished launcher pod; CheckError if it does not exist or has not finished."""
    # mpi-operator runs the launcher as the batch Job '<mpijob>-launcher'; the Job controller labels its pods.
    selector = f"job-name={job_name}-launcher"
    pods = list(api.list_namespaced_pod(namespace, label_selector=selector).items)
    if not pods:
        raise CheckError(
            f"no launcher pod for MPIJob {job_name!r} in namespace {namespace!r} (selector {selector}); "
            f"check that the job exists: kubectl -n {namespace} get mpijob {job_name}"
        )
    newest = max(pods, key=lambda p: p.metadata.creation_timestamp)
    phase = newest.status.phase
    if phase not in ("Succeeded", "Failed"):
        raise CheckError(
            f"launcher pod {newest.metadata.name} of MPIJob {job_name!r} is {phase}; the check has not finished, "
            "run validate again later."
        )
    return api.read_namespaced_pod_log(newest.metadata.name, namespace)


def validate_with(
    api: PodReader,
    namespace: str,
    job_name: str,
    threshold_gbps: float = DEFAULT_THRESHOLD_GBPS,
    gpus_per_node: int = GPUS_PER_NODE,
) -> CheckResult:
    """Judge one finished nvbandwidth job through an already-built API client."""
    return check_bandwidth(
        parse_bandwidth_matrix(launcher_log(api, namespace, job_name)), threshold_gbps, gpus_per_node
    )


def core_api(kubeconfig: str) -> PodReader:
    """A CoreV1Api for a kubeconfig given as a file path or as the document itself (e.g. a stack output)."""
    try:
        import kubernetes  # optional dependency: only `validate` needs it
        import yaml
    except ImportError:
        raise CheckError(
            f"reading the check's result needs the Kubernetes Python client: pip install "
            f"'{KUBERNETES_CLIENT_REQUIREMENT}'"
        ) from None
    if os.path.isfile(kubeconfig):
        client = kubernetes.config.new_client_from_config(config_file=kubeconfig)
    else:
        document = yaml.safe_load(kubeconfig)
        if not isinstance(document, dict) or "clusters" not in document:
            raise CheckError("kubeconfig: neither an existing file nor a kubeconfig document (no 'clusters' key)")
        client = kubernetes.config.new_client_from_config_dict(document)
    api: PodReader = kubernetes.client.CoreV1Api(client)
    return api


def validate(kubeconfig: str, namespace: str, job_name: str, threshold: float = DEFAULT_THRESHOLD_GBPS) -> CheckResult:
    """Read the launcher log of MPIJob `job_name` through `kubeconfig` and judge its bandwidth matrix."""
    return validate_with(core_api(kubeconfig), namespace, job_name, threshold)
