"""The checks of ``ultraserver verify``: one verdict per UltraServer and per check, with evidence and a fix.

A failed check carries ``Problem``s (which node or job, what was found, what is expected, the fix). A check that
could not read what it needs fails too, with the API error as evidence: nothing is ever skipped as "passed".
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ultraserver.builders.efa_check import LARGE_MESSAGE_BYTES
from ultraserver.builders.node_report import NODE_REPORT_PREFIX
from ultraserver.builders.nvbandwidth_job import TESTCASE
from ultraserver.facts.dra import KUBELET_PLUGIN_SELECTOR
from ultraserver.facts.scheduling import CLIQUE_LABEL, ULTRASERVER_LABEL
from ultraserver.problems import Problem, blocking
from ultraserver.verify.clients import ClusterError, ClusterReader, Node, Pod
from ultraserver.verify.expect import NodeGroupExpectation, StackExpectation
from ultraserver.verify.nccl import judge_efa, parse_nccl_output
from ultraserver.verify.nvbandwidth import (
    BandwidthOutputError,
    check_bandwidth,
    diagnose,
    log_tail,
    parse_bandwidth_matrix,
)

CLUSTER, ACROSS = "cluster", "across-ultraservers"
NODE_FACTS, DEVICE_CLASSES, NVLINK, FLEET, EFA = "node-facts", "dra-device-classes", "nvlink", "ultraservers", "efa"
COVERAGE = "nvlink-coverage"
_NODE_REPORT = re.compile(rf"^{re.escape(NODE_REPORT_PREFIX)}(\S+)\s*$", re.M)
GPU_RESOURCE, EFA_RESOURCE = "nvidia.com/gpu", "vpc.amazonaws.com/efa"
_NO_MNNVL_UUID = "00000000-0000-0000-0000-000000000000"


@dataclass(frozen=True)
class Verdict:
    """The outcome of one check on one UltraServer (or on the cluster)."""

    ultraserver: str
    """Node group name, '<group>/<clique>' or '<group>#<n>' inside a grouped fleet, or 'cluster'."""
    check: str
    """node-facts, ultraservers, dra-device-classes, nvlink or efa."""
    evidence: str
    """What was measured or read."""
    problems: tuple[Problem, ...] = ()
    """What is wrong; errors fail the check."""
    log_tail: tuple[str, ...] = ()
    """Last lines of the job log the verdict was read from (for failures)."""
    cliques: tuple[str, ...] = ()
    """NVLink cliques a job's workers ran on, as its launcher reported them (nvlink checks)."""

    @property
    def passed(self) -> bool:
        """No error-level problem."""
        return not blocking(self.problems)

    def to_json(self) -> dict[str, Any]:
        """The verdict as plain JSON data."""
        return {
            "ultraserver": self.ultraserver,
            "check": self.check,
            "verdict": "PASSED" if self.passed else "FAILED",
            "evidence": self.evidence,
            "problems": [
                {"key": p.key, "value": p.value, "allowed": p.allowed, "fix": p.fix, "level": p.level}
                for p in self.problems
            ],
            "logTail": list(self.log_tail),
            "cliques": list(self.cliques),
        }


def _api_problem(what: str, err: ClusterError) -> Problem:
    return Problem(
        what,
        str(err),
        "a reachable Kubernetes API that answers the read",
        "check --kubeconfig, network access to the endpoint (a private endpoint needs a path into the VPC) and "
        "credentials: kubectl --kubeconfig <file> get nodes",
    )


def split_clique(value: str) -> tuple[str, str]:
    """(ClusterUUID, CliqueID) of an nvidia.com/gpu.clique value (GFD writes '<ClusterUUID>.<CliqueID>')."""
    uuid, _, clique = value.rpartition(".")
    return uuid, clique


def _quantity(node: Node, resource: str) -> str:
    return node.allocatable.get(resource, "0")


