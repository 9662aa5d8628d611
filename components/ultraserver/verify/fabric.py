"""Fabric checks: nvbandwidth over NVLink per UltraServer, coverage of a fleet, nccl-tests over EFA across them."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

from ultraserver.builders.compute_domain import MPI_ROLE_LABEL, compute_domain_name
from ultraserver.builders.efa_check import LARGE_MESSAGE_BYTES
from ultraserver.builders.node_report import NODE_REPORT_PREFIX
from ultraserver.builders.nvbandwidth_job import TESTCASE
from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL, ULTRASERVER_LABEL
from ultraserver.problems import Described, Problem
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
from ultraserver.verify.verdict import ACROSS, COVERAGE, EFA, NODE_REPORT_LINE, NVLINK, Verdict, api_problem


@dataclass(frozen=True)
class LauncherResult:
    """The finished launcher of an MPIJob, or why there is none."""

    log: str = ""
    phase: str = ""
    problems: tuple[Problem, ...] = field(default_factory=tuple)
    pod: str = ""

    def exit_problems(self, namespace: str) -> tuple[Problem, ...]:
        """A launcher that ended Failed fails its check even when the log it left reads as healthy: mpirun's exit
        code is how a rank's error (a lost IMEX channel, a crash at teardown) reaches the launcher."""
        if self.phase != "Failed":
            return ()
        where = f"{namespace}/{self.pod}" if self.pod else namespace
        return (
            Problem(
                f"launcher {where}",
                "Failed",
                "Succeeded (mpirun exited 0)",
                f"read the end of its log and the workers' events (kubectl -n {namespace} logs {self.pod or '<pod>'}; "
                "kubectl describe pod), fix the cause, then run the check again",
            ),
        )


def launcher_labels(job: str) -> dict[str, str]:
    """The label the launcher pods of an MPIJob carry."""
    # mpi-operator v2 runs the launcher as the batch Job '<mpijob>-launcher'; the Job controller labels its pods.
    return {"job-name": f"{job}-launcher"}


def launcher_selector(job: str) -> str:
    """The label selector of an MPIJob's launcher pods."""
    return ",".join(f"{k}={v}" for k, v in launcher_labels(job).items())


def read_launcher(reader: ClusterReader, namespace: str, job: str, domain: bool = False) -> LauncherResult:
    """Log of the MPIJob's newest launcher pod once it has finished; ``domain``: its workers join the job's
    ComputeDomain, which a launcher that never came may be waiting for."""
    selector = launcher_selector(job)
    try:
        pods = reader.pods(namespace, selector)
    except ClusterError as err:
        return LauncherResult(problems=(api_problem(f"launcher pods of {job}", err),))
    stuck = _stuck_workers(reader, namespace, job) if domain and not pods else ()
    if stuck:
        return LauncherResult(problems=stuck)
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
        return LauncherResult(phase=newest.phase, problems=(api_problem(f"log of {newest.name}", err),))
    return LauncherResult(log=log, phase=newest.phase, pod=newest.name)


def _stuck_workers(reader: ClusterReader, namespace: str, job: str) -> tuple[Problem, ...]:
    """Without a launcher: workers that wait in ContainerCreating wait for their IMEX channel. The DRA driver
    (v0.4.1, as issue 44 describes it; its kubelet plugin's code was not read here: UNVERIFIED) prepares a
    ComputeDomain channel claim only once the domain's IMEX daemons are ready, and mpi-operator starts the launcher
    only once every worker is Ready (launcherCreationPolicy WaitForWorkersReady): so the cause is the ComputeDomain,
    not a missing check. () when no worker waits (or they cannot be read: the launcher's problem stands)."""
    try:
        # mpi-operator v2 names a job's workers <job>-worker-<index> (UNVERIFIED at the pinned tag: not read here).
        workers = [p for p in reader.pods(namespace, f"{MPI_ROLE_LABEL}=worker") if p.name.startswith(f"{job}-worker-")]
    except ClusterError:
        return ()
    waiting = sorted((p for p in workers if p.phase == "Pending" and p.waiting == "ContainerCreating"), key=_name)
    if not waiting:
        return ()
    domain = compute_domain_name(job)
    nodes = ", ".join(sorted({p.node_name for p in waiting if p.node_name})) or "none yet"
    return (
        Problem(
            f"ComputeDomain {namespace}/{domain}",
            Described(
                f"not ready: {len(waiting)} of {len(workers)} worker(s) of MPIJob {job} wait in ContainerCreating "
                f"for its IMEX channel (nodes {nodes}), so no launcher was started"
            ),
            "the ComputeDomain's IMEX daemon Ready on every worker's node, then the workers start and the launcher "
            "runs",
            f"kubectl -n {namespace} describe computedomain {domain} (status.nodes: which IMEX daemon is not ready); "
            f"kubectl -n {namespace} describe pod {waiting[0].name} (the channel claim's events); read the IMEX "
            "daemon's log on those nodes and check the host nvidia-imex service is masked (docs/node-image.md)",
        ),
    )


