"""IMEX check: one nvbandwidth MPIJob per UltraServer, and reading its verdict back from the launcher log."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import pulumi
import pulumi_kubernetes as k8s

from ultraserver.components.child_options import child_options
from ultraserver.components.compute_domain import ComputeDomain
from ultraserver.problems import ConfigError
from ultraserver.builders.nvbandwidth_job import (
    DEFAULT_THRESHOLD_GBPS,
    GPUS_PER_NODE,
    CheckResult,
    NvbandwidthJobArgs,
    check_bandwidth,
    compute_domain_args,
    mpijob_manifest,
    parse_bandwidth_matrix,
)

KUBERNETES_CLIENT_REQUIREMENT = "kubernetes>=31,<36"
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")


@dataclass(frozen=True)
class ImexTarget:
    """One UltraServer to check."""

    name: str
    """Short name of the UltraServer (a DNS label); the job is 'nvbandwidth-<name>'."""
    node_selector: Mapping[str, str]
    """Labels carried only by this UltraServer's nodes (e.g. its node group label)."""
    instance_count: int = 18
    """Instances in the UltraServer: 9 (u-p6e-gb200x36) or 18 (u-p6e-gb200x72)."""


@dataclass
class ImexCheckArgs:
    """Inputs of the IMEX check."""

    targets: list[ImexTarget]
    """UltraServers to check, one MPIJob each."""
    nodes: int = 2
    """Nodes per UltraServer the job spans (2 up to the UltraServer's instance count)."""
    namespace: str = "imex-check"
    """Namespace created for the ComputeDomains and MPIJobs."""
    threshold_gbps: float = DEFAULT_THRESHOLD_GBPS
    """Minimum GB/s every cross-node GPU pair must reach (used by `validate`)."""
    launcher_node_selector: dict[str, str] = field(default_factory=dict)
    """Labels of the system nodes for the launchers (KubernetesLayer passes its system selector)."""


def job_args(args: ImexCheckArgs) -> list[NvbandwidthJobArgs]:
    """One nvbandwidth job per target; ConfigError on bad names or duplicates."""
    problems: list[str] = []
    if not _DNS_LABEL.match(args.namespace):
        problems.append(
            f"imex_check.namespace: {args.namespace!r} is not a valid namespace; use up to 63 lowercase letters, "
            "digits and '-'."
        )
    names = [t.name for t in args.targets]
    for name in names:
        if not _DNS_LABEL.match(f"nvbandwidth-{name}") or len(name) > 30:
            problems.append(
                f"imex_check.targets: UltraServer name {name!r} is not allowed; use up to 30 lowercase letters, "
                "digits and '-'."
            )
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        problems.append(f"imex_check.targets: names {', '.join(duplicates)} appear more than once; make them unique.")
    if args.threshold_gbps <= 0:
        problems.append(f"imex_check.threshold_gbps: {args.threshold_gbps!r} is not allowed; give a positive GB/s.")
    if problems:
        raise ConfigError(problems)
    return [
        NvbandwidthJobArgs(
            name=f"nvbandwidth-{t.name}",
            namespace=args.namespace,
            nodes=args.nodes,
            max_nodes=t.instance_count,
            worker_node_selector=dict(t.node_selector),
            launcher_node_selector=dict(args.launcher_node_selector),
        )
        for t in args.targets
    ]


def namespace_manifest(args: ImexCheckArgs) -> dict[str, Any]:
    """The check's namespace."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": args.namespace}}


class ImexCheck(pulumi.ComponentResource):
    """ComputeDomain + nvbandwidth MPIJob per UltraServer; depend on the MPI operator and the DRA driver."""

    namespace: str
    job_names: list[str]
    threshold_gbps: float

    def __init__(self, name: str, args: ImexCheckArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:ImexCheck", name, None, opts)
        jobs = job_args(args)
        self.namespace = args.namespace
        self.threshold_gbps = args.threshold_gbps
        namespace = k8s.core.v1.Namespace(
            name, metadata=namespace_manifest(args)["metadata"], opts=child_options(self, opts)
        )
        in_namespace = child_options(self, opts, pulumi.ResourceOptions(depends_on=[namespace]))
        self.job_names = []
        for job in jobs:
            domain = ComputeDomain(f"{name}-{job.name}", compute_domain_args(job), opts=in_namespace)
            manifest = mpijob_manifest(job)
            k8s.apiextensions.CustomResource(
                f"{name}-{job.name}",
                api_version=manifest["apiVersion"],
                kind=manifest["kind"],
                metadata=manifest["metadata"],
                spec=manifest["spec"],
                # A finished MPIJob is not rerun in place: any change recreates it, which reruns the check.
                opts=child_options(
                    self,
                    opts,
                    pulumi.ResourceOptions(depends_on=[domain], replace_on_changes=["spec"], delete_before_replace=True),
                ),
            )
            self.job_names.append(job.name)
        self.register_outputs(
            {"namespace": args.namespace, "jobNames": self.job_names, "thresholdGbps": args.threshold_gbps}
        )


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
    return check_bandwidth(parse_bandwidth_matrix(launcher_log(api, namespace, job_name)), threshold_gbps, gpus_per_node)


def core_api(kubeconfig: str) -> PodReader:
    """A CoreV1Api for a kubeconfig given as a file path or as the document itself (e.g. a stack output)."""
    try:
        import kubernetes  # optional dependency: only `validate` needs it
        import yaml
    except ImportError:
        raise CheckError(
            f"reading the check's result needs the Kubernetes Python client: pip install '{KUBERNETES_CLIENT_REQUIREMENT}'"
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


def validate(
    kubeconfig: str, namespace: str, job_name: str, threshold: float = DEFAULT_THRESHOLD_GBPS
) -> CheckResult:
    """Read the launcher log of MPIJob `job_name` through `kubeconfig` and judge its bandwidth matrix."""
    return validate_with(core_api(kubeconfig), namespace, job_name, threshold)
