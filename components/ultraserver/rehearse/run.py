"""One rehearsal: plan the stack, serve its cluster at a moment, inject the faults, run the day-2 code against it.

The day-2 code runs unchanged, as it runs against a real cluster: ``verify`` reads the API through a kubeconfig
written to a temporary directory and the official Kubernetes client over HTTP; the drift check's and the drain's
scripts connect as in their pods, through a service account (token, ca.crt, KUBERNETES_SERVICE_HOST/PORT) to the
API over HTTPS (rehearse/tls.py), the drift check judging the nodes against the EXPECTED its CronJob carries in the
plan; ``status``'s cluster side sums up each UltraServer from the same nodes.
"""

from __future__ import annotations

import io
import json
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

from ultraserver import clock
from ultraserver.config.settings import Settings
from ultraserver.facts.kubernetes.kueue import API_GROUP as KUEUE_GROUP
from ultraserver.facts.kubernetes.scheduling import system_node_labels
from ultraserver.incluster import drain, drain_main, drift
from ultraserver.offline.engine import Plan, run_plan
from ultraserver.offline.helm_template import release_inputs
from ultraserver.offline.project import LAYER_PROJECT
from ultraserver.offline.resource import HELM_RELEASE, LAUNCH_TEMPLATE
from ultraserver.problems import ConfigError
from ultraserver.rehearse import jobs, node_failure
from ultraserver.rehearse.acceptance import acceptance_stage
from ultraserver.rehearse.apis import EMULATED, REAL, Api, guarded, open_api, refusal_stage, script_account
from ultraserver.rehearse.charted import from_rendered, from_values
from ultraserver.rehearse.cloud import cloud_of
from ultraserver.rehearse.cluster import Cluster, cronjob_env, gpu_nodes, plugin_pods, system_nodes
from ultraserver.rehearse.extension import extension_response
from ultraserver.rehearse.faults import Injected, inject
from ultraserver.rehearse.real_replacement import real_failure_stage
from ultraserver.rehearse.reboot import reboot_response
from ultraserver.rehearse.reclaim import (
    drain_inputs,
    drain_stage,
    forbidden_response,
    job_objects,
    no_nodes_response,
    reclaim_response,
)
from ultraserver.rehearse.registration import registrations
from ultraserver.rehearse.scheduling import admission_stage
from ultraserver.rehearse.stage import Stage
from ultraserver.rehearse.topology import levels_of, topology_stage
from ultraserver.status.cluster import read_cluster
from ultraserver.verify.checks import exit_code, judge_cluster
from ultraserver.verify.clients import connect
from ultraserver.verify.expect import StackExpectation, expectation
from ultraserver.verify.report import format_verdicts, not_checked

RESPONSES = {
    "reclaim": reclaim_response,
    "extend-late": extension_response,
    "drain-forbidden": forbidden_response,
    "no-nodes": no_nodes_response,
    "gpu-fails": reboot_response,
}
"""The faults the toolkit must handle rather than name, each with the stage that judges its response."""

AFTER_WINDOW_OPENS = timedelta(hours=1)
"""The default moment: an hour into the first block's full-size window, when every node has joined."""


@dataclass
class Rehearsal:
    """What a rehearsal served, broke and found."""

    stack: str
    at: datetime
    url: str = ""
    in_cluster_url: str = ""
    """Where the in-cluster scripts reached the API (HTTPS, rehearse/tls.py)."""
    in_cluster: list[tuple[str, str, bool]] = field(default_factory=list)
    """Their requests: method, path, whether each carried the service account's token."""
    served: list[str] = field(default_factory=list)
    injected: list[Injected] = field(default_factory=list)
    stages: list[Stage] = field(default_factory=list)
    api: Api | None = None
    """The API the cluster was served on (emulated or real, its /version)."""
    placements: list[Any] = field(default_factory=list)
    """With real scheduling and admission: each workload Kueue saw, its nodes and pods (rehearse/scheduling.py)."""
    deployment: Any = None
    """With --deploy: what the real Pulumi engine did (rehearse/deploy.py Deployment)."""

    @property
    def failures(self) -> str:
        """The output of every stage that failed."""
        return "\n".join(s.output for s in self.stages if s.code)

    def detected(self, injected: Injected) -> bool:
        """Whether the toolkit responded as it must: for a fault the checks must name, a failing stage names the
        fault's node; for an event the toolkit must handle (the
        drain's faults, node-fails), its response stage passed: judged from what the in-cluster programs left in the
        API and in AWS."""
        if injected.fault == "node-fails":
            # The replay's stage and, on the real programs, the real Kueue's: each must pass.
            found = [s for s in self.stages if s.name.startswith("node failure")]
            return bool(found) and not any(s.code for s in found) and any(injected.group in s.output for s in found)
        if injected.fault in RESPONSES:
            return any(s.name == f"response to {injected.fault}" and not s.code for s in self.stages)
        # A node fault is named only by its node: a group's name alone does not tell an operator which node to see.
        return injected.subject in self.failures

    @staticmethod
    def names(text: str, injected: Injected) -> bool:
        """Whether ``text`` names the fault's node or node group."""
        return injected.subject in text or bool(injected.group and injected.group in text)

    @property
    def unexplained(self) -> list[Stage]:
        """Failing stages that name no injected fault: with faults injected, something else went wrong."""
        return [s for s in self.stages if s.code and not any(self.names(s.output, i) for i in self.injected)]

    @property
    def code(self) -> int:
        """Without faults, the worst exit code of the day-2 code. With faults, 0 exactly when the toolkit responded
        to each as it must (``detected``) and every failing stage is one of those responses (it names a fault's node
        or group); 1 otherwise, and always when a fault went unnoticed."""
        worst = max((s.code for s in self.stages), default=0)
        if not self.injected:
            return worst
        if any(not self.detected(i) for i in self.injected) or self.unexplained:
            return max(worst, 1)
        return 0