def _name(pod: Pod) -> str:
    return pod.name


def reported_nodes(log_text: str) -> list[str]:
    """Nodes the launcher's node report names (one line per worker, before the nvbandwidth run)."""
    return sorted(set(NODE_REPORT_LINE.findall(log_text)))


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
    launcher = read_launcher(reader, namespace, job, domain=True)
    if launcher.problems:
        return Verdict(ultraserver, NVLINK, f"MPIJob {job}: no finished run to judge", launcher.problems)
    verdict = judge_nvbandwidth(launcher, namespace, job, ultraserver, threshold_gbps, gpus_per_node)
    nodes = reported_nodes(launcher.log)
    cliques = tuple(sorted({(node_cliques or {}).get(n, "") for n in nodes} - {""}))
    extra = list(launcher.exit_problems(namespace))
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


def judge_nvbandwidth(
    launcher: LauncherResult, namespace: str, job: str, ultraserver: str, threshold_gbps: float, gpus_per_node: int
) -> Verdict:
    """The NVLink verdict of one nvbandwidth log (a launcher's, or a user's file with ``verify --from-file``)."""
    tail = log_tail(launcher.log)
    try:
        matrix = parse_bandwidth_matrix(launcher.log)
    except BandwidthOutputError as err:
        why = diagnose(launcher.log, namespace)
        return Verdict(
            ultraserver,
            NVLINK,
            f"MPIJob {job} (launcher {launcher.phase}): {why.reason}",
            (
                Problem(
                    f"MPIJob {job}",
                    Described(f"{err.where}: {err.found}"),
                    f"a bandwidth matrix ({err.expected})",
                    why.fix,
                ),
            ),
            tail,
        )
    found: list[Problem] = []
    if matrix.testcase not in (None, TESTCASE):
        found.append(Problem(f"MPIJob {job} testcase", matrix.testcase, TESTCASE, "run the multi-node read testcase"))
    result = check_bandwidth(matrix, threshold_gbps, gpus_per_node)
    found.extend(dataclasses.replace(p, key=f"MPIJob {job}") for p in result.problems)
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


def efa_findings(log: str, job: str, min_bus_bandwidth_gbps: float) -> tuple[list[Problem], str]:
    """The problems and evidence of one nccl-tests all_reduce_perf log (cluster run or a user's file)."""
    judgement = judge_efa(parse_nccl_output(log), min_bus_bandwidth_gbps, LARGE_MESSAGE_BYTES)
    found = [Problem(f"MPIJob {job} {key}", value, allowed, fix) for key, value, allowed, fix in judgement.findings]
    return found, judgement.evidence


def efa_verdict(reader: ClusterReader, expected: StackExpectation, node_cliques: Mapping[str, str]) -> Verdict:
    """The cross-UltraServer nccl-tests run: over enough cliques, EFA used, no wrong values, bandwidth at threshold."""
    job, namespace = expected.efa_job, expected.efa_namespace
    launcher = read_launcher(reader, namespace, job)
    if launcher.problems:
        return Verdict(ACROSS, EFA, f"MPIJob {job}: no finished run to judge", launcher.problems)
    found, judged = efa_findings(launcher.log, job, expected.efa_min_bus_bandwidth_gbps)
    found.extend(launcher.exit_problems(namespace))
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
    return Verdict(ACROSS, EFA, evidence + judged, tuple(found), log_tail(launcher.log) if found else (), cliques)
