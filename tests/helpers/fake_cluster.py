"""A fake Kubernetes API for verify: a healthy cluster built from a stack's expectation, then broken on purpose."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from helpers.resource_slices import node_slices
from ultraserver.builders.node_report import NODE_REPORT_PREFIX
from ultraserver.facts.hardware.devices import KUBELET_PLUGIN_SELECTOR
from ultraserver.facts.kubernetes.scheduling import (
    CLIQUE_LABEL,
    GPU_PRESENT_LABEL,
    GPU_TAINT_EFFECT,
    GPU_TAINT_KEY,
    GPU_TAINT_VALUE,
    ULTRASERVER_LABEL,
)
from ultraserver.facts.pins import gpu_operator
from ultraserver.rehearse import logs
from ultraserver.verify.clients import ClusterError, Node, Pod
from ultraserver.verify.expect import StackExpectation
from ultraserver.verify.fabric import launcher_selector

SAMPLES = Path(__file__).resolve().parent.parent / "fixtures" / "samples"


def sample(name: str) -> str:
    """A published output from tests/fixtures/samples, without its '# source:' line."""
    lines = (SAMPLES / name).read_text().splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith("# source:"))


def nvbandwidth_output(nodes: int, gpus_per_node: int = 4, cross: float = 798.02) -> str:
    """nvbandwidth's multinode output (the rehearsal's generator) for `nodes` x `gpus_per_node` GPUs."""
    return logs.nvbandwidth_output([f"worker-{n}" for n in range(nodes)], gpus_per_node, cross)


def nccl_output(busbw: float = 180.0, network: str = "Libfabric") -> str:
    """all_reduce_perf under mpirun --tag-output with NCCL_DEBUG=INFO, 1 GiB..16 GiB (the rehearsal's generator)."""
    hosts = ["w-0"]  # one rank reports its transport, as in the published logs
    return logs.nccl_output(hosts, logs.message_sizes(1 << 30, 1 << 34, 2), busbw, network, average=170.1)


@dataclass
class FakeCluster:
    """ClusterReader serving fixed objects; `down` makes every call fail like an unreachable endpoint."""

    node_list: list[Node] = field(default_factory=list)
    classes: list[str] = field(default_factory=list)
    pod_map: dict[tuple[str, str], list[Pod]] = field(default_factory=dict)
    logs: dict[tuple[str, str], str] = field(default_factory=dict)
    down: bool = False
    broken_logs: set[str] = field(default_factory=set)
    slices: list[dict] = field(default_factory=list)

    def _check(self) -> None:
        if self.down:
            raise ClusterError("listing nodes through kubeconfig k failed: MaxRetryError: connection refused")

    def nodes(self) -> list[Node]:
        self._check()
        return list(self.node_list)

    def device_classes(self) -> list[str]:
        self._check()
        return list(self.classes)

    def pods(self, namespace: str, selector: str) -> list[Pod]:
        self._check()
        return list(self.pod_map.get((namespace, selector), []))

    def resource_slices(self) -> list[dict]:
        self._check()
        return list(self.slices)

    def pod_log(self, namespace: str, name: str, tail_lines: int | None = None) -> str:
        self._check()
        if name in self.broken_logs:
            raise ClusterError(f"reading the log of pod {namespace}/{name} failed: HTTP 500 Internal Server Error")
        return self.logs[(namespace, name)]


def operand_pods(expected: StackExpectation, node: str) -> list[Pod]:
    """One Running, Ready pod of each GPU Operator operand on a node."""
    return [
        Pod(
            f"{app}-{node}",
            expected.gpu_operator_namespace,
            node,
            "Running",
            True,
            labels={gpu_operator.APP_LABEL: app},
        )
        for app in expected.gpu_operands
    ]


def healthy_cluster(expected: StackExpectation, nvlink_nodes: int) -> FakeCluster:
    """Every node, DeviceClass, plugin pod and finished nvbandwidth launcher a healthy deployment shows."""
    cluster = FakeCluster(classes=list(expected.device_classes))
    plugins: list[Pod] = []
    operands: list[Pod] = []
    for g_index, group in enumerate(expected.groups):
        for us in range(group.ultraservers):
            clique = f"{g_index:08d}-0000-4000-8000-{us:012d}.{us + 1}"
            for n in range(group.nodes // group.ultraservers):
                name = f"ip-10-{g_index}-{us}-{n}.ec2.internal"
                plugin = {"nvidia.com/gpu": str(group.gpus_per_node), "vpc.amazonaws.com/efa": str(group.efa_devices)}
                # DRA mode: no device-plugin resources, the devices are in the drivers' ResourceSlices.
                allocatable = {} if group.mode.dra else plugin
                if group.mode.dra:
                    cluster.slices += node_slices(name, group.node_devices)
                labels = {ULTRASERVER_LABEL: group.name, CLIQUE_LABEL: clique, GPU_PRESENT_LABEL: "true"}
                taint = (GPU_TAINT_KEY, GPU_TAINT_VALUE, GPU_TAINT_EFFECT)
                cluster.node_list.append(Node(name, labels, allocatable, taints=(taint,)))
                plugins.append(Pod(f"plugin-{name}", expected.dra_namespace, name, "Running", True))
                operands.extend(operand_pods(expected, name))
        members = [n for n in cluster.node_list if n.labels[ULTRASERVER_LABEL] == group.name]
        for index, job in enumerate(group.nvlink_jobs):
            launcher = Pod(
                f"{job}-launcher-abcde", expected.imex_namespace, "sys-0", "Succeeded", False, "2026-11-23T00:00:00Z"
            )
            cluster.pod_map[(expected.imex_namespace, launcher_selector(job))] = [launcher]
            # Job i of a fleet ran on UltraServer i; the launcher names its workers' nodes before the run.
            per = group.nodes // group.ultraservers
            ran_on = members[index * per : index * per + nvlink_nodes]
            report = "".join(f"{NODE_REPORT_PREFIX}{n.name}\n" for n in ran_on)
            cluster.logs[(expected.imex_namespace, launcher.name)] = report + nvbandwidth_output(nvlink_nodes)
    cluster.pod_map[(expected.dra_namespace, KUBELET_PLUGIN_SELECTOR)] = plugins
    cluster.pod_map[(expected.gpu_operator_namespace, gpu_operator.OPERAND_SELECTOR)] = operands
    if expected.efa_job:
        launcher = Pod(
            f"{expected.efa_job}-launcher-x",
            expected.efa_namespace,
            "sys-0",
            "Succeeded",
            False,
            "2026-11-23T00:00:01Z",
        )
        cluster.pod_map[(expected.efa_namespace, launcher_selector(expected.efa_job))] = [launcher]
        # The EFA run's workers: the first node of the first `efa_ultraservers` cliques.
        first: dict[str, str] = {}
        for n in cluster.node_list:
            first.setdefault(n.labels[CLIQUE_LABEL], n.name)
        ran_on = list(first.values())[: expected.efa_ultraservers]
        report = "".join(f"{NODE_REPORT_PREFIX}{name}\n" for name in ran_on)
        cluster.logs[(expected.efa_namespace, launcher.name)] = report + nccl_output()
    return cluster
