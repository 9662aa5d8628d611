"""Node-facts checks: GPUs, EFA devices and cliques per node and UltraServer, DRA DeviceClasses and plugin."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ultraserver.facts.hardware.devices import DRA_DRIVER_NAMESPACE, KUBELET_PLUGIN_SELECTOR
from ultraserver.facts.kubernetes.scheduling import (
    CLIQUE_LABEL,
    EFA_RESOURCE,
    GPU_PRESENT_LABEL,
    GPU_RESOURCE,
    GPU_TAINT_EFFECT,
    GPU_TAINT_KEY,
    GPU_TAINT_VALUE,
    ULTRASERVER_LABEL,
)
from ultraserver.facts.pins import gpu_operator
from ultraserver.facts.pins.charts import DRA_DRIVER, LEGACY_DRA_DRIVER_NAME
from ultraserver.problems import Described, Problem
from ultraserver.verify.clients import ClusterError, Node, Pod
from ultraserver.verify.expect import NodeGroupExpectation
from ultraserver.verify.verdict import CLUSTER, DEVICE_CLASSES, FLEET, NO_MNNVL_UUID, NODE_FACTS, Verdict, api_problem


def split_clique(value: str) -> tuple[str, str]:
    """(ClusterUUID, CliqueID) of an nvidia.com/gpu.clique value (GFD writes '<ClusterUUID>.<CliqueID>')."""
    uuid, _, clique = value.rpartition(".")
    return uuid, clique


def _quantity(node: Node, resource: str) -> str:
    return node.allocatable.get(resource, "0")


def _allocatable_problems(node: Node, group: NodeGroupExpectation) -> list[Problem]:
    """The device plugins' resources on a plugins-mode node: all GPUs and the layout's EFA devices."""
    found: list[Problem] = []
    where = f"node {node.name}"
    gpus = _quantity(node, GPU_RESOURCE)
    if gpus != str(group.gpus_per_node):
        found.append(
            Problem(
                f"{where} allocatable {GPU_RESOURCE}",
                gpus,
                str(group.gpus_per_node),
                "check the GPU Operator device plugin pod on the node: kubectl get pods -A -o wide "
                f"--field-selector spec.nodeName={node.name}",
            )
        )
    efa_devices = _quantity(node, EFA_RESOURCE)
    if efa_devices != str(group.efa_devices):
        found.append(
            Problem(
                f"{where} allocatable {EFA_RESOURCE}",
                efa_devices,
                f"{group.efa_devices} (the EFA devices of the group's layout)",
                "check the EFA device plugin pod on the node (kubectl -n kube-system get pods -o wide "
                f"--field-selector spec.nodeName={node.name}) and the instance's EFA interfaces "
                "(aws ec2 describe-instances); replace the node if devices are missing",
            )
        )
    return found


def _scheduling_problems(node: Node) -> list[Problem]:
    """A Ready GPU node that still takes no GPU job, or takes any pod: cordoned, under pressure, without the GPU taint
    or without GPU Feature Discovery's label (facts/kubernetes/scheduling.py)."""
    found: list[Problem] = []
    where = f"node {node.name}"
    if node.unschedulable:
        found.append(
            Problem(
                f"{where} cordoned",
                "spec.unschedulable true",
                "schedulable: a cordoned node takes no new pod, so a job sized for the UltraServer stays Pending",
                f"kubectl uncordon {node.name} once whoever cordoned it is done (a drain, a repair)",
            )
        )
    if not any(key == GPU_TAINT_KEY and effect == GPU_TAINT_EFFECT for key, _, effect in node.taints):
        found.append(
            Problem(
                f"{where} taint {GPU_TAINT_KEY}",
                None,
                f"{GPU_TAINT_KEY}={GPU_TAINT_VALUE}:{GPU_TAINT_EFFECT}, registered by the launch template's kubelet "
                "flags: without it any pod lands on the GPU node",
                f"kubectl taint nodes {node.name} {GPU_TAINT_KEY}={GPU_TAINT_VALUE}:{GPU_TAINT_EFFECT}; check the "
                "node's launch template (--register-with-taints)",
            )
        )
    for condition in node.pressure:
        found.append(
            Problem(
                f"{where} {condition}",
                "True",
                "False: under pressure the kubelet evicts pods and the node takes no new ones",
                f"kubectl describe node {node.name}; free the resource or replace the node",
            )
        )
    if node.labels.get(GPU_PRESENT_LABEL) != "true":
        found.append(
            Problem(
                f"{where} label {GPU_PRESENT_LABEL}",
                node.labels.get(GPU_PRESENT_LABEL),
                "true, set by GPU Feature Discovery: the GPU Operator's operands and GPU DaemonSets select it",
                "check the GPU Operator's gpu-feature-discovery and node-feature-discovery pods on the node",
            )
        )
    return found