def node_problems(node: Node, group: NodeGroupExpectation, plugin_nodes: set[str] | None) -> list[Problem]:
    """Everything wrong with one GPU node; `plugin_nodes` None when the plugin pods could not be read."""
    found: list[Problem] = []
    where = f"node {node.name}"
    if not node.ready:
        found.append(Problem(where, "NotReady", "Ready", f"kubectl describe node {node.name}"))
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
    elif split_clique(clique)[0] == _NO_MNNVL_UUID:
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
                "one ready nvidia-dra-driver-gpu kubelet-plugin pod per GPU node",
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
    group: NodeGroupExpectation, nodes: list[Node], plugin_nodes: set[str] | None, extra: list[Problem]
) -> Verdict:
    found = list(extra)
    cliques = [n.labels[CLIQUE_LABEL] for n in nodes if n.labels.get(CLIQUE_LABEL)]
    if len(set(cliques)) > 1:
        found.append(
            Problem(
                f"{group.name} cliques",
                sorted(set(cliques)),
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
        found.extend(node_problems(node, group, plugin_nodes))
    return Verdict(group.name, NODE_FACTS, _describe_nodes(nodes, group, cliques), tuple(found))


def _fleet(
    group: NodeGroupExpectation, nodes: list[Node], plugin_nodes: set[str] | None, extra: list[Problem]
) -> list[Verdict]:
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
            found.extend(node_problems(node, group, plugin_nodes))
        name = f"{group.name}/{clique or 'no-clique'}"
        verdicts.append(
            Verdict(name, NODE_FACTS, _describe_nodes(members, group, [clique] if clique else []), tuple(found))
        )
    cliques = sorted(c for c in by_clique if c)
    fleet_found = []
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
    evidence = f"{len(nodes)} nodes in {len(cliques)} cliques (expected {group.nodes} in {group.ultraservers})"
    verdicts.append(Verdict(group.name, FLEET, evidence, tuple(fleet_found)))
    return verdicts


def node_fact_verdicts(
    group: NodeGroupExpectation, all_nodes: list[Node], plugin_pods: list[Pod] | ClusterError
) -> list[Verdict]:
    """Node facts of one node group: per UltraServer (per clique in a grouped fleet)."""
    nodes = sorted((n for n in all_nodes if n.labels.get(ULTRASERVER_LABEL) == group.name), key=lambda n: n.name)
    extra: list[Problem] = []
    plugin_nodes: set[str] | None = None
    if isinstance(plugin_pods, ClusterError):
        extra.append(_api_problem("DRA kubelet plugin pods", plugin_pods))
    else:
        plugin_nodes = {p.node_name for p in plugin_pods if p.phase == "Running" and p.ready}
    if group.fleet:
        return _fleet(group, nodes, plugin_nodes, extra)
    return [_single_ultraserver(group, nodes, plugin_nodes, extra)]


def device_class_verdict(expected: Iterable[str], present: list[str] | ClusterError) -> Verdict:
    """The DRA DeviceClasses the ComputeDomains need exist."""
    wanted = tuple(expected)
    if isinstance(present, ClusterError):
        return Verdict(CLUSTER, DEVICE_CLASSES, "DeviceClasses not readable", (_api_problem("deviceclasses", present),))
    missing = [name for name in wanted if name not in present]
    found = tuple(
        Problem(
            f"DeviceClass {name}",
            None,
            "created by the nvidia-dra-driver-gpu chart with resources.computeDomains.enabled",
            "check the DRA driver release: helm -n nvidia-dra-driver-gpu status nvidia-dra-driver-gpu",
        )
        for name in missing
    )
    return Verdict(CLUSTER, DEVICE_CLASSES, f"present: {', '.join(sorted(present)) or 'none'}", found)


@dataclass(frozen=True)
class LauncherResult:
    """The finished launcher of an MPIJob, or why there is none."""

    log: str = ""
    phase: str = ""
    problems: tuple[Problem, ...] = field(default_factory=tuple)


def read_launcher(reader: ClusterReader, namespace: str, job: str) -> LauncherResult:
    """Log of the MPIJob's newest launcher pod once it has finished."""
    # mpi-operator v2 runs the launcher as the batch Job '<mpijob>-launcher'; the Job controller labels its pods.
    selector = f"job-name={job}-launcher"
    try:
        pods = reader.pods(namespace, selector)
    except ClusterError as err:
        return LauncherResult(problems=(_api_problem(f"launcher pods of {job}", err),))
    if not pods:
        return LauncherResult(
            problems=(
                Problem(
                    f"MPIJob {namespace}/{job}",
                    "no launcher pod",
                    f"a launcher pod labelled {selector}",
                    f"kubectl -n {namespace} get mpijob {job}; pulumi up (re)creates the check",
                ),
            )
        )
    newest = max(pods, key=lambda p: p.created)
    if newest.phase not in ("Succeeded", "Failed"):
        return LauncherResult(
            phase=newest.phase,
            problems=(
                Problem(
                    f"launcher {namespace}/{newest.name}",
                    newest.phase,
                    "Succeeded or Failed (a finished run)",
                    f"wait for the run to finish (kubectl -n {namespace} get pods -l {selector} -w), then verify again",
                ),
            ),
        )
    try:
        log = reader.pod_log(namespace, newest.name)
    except ClusterError as err:
        return LauncherResult(phase=newest.phase, problems=(_api_problem(f"log of {newest.name}", err),))
    return LauncherResult(log=log, phase=newest.phase)


def reported_nodes(log_text: str) -> list[str]:
    """Nodes the launcher's node report names (one line per worker, before the nvbandwidth run)."""
    return sorted(set(_NODE_REPORT.findall(log_text)))


def nvlink_verdict(
    reader: ClusterReader,
    namespace: str,
    job: str,
    ultraserver: str,
    threshold_gbps: float,
    gpus_per_node: int,
    node_cliques: Mapping[str, str] | None = None,
) -> Verdict:
    """One UltraServer's nvbandwidth run, judged from its launcher log (`node_cliques`: node name -> clique)."""
    launcher = read_launcher(reader, namespace, job)
    if launcher.problems:
        return Verdict(ultraserver, NVLINK, f"MPIJob {job}: no finished run to judge", launcher.problems)
    verdict = _judge_nvbandwidth(launcher, namespace, job, ultraserver, threshold_gbps, gpus_per_node)
    nodes = reported_nodes(launcher.log)
    cliques = tuple(sorted({(node_cliques or {}).get(n, "") for n in nodes} - {""}))
    extra: list[Problem] = []
    if len(cliques) > 1:
        extra.append(
            Problem(
                f"MPIJob {job} cliques",
                list(cliques),
                "one clique: the job's workers must share one NVLink domain",
                "check the clique pod affinity of the job's workers and the nodes' clique labels",
            )
        )
    where = f"; ran on {len(nodes)} nodes of clique {', '.join(cliques) or 'unknown'}" if nodes else ""
    return dataclasses.replace(
        verdict, evidence=verdict.evidence + where, problems=verdict.problems + tuple(extra), cliques=cliques
    )


def _judge_nvbandwidth(
    launcher: LauncherResult, namespace: str, job: str, ultraserver: str, threshold_gbps: float, gpus_per_node: int
) -> Verdict:
    tail = log_tail(launcher.log)
    try:
        matrix = parse_bandwidth_matrix(launcher.log)
    except BandwidthOutputError as err:
        why = diagnose(launcher.log, namespace)
        return Verdict(
            ultraserver,
            NVLINK,
            f"MPIJob {job} (launcher {launcher.phase}): {why.reason}",
            (Problem(f"MPIJob {job}", str(err).split("; the log ends with")[0], "a bandwidth matrix", why.fix),),
            tail,
        )
    found: list[Problem] = []
    if matrix.testcase not in (None, TESTCASE):
        found.append(Problem(f"MPIJob {job} testcase", matrix.testcase, TESTCASE, "run the multi-node read testcase"))
    result = check_bandwidth(matrix, threshold_gbps, gpus_per_node)
    found.extend(
        Problem(f"MPIJob {job}", p, "a matrix over at least two whole nodes", "rerun with nodes >= 2")
        for p in result.problems
    )
    for link in result.failures[:8]:
        found.append(
            Problem(
                f"MPIJob {job} GPU{link.source}->GPU{link.target}",
                "N/A" if link.gbps is None else f"{link.gbps:.2f} GB/s",
                f">= {threshold_gbps:.2f} GB/s",
                "check the NVLink health of both nodes (nvidia-smi nvlink -s; XID 74 in dmesg) and replace a bad node",
            )
        )
    if len(result.failures) > 8:
        found.append(Problem(f"MPIJob {job}", f"{len(result.failures) - 8} more slow pairs", "none", "see above"))
    return Verdict(
        ultraserver,
        NVLINK,
        f"MPIJob {job} (launcher {launcher.phase}): {result.summary()}",
        tuple(found),
        () if not found else tail,
    )


def coverage_verdict(group: NodeGroupExpectation, jobs: list[Verdict], fleet_cliques: set[str]) -> Verdict:
    """Every UltraServer of a grouped fleet was tested by one of its jobs.

    The jobs avoid each other's cliques only while their workers run; a job scheduled after another finished may
    land on an UltraServer already tested, leaving another untested. This check makes that visible.
    """
    covered = {c for v in jobs for c in v.cliques}
    found = [
        Problem(
            f"{group.name}/{clique}",
            "no nvbandwidth job ran here",
            "one job per UltraServer of the fleet",
            "rerun the fleet's jobs together (delete its MPIJobs, then pulumi up recreates them)",
        )
        for clique in sorted(fleet_cliques - covered)
    ]
    found += [
        Problem(
            v.ultraserver,
            "no node report in the launcher log",
            f"lines starting '{NODE_REPORT_PREFIX.strip()}'",
            "the job predates the node report or its workers could not write it: rerun the check",
        )
        for v in jobs
        if not v.cliques and v.problems == ()
    ]
    evidence = f"{len(covered & fleet_cliques)} of {len(fleet_cliques)} UltraServers tested by {len(jobs)} jobs"
    return Verdict(group.name, COVERAGE, evidence, tuple(found))


def nvlink_verdicts(reader: ClusterReader, expected: StackExpectation, nodes: list[Node]) -> list[Verdict]:
    """One nvbandwidth verdict per UltraServer that has a job; a failure never stops the others.

    Inside a grouped fleet a job's verdict is named after the clique it ran on, and a coverage verdict says
    whether every UltraServer of the fleet was tested.
    """
    node_cliques = {n.name: n.labels.get(CLIQUE_LABEL, "") for n in nodes}
    verdicts = []
    for group in expected.groups:
        jobs = []
        for index, job in enumerate(group.nvlink_jobs, start=1):
            name = group.name if len(group.nvlink_jobs) == 1 else f"{group.name}#{index}"
            verdict = nvlink_verdict(
                reader,
                expected.imex_namespace,
                job,
                name,
                expected.nvlink_threshold_gbps,
                group.gpus_per_node,
                node_cliques,
            )
            if group.fleet and len(verdict.cliques) == 1:
                verdict = dataclasses.replace(verdict, ultraserver=f"{group.name}/{verdict.cliques[0]}")
            jobs.append(verdict)
        verdicts += jobs
        if group.fleet and jobs:
            members = {node_cliques[n.name] for n in nodes if n.labels.get(ULTRASERVER_LABEL) == group.name} - {""}
            verdicts.append(coverage_verdict(group, jobs, members))
    return verdicts


def efa_verdict(reader: ClusterReader, expected: StackExpectation, node_cliques: Mapping[str, str]) -> Verdict:
    """The cross-UltraServer nccl-tests run: over enough cliques, EFA used, no wrong values, bandwidth at threshold."""
    job, namespace = expected.efa_job, expected.efa_namespace
    launcher = read_launcher(reader, namespace, job)
    if launcher.problems:
        return Verdict(ACROSS, EFA, f"MPIJob {job}: no finished run to judge", launcher.problems)
    judgement = judge_efa(parse_nccl_output(launcher.log), expected.efa_min_bus_bandwidth_gbps, LARGE_MESSAGE_BYTES)
    found = [Problem(f"MPIJob {job} {key}", value, allowed, fix) for key, value, allowed, fix in judgement.findings]
    nodes = reported_nodes(launcher.log)
    cliques = tuple(sorted({node_cliques.get(n, "") for n in nodes} - {""}))
    if len(cliques) < expected.efa_ultraservers:
        found.append(
            Problem(
                f"MPIJob {job} UltraServers",
                f"{len(cliques)} cliques from {len(nodes)} reported nodes",
                f"at least {expected.efa_ultraservers} cliques (EFA carries traffic only between UltraServers)",
                "check the workers' topology spread on nvidia.com/gpu.clique and rerun the check",
            )
        )
    evidence = f"MPIJob {job} over {len(cliques)} UltraServers (launcher {launcher.phase}): "
    return Verdict(
        ACROSS, EFA, evidence + judgement.evidence, tuple(found), log_tail(launcher.log) if found else (), cliques
    )


def _read(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except ClusterError as err:
        return err


def planned_checks(expected: StackExpectation) -> list[tuple[str, str]]:
    """(UltraServer, check) pairs a run judges, as known before reading the cluster."""
    pairs = [(CLUSTER, DEVICE_CLASSES)]
    for group in expected.groups:
        pairs.append((group.name, FLEET if group.fleet else NODE_FACTS))
        for index, _ in enumerate(group.nvlink_jobs, start=1):
            pairs.append((group.name if len(group.nvlink_jobs) == 1 else f"{group.name}#{index}", NVLINK))
        if group.fleet and group.nvlink_jobs:
            pairs.append((group.name, COVERAGE))
    if expected.efa_job:
        pairs.append((ACROSS, EFA))
    return pairs


def run_checks(reader: ClusterReader, expected: StackExpectation, node_facts_only: bool = False) -> list[Verdict]:
    """Every check of the stack. When the API cannot even list nodes, each planned check fails with that error."""
    try:
        nodes = reader.nodes()
    except ClusterError as err:
        problem = _api_problem("nodes", err)
        return [
            Verdict(u, c, "not judged: the Kubernetes API did not answer", (problem,))
            for u, c in planned_checks(expected)
        ]
    plugin_pods = _read(lambda: reader.pods(expected.dra_namespace, KUBELET_PLUGIN_SELECTOR))
    verdicts = [device_class_verdict(expected.device_classes, _read(reader.device_classes))]
    for group in expected.groups:
        verdicts.extend(node_fact_verdicts(group, nodes, plugin_pods))
    if not node_facts_only:
        verdicts.extend(nvlink_verdicts(reader, expected, nodes))
        if expected.efa_job:
            verdicts.append(efa_verdict(reader, expected, {n.name: n.labels.get(CLIQUE_LABEL, "") for n in nodes}))
    return verdicts


def exit_code(verdicts: Iterable[Verdict]) -> int:
    """0 when every check passed, 1 otherwise."""
    return 0 if all(v.passed for v in verdicts) else 1
