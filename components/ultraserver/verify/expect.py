"""What a deployed stack should look like, derived from its settings: the yardstick every check measures against."""

from __future__ import annotations

from dataclasses import dataclass

from ultraserver.builders.efa_check import efa_check_args
from ultraserver.builders.imex_check import imex_check_args, target_job_names
from ultraserver.config.settings import Settings
from ultraserver.config.views import node_group_names, ultraservers_per_node_group
from ultraserver.facts import efa
from ultraserver.facts.dra import COMPUTE_DOMAIN_DEVICE_CLASSES, DRA_DRIVER_NAMESPACE


@dataclass(frozen=True)
class NodeGroupExpectation:
    """One GPU node group: a single UltraServer, or a grouped fleet of several."""

    name: str
    """Node group name, the value of the node label ultraserver.io/ultraserver."""
    ultraservers: int
    """UltraServers (NVLink cliques) the group spans."""
    instances: int
    """Instances in one UltraServer (9 or 18)."""
    nodes: int
    """Nodes the group runs in total (desired size)."""
    gpus_per_node: int
    """Allocatable nvidia.com/gpu every node must show."""
    efa_devices: int
    """Allocatable vpc.amazonaws.com/efa every node must show (the layout's EFA device count)."""
    efa_bandwidth_gbps: int
    """EFA bandwidth of one node in Gbit/s (from the layout)."""
    nvlink_jobs: tuple[str, ...] = ()
    """nvbandwidth MPIJobs of the group, one per UltraServer (empty when the IMEX check is off)."""

    @property
    def fleet(self) -> bool:
        """Several UltraServers behind one node group: they are told apart by their clique."""
        return self.ultraservers > 1

    @property
    def full(self) -> bool:
        """Whether the group runs every instance of its UltraServers."""
        return self.nodes == self.ultraservers * self.instances


@dataclass(frozen=True)
class StackExpectation:
    """Everything verify checks for one stack."""

    groups: tuple[NodeGroupExpectation, ...]
    dra_namespace: str = DRA_DRIVER_NAMESPACE
    device_classes: tuple[str, ...] = COMPUTE_DOMAIN_DEVICE_CLASSES
    imex_namespace: str = ""
    """Namespace of the nvbandwidth jobs; empty when the stack deploys no IMEX check."""
    nvlink_threshold_gbps: float = 0.0
    efa_namespace: str = ""
    """Namespace of the EFA check's MPIJob; empty when the stack deploys no EFA check."""
    efa_job: str = ""
    efa_min_bus_bandwidth_gbps: float = 0.0
    efa_ultraservers: int = 0


def expectation(settings: Settings) -> StackExpectation:
    """The expected cluster of a stack."""
    check = imex_check_args(settings)
    jobs_by_target = {t.name: tuple(target_job_names(t)) for t in check.targets} if check else {}
    groups = []
    for group in settings.gpu_node_groups:
        summary = efa.summarize_layout(group.instance_type, list(group.efa_interfaces))
        gpus = int(efa.instance_facts(group.instance_type)["gpus"])
        for name in node_group_names(group):
            groups.append(
                NodeGroupExpectation(
                    name=name,
                    ultraservers=ultraservers_per_node_group(group),
                    instances=group.instances_per_ultraserver,
                    nodes=group.nodes_per_group,
                    gpus_per_node=gpus,
                    efa_devices=summary.efa_devices,
                    efa_bandwidth_gbps=summary.efa_bandwidth_gbps,
                    nvlink_jobs=jobs_by_target.get(name, ()),
                )
            )
    efa_check = efa_check_args(settings)
    return StackExpectation(
        groups=tuple(groups),
        efa_namespace=efa_check.namespace if efa_check else "",
        efa_job=efa_check.name if efa_check else "",
        efa_min_bus_bandwidth_gbps=efa_check.min_bus_bandwidth_gbps if efa_check else 0.0,
        efa_ultraservers=efa_check.ultraservers if efa_check else 0,
        dra_namespace=settings.kubernetes.dra_driver.namespace or DRA_DRIVER_NAMESPACE,
        imex_namespace=check.namespace if check else "",
        nvlink_threshold_gbps=check.threshold_gbps if check else 0.0,
    )