def _operand_problems(node: Node, operands: Mapping[str, set[str]] | None, expected: Sequence[str]) -> list[Problem]:
    """The GPU Operator's operands that have no Running, Ready pod on the node."""
    if operands is None:
        return []
    missing = [app for app in expected if app not in operands.get(node.name, set())]
    if not missing:
        return []
    return [
        Problem(
            f"node {node.name} GPU Operator operands",
            f"no running and ready pod of {', '.join(missing)}",
            f"one ready pod of each operand on every GPU node ({', '.join(expected)})",
            f"kubectl -n {gpu_operator.NAMESPACE} get pods -o wide --field-selector spec.nodeName={node.name}; "
            "check the ClusterPolicy's state (kubectl get clusterpolicy)",
        )
    ]


@dataclass(frozen=True)
class NodePods:
    """The pods the node checks look for on each GPU node, as read from the cluster."""

    plugin_nodes: set[str] | None = None
    """The nodes with a Running, Ready DRA kubelet-plugin pod; None when the pods could not be read."""
    operands: Mapping[str, set[str]] | None = None
    """Node -> the `app` of each GPU Operator operand Running and Ready on it; None when not read."""
    expected_operands: Sequence[str] = ()


def node_problems(node: Node, group: NodeGroupExpectation, seen: NodePods) -> list[Problem]:
    """Everything wrong with one GPU node."""
    found: list[Problem] = []
    where = f"node {node.name}"
    plugin_nodes = seen.plugin_nodes
    if not node.ready:
        found.append(Problem(where, "NotReady", "Ready", f"kubectl describe node {node.name}"))
    found += _scheduling_problems(node) + _operand_problems(node, seen.operands, seen.expected_operands)
    if not group.mode.dra:
        found.extend(_allocatable_problems(node, group))
    clique = node.labels.get(CLIQUE_LABEL, "")
    if not clique:
        found.append(
            Problem(
                f"{where} label {CLIQUE_LABEL}",
                None,
                "<ClusterUUID>.<CliqueID>, set by GPU Feature Discovery when the node's GPUs report one NVLink clique",
                "check the GPU Operator's gpu-feature-discovery pod on the node and the fabric state "
                "(nvidia-smi -q | grep -A3 Fabric)",
            )
        )
    elif split_clique(clique)[0] == NO_MNNVL_UUID:
        found.append(
            Problem(
                f"{where} label {CLIQUE_LABEL}",
                clique,
                "a non-zero ClusterUUID (all zeros means no valid multi-node NVLink domain; UNVERIFIED rule)",
                "check the NVLink fabric state of the node (nvidia-smi -q | grep -A3 Fabric)",
            )
        )
    if plugin_nodes is not None and node.name not in plugin_nodes:
        found.append(
            Problem(
                f"{where} DRA kubelet plugin",
                "no running and ready pod",
                "one ready DRA driver kubelet-plugin pod per GPU node",
                f"kubectl get pods -A -l {KUBELET_PLUGIN_SELECTOR} -o wide; check its affinity and tolerations",
            )
        )
    return found


def _describe_nodes(nodes: list[Node], group: NodeGroupExpectation, cliques: Iterable[str]) -> str:
    shown = ", ".join(sorted(set(cliques))) or "none"
    return (
        f"{len(nodes)} nodes (expected {group.nodes if not group.fleet else group.instances}), clique {shown}; "
        f"expected {group.gpus_per_node} GPUs and {group.efa_devices} EFA devices per node"
    )


def _single_ultraserver(
    group: NodeGroupExpectation, nodes: list[Node], seen: NodePods, extra: list[Problem]
) -> Verdict:
    found = list(extra)
    cliques = [n.labels[CLIQUE_LABEL] for n in nodes if n.labels.get(CLIQUE_LABEL)]
    if len(set(cliques)) > 1:
        # Each domain with its nodes: which nodes left the UltraServer's domain is what an operator acts on.
        members = {c: sorted(n.name for n in nodes if n.labels.get(CLIQUE_LABEL) == c) for c in sorted(set(cliques))}
        found.append(
            Problem(
                f"{group.name} cliques",
                Described("; ".join(f"{c}: {len(m)} node(s) {', '.join(m)}" for c, m in members.items())),
                "one clique: the nodes of one UltraServer share one NVLink domain",
                "check the capacity reservation is a single UltraServer and the nodes' fabric state",
            )
        )
    if len(nodes) != group.nodes:
        found.append(
            Problem(
                f"{group.name} nodes",
                len(nodes),
                f"{group.nodes} (the group's desired size; {group.instances} instances per UltraServer)",
                f"kubectl get nodes -l {ULTRASERVER_LABEL}={group.name}; check the node group and the capacity block",
            )
        )
    for node in nodes:
        found.extend(node_problems(node, group, seen))
    return Verdict(group.name, NODE_FACTS, _describe_nodes(nodes, group, cliques), tuple(found))