def default_moment(expected: StackExpectation) -> datetime:
    """An hour into the first full-size window of any group; the clock's time for stacks without windows."""
    opens = sorted(w[0] for g in expected.groups for w in g.windows)
    if not opens:
        return clock.now()
    return datetime.fromisoformat(opens[0].replace("Z", "+00:00")) + AFTER_WINDOW_OPENS


def plan_objects(plan: Plan) -> list[dict[str, Any]]:
    """The toolkit's own Kubernetes objects, as the plan declares them (Helm releases and YAML groups aside)."""
    found = []
    for resource in plan.resources:
        inputs = resource.inputs
        if resource.type.startswith("kubernetes:") and {"apiVersion", "kind"} <= set(inputs):
            if isinstance((inputs.get("metadata") or {}).get("name"), str):
                found.append(inputs)
    return found


def drift_expected(objects: Sequence[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The EXPECTED node groups the drift CronJob of the plan carries; None when the stack deploys none."""
    env = cronjob_env(objects, "EXPECTED")
    return None if env is None else list(json.loads(env["EXPECTED"]))


def build(settings: Settings, plan: Plan, at: datetime, faults: Sequence[str]) -> tuple[Cluster, list[Injected]]:
    """The cluster at ``at`` with the faults injected; ConfigError when a fault is unknown or cannot show."""
    expected = expectation(settings)
    cluster = Cluster(expected, at, objects=plan_objects(plan))
    cluster.releases = [r.inputs for r in plan.of_type(HELM_RELEASE)]
    cluster.gpu_nodes = gpu_nodes(settings, expected, registrations(plan.of_type(LAUNCH_TEMPLATE)), at)
    system = settings.system_node_group
    cluster.system_nodes = system_nodes(system.desired_size if system else 0, system_node_labels(), at)
    # What the charts install, by their rules over the plan's values (rehearse/charted.py), never what verify
    # expects.
    charted = from_values(release_inputs(plan))
    cluster.objects += charted.device_class_objects()
    cluster.kubelet_plugin = charted.kubelet_plugin
    inputs = drain_inputs(cluster.objects)
    if inputs is not None:
        serving = Counter(n.group.name for n in cluster.gpu_nodes)
        cluster.cloud = cloud_of(plan, inputs.blocks, serving, at)
    injected, problems = inject(cluster, list(faults))
    if problems:
        raise ConfigError(problems)
    return cluster, injected


def _thresholds(expected: StackExpectation) -> dict[str, float]:
    found = {job: expected.nccl_min_bus_bandwidth_gbytes for _, job in expected.nccl_jobs}
    if expected.efa_job:
        # The stack's EFA threshold is in Gbit/s; all_reduce_perf prints GB/s.
        found[expected.efa_job] = expected.efa_min_bus_bandwidth_gbps / 8
    return found


def serve(emulator: Any, cluster: Cluster, runs: list[jobs.Run]) -> list[str]:
    """Put the cluster into the API (the Emulator or a RealApi); one line per kind of thing served."""
    nodes = [n.to_api() for n in cluster.gpu_nodes]
    slices = [s for n in cluster.gpu_nodes for s in n.slices()]
    pods = plugin_pods(cluster, cluster.releases)
    launchers = [r.launcher for r in runs if r.launcher is not None]
    stuck = [w for r in runs for w in r.stuck_workers]
    # Kueue's CRDs come with its chart: its Workloads are listed (empty: no workload is submitted) beside the
    # queues and flavors the plan declares.
    kueue = {o["apiVersion"] for o in cluster.objects if o["apiVersion"].startswith(f"{KUEUE_GROUP}/")}
    emulator.serve(f"{version}/workloads" for version in kueue)
    emulator.put([*nodes, *cluster.system_nodes, *slices, *pods, *cluster.objects, *launchers, *stuck])
    for run in runs:
        if run.launcher is not None:
            emulator.set_log(run.namespace, run.launcher["metadata"]["name"], run.log)
    groups = len({n.group.name for n in cluster.gpu_nodes})
    return [
        f"{len(nodes)} GPU nodes in {groups} node group(s), {len(cluster.system_nodes)} system nodes",
        f"{len(slices)} ResourceSlices, {len(pods)} plugin pods",
        f"{len(cluster.objects)} objects of the plan",
        f"{len(launchers)} finished check run(s) of {len(runs)} MPIJob(s), with their launcher logs",
    ]


def verify_stage(kubeconfig: Path, expected: StackExpectation, at: datetime) -> Stage:
    """``ultraserver verify --now at`` as the command runs it: connect through the kubeconfig, every check, the
    block-start acceptance, its report."""
    verdicts, accepted = judge_cluster(connect(str(kubeconfig)), expected, at)
    text = format_verdicts(verdicts, not_checked(expected), accepted)
    return Stage("verify", exit_code(verdicts), text, tuple(verdicts))


def drift_stage(account: Path, env: dict[str, str], groups: list[dict[str, Any]], at: datetime) -> Stage:
    """The drift CronJob's script at ``at``, listing the nodes through the service account in ``account`` and the
    pod's ``env``, as it does in its pod."""
    out = io.StringIO()
    with redirect_stdout(out):
        code = drift.check(groups, at, lambda: drift.list_nodes(*drift.in_cluster(str(account), env)))
    return Stage("drift check", code, out.getvalue().rstrip())


def status_stage(kubeconfig: Path, expected: StackExpectation, at: datetime | None = None) -> Stage:
    """``status``'s cluster side of each UltraServer (the AWS side needs EC2, which a rehearsal has not)."""
    sides, unread = read_cluster(connect(str(kubeconfig)), expected.groups, now=at)
    if sides is None:
        return Stage("status (cluster side)", 1, f"status: cluster API unreachable: {unread}")
    lines = []
    for group in expected.groups:
        side = sides[group.name]
        short = f"; short of EFA: {', '.join(side.short_efa)}" if side.short_efa else ""
        lines.append(
            f"{group.name}: {side.ready}/{side.nodes} nodes Ready, {side.gpus} GPUs and {side.efa} EFA devices "
            f"on them, cliques {', '.join(side.cliques) or 'none'}{short}"
        )
        if side.spares is not None:
            lines += side.spares.lines()
    return Stage("status (cluster side)", 0, "\n".join(lines), judged=False)


def stack_plan(project_dir: Path, stack: str, settings: Settings, moment: datetime) -> Plan:
    """The stack's plan at ``moment``, with its kubernetes-layer/ project's objects for a separate-stack layer."""
    with clock.pinned(moment):
        plan = run_plan(project_dir, stack, now=moment)
        if settings.kubernetes.layer == "separate-stack":
            # The Kubernetes objects are declared by the kubernetes-layer/ project of the same stack.
            plan = plan.joined(run_plan(project_dir / LAYER_PROJECT, stack, now=moment))
    return plan


def rehearse(
    project_dir: Path,
    stack: str,
    settings: Settings,
    faults: Sequence[str],
    at: datetime | None,
    plan: Plan | None = None,
    api: str = EMULATED,
    extra: Sequence[dict[str, Any]] = (),
    admission: bool = True,
) -> Rehearsal:
    """Plan (unless given the plan at that moment), serve on ``api`` (with the ``extra`` objects first: the
    rendered charts' and CRDs, on a real API server), break, run; on a real API server then (unless ``admission``
    is False) real scheduling and admission (rehearse/scheduling.py). ConfigError for a fault the stack cannot show
    or a control plane that cannot start."""
    moment = at or default_moment(expectation(settings))
    plan = plan or stack_plan(project_dir, stack, settings, moment)
    cluster, injected = build(settings, plan, moment, faults)
    mpijobs = [o for o in cluster.objects if o["kind"] == "MPIJob"]
    faults_of_runs = injected[-1].runs if injected else jobs.RunFaults()
    runs = jobs.runs(cluster, mpijobs, _thresholds(cluster.expected), faults_of_runs)
    result = Rehearsal(stack, moment, injected=injected)
    with (
        tempfile.TemporaryDirectory(prefix="ultraserver-rehearse-") as directory,
        open_api(api, settings.cluster.kubernetes_version, Path(directory), cluster.forbidden) as target,
    ):
        result.url, result.in_cluster_url, result.api = target.served.url, target.in_cluster_url, target
        result.served = _serve_all(target, cluster, runs, extra)
        if target.refusals():
            result.stages.append(refusal_stage(target.refusals()))
        kubeconfig = target.served.kubeconfig(Path(directory))
        result.stages.append(verify_stage(kubeconfig, cluster.expected, moment))
        drift = _drift(target, cluster, Path(directory) / "drift-account", moment)
        result.stages += [drift] if drift else []
        result.stages.append(status_stage(kubeconfig, cluster.expected, moment))
        topology = topology_stage(cluster)
        result.stages += [topology] if topology else []
        accepted = acceptance_stage(kubeconfig, cluster.expected, moment)
        if accepted is not None:
            result.stages.append(target.timed(accepted))
        result.stages += _drain(target, cluster, Path(directory) / "drain-account", moment, injected)
        if any(i.fault == "node-fails" for i in result.injected):
            result.stages.append(node_failure.failure_stage(cluster, moment, stack))
        result.in_cluster = list(target.seen)
        if target.kind == REAL and admission:
            result.stages += _real(target, cluster, settings, stack, Path(directory), result)
    return result


def _real(
    target: Api, cluster: Cluster, settings: Settings, stack: str, folder: Path, result: Rehearsal
) -> list[Stage]:
    """Real scheduling and admission on the running control plane (its placements into ``result``), then, for
    node-fails, the failure on the same real programs."""
    hold = _holder(target, cluster, folder / "hold-account")
    plane = target.served.control_plane
    fails = any(i.fault == "node-fails" for i in result.injected)
    stage, result.placements = admission_stage(
        plane, target.served, settings, cluster.objects, cluster.releases, hold, fails
    )
    if not fails or stage.code or not stage.judged:
        return [stage]
    return [stage, real_failure_stage(target, cluster.objects, settings, stack, folder)]


def _serve_all(target: Api, cluster: Cluster, runs: list[jobs.Run], extra: Sequence[dict[str, Any]]) -> list[str]:
    """The ``extra`` objects (the charts' and CRDs), then the cluster."""
    if extra:
        target.served.put(extra)
        # The rendered charts are the truth: their DeviceClasses replace those derived from the values, and their
        # kubelet plugin DaemonSet's pod template gives its pods' namespace and labels.
        rendered = from_rendered(extra)
        cluster.objects = [o for o in cluster.objects if o["kind"] != "DeviceClass"]
        cluster.kubelet_plugin = rendered.kubelet_plugin
    return serve(target.served, cluster, runs)


def _drift(target: Api, cluster: Cluster, account: Path, moment: datetime) -> Stage | None:
    """The drift CronJob's script as its ServiceAccount; None when the stack deploys none."""
    groups = drift_expected(cluster.objects)
    if groups is None:
        return None

    def run() -> Stage:
        env = target.account(account, *script_account(cluster.objects, "EXPECTED"))
        return drift_stage(account, env, groups, moment)

    return guarded("drift check", run)


def _drain(target: Api, cluster: Cluster, account: Path, moment: datetime, injected: list[Injected]) -> list[Stage]:
    """The drain CronJob's whole run as its ServiceAccount (its environment from the plan's CronJob, EC2's notices
    in WARNINGS), after the job a fault runs is put in (what the API refused of it first), then the response each
    drain fault needs, judged from what the run left in the API and AWS; none when the stack deploys no drain."""
    inputs = drain_inputs(cluster.objects)
    cloud = cluster.cloud
    if inputs is None or cloud is None:
        return []
    before = len(target.refusals())
    target.served.put(job_objects(cluster.running_job, inputs.cluster_queue, moment, levels_of(cluster.objects)))
    found = [refusal_stage(target.refusals()[before:])] if len(target.refusals()) > before else []
    env = {**(cronjob_env(cluster.objects, "BLOCKS") or {}), "WARNINGS": json.dumps(cluster.notices)}
    env.update(target.account(account, *script_account(cluster.objects, "BLOCKS")))
    api = drain_main.StdlibApi(str(account), env)
    found.append(guarded("drain", lambda: drain_stage(api, env, moment, cloud)))
    for fault in injected:
        judge = RESPONSES.get(fault.fault)
        if judge is not None:
            found.append(guarded(f"response to {fault.fault}", partial(judge, target.served, api, env, cluster, fault)))
    return found


def _holder(target: Api, cluster: Cluster, account: Path) -> Callable[[], None] | None:
    """The drain's reclaim hold on the ClusterQueue, sent by the drain's own code as its ServiceAccount; None when
    the stack deploys no drain or no queue to hold."""
    inputs = drain_inputs(cluster.objects)
    if inputs is None or not inputs.cluster_queue:
        return None
    queue = inputs.cluster_queue

    def hold() -> None:
        env = target.account(account, *script_account(cluster.objects, "BLOCKS"))
        drain.apply(drain_main.StdlibApi(str(account), env), {"kind": "hold-queue", "name": queue})

    return hold