def _fleet(group: NodeGroupExpectation, nodes: list[Node], seen: NodePods, extra: list[Problem]) -> list[Verdict]:
    by_clique: dict[str, list[Node]] = defaultdict(list)
    for node in nodes:
        by_clique[node.labels.get(CLIQUE_LABEL, "")].append(node)
    verdicts = []
    for clique, members in sorted(by_clique.items()):
        found = list(extra)
        if clique and len(members) != group.instances and (group.full or len(members) > group.instances):
            found.append(
                Problem(
                    f"{group.name}/{clique} nodes",
                    len(members),
                    f"{group.instances} (the instances of one UltraServer)",
                    f"kubectl get nodes -l {CLIQUE_LABEL}={clique}; check the fleet's capacity blocks",
                )
            )
        for node in members:
            found.extend(node_problems(node, group, seen))
        name = f"{group.name}/{clique or 'no-clique'}"
        verdicts.append(
            Verdict(name, NODE_FACTS, _describe_nodes(members, group, [clique] if clique else []), tuple(found))
        )
    cliques = sorted(c for c in by_clique if c)
    fleet_found = _fleet_problems(group, nodes, cliques)
    evidence = f"{len(nodes)} nodes in {len(cliques)} cliques (expected {group.nodes} in {group.ultraservers})"
    verdicts.append(Verdict(group.name, FLEET, evidence, tuple(fleet_found)))
    return verdicts


def _fleet_problems(group: NodeGroupExpectation, nodes: list[Node], cliques: list[str]) -> list[Problem]:
    """The fleet has another number of cliques than UltraServers, or of nodes than its desired size."""
    fleet_found: list[Problem] = []
    if len(cliques) != group.ultraservers and (group.full or len(cliques) > group.ultraservers):
        fleet_found.append(
            Problem(
                f"{group.name} cliques",
                len(cliques),
                f"{group.ultraservers} (one per UltraServer of the fleet)",
                f"kubectl get nodes -l {ULTRASERVER_LABEL}={group.name} -L {CLIQUE_LABEL}",
            )
        )
    if len(nodes) != group.nodes:
        fleet_found.append(
            Problem(
                f"{group.name} nodes",
                len(nodes),
                f"{group.nodes} (the group's desired size)",
                f"kubectl get nodes -l {ULTRASERVER_LABEL}={group.name}; check the node group and the capacity blocks",
            )
        )
    return fleet_found


def node_fact_verdicts(
    group: NodeGroupExpectation,
    all_nodes: list[Node],
    plugin_pods: list[Pod] | ClusterError,
    operand_pods: list[Pod] | ClusterError | None = None,
    expected_operands: Sequence[str] = (),
) -> list[Verdict]:
    """Node facts of one node group: per UltraServer (per clique in a grouped fleet). ``operand_pods``: the GPU
    Operator's operand pods (None: not judged), each of ``expected_operands`` (their `app` label) due on every node."""
    nodes = sorted((n for n in all_nodes if n.labels.get(ULTRASERVER_LABEL) == group.name), key=lambda n: n.name)
    extra: list[Problem] = []
    plugin_nodes: set[str] | None = None
    if isinstance(plugin_pods, ClusterError):
        extra.append(api_problem("DRA kubelet plugin pods", plugin_pods))
    else:
        plugin_nodes = {p.node_name for p in plugin_pods if p.phase == "Running" and p.ready}
    operands: dict[str, set[str]] | None = None
    if isinstance(operand_pods, ClusterError):
        extra.append(api_problem("GPU Operator operand pods", operand_pods))
    elif operand_pods is not None:
        operands = {}
        for pod in operand_pods:
            if pod.phase == "Running" and pod.ready:
                operands.setdefault(pod.node_name, set()).add(pod.labels.get(gpu_operator.APP_LABEL, ""))
    seen = NodePods(plugin_nodes, operands, tuple(expected_operands))
    if group.fleet:
        return _fleet(group, nodes, seen, extra)
    return [_single_ultraserver(group, nodes, seen, extra)]


def device_class_verdict(expected: Iterable[str], present: list[str] | ClusterError) -> Verdict:
    """The DRA DeviceClasses the ComputeDomains need exist."""
    wanted = tuple(expected)
    if isinstance(present, ClusterError):
        return Verdict(CLUSTER, DEVICE_CLASSES, "DeviceClasses not readable", (api_problem("deviceclasses", present),))
    missing = [name for name in wanted if name not in present]
    found = tuple(
        Problem(
            f"DeviceClass {name}",
            None,
            f"created by the {DRA_DRIVER} chart with resources.computeDomains.enabled",
            f"check the DRA driver release: helm -n {DRA_DRIVER_NAMESPACE} status {LEGACY_DRA_DRIVER_NAME}",
        )
        for name in missing
    )
    return Verdict(CLUSTER, DEVICE_CLASSES, f"present: {', '.join(sorted(present)) or 'none'}", found)
