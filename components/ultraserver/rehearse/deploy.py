"""``rehearse --api real --deploy`` (issue 43 stage 3): the stack's Kubernetes layer deployed by a real Pulumi engine
and the real Kubernetes provider, both built from their Go modules (``facts/pins/deploy_engine.py``), against a real
kube-apiserver, with a local file backend.

The program is the Kubernetes layer as kubernetes-layer/ declares it (``resources.program.layer_from_platform``):
the platform's outputs come through a StackReference to a stand-in platform stack in the same backend, which exports
the rehearsal's kubeconfig and, where the settings wire them, queue URLs and a topic ARN of the stack's own form (no
AWS behind them). The Python SDK serves the program to the CLI as its Automation API serves an inline program (the Go
language host's module is not served). Steps, each with the engine's change counts:

1. ``pulumi up``;
2. a second ``up`` with ``--expect-no-changes``: 0 changes, or it fails;
3. the DRA driver's chart at another version: the ComputeDomain CRDs and the ComputeDomains keep their uids;
4. ``pulumi destroy``: the retained CRDs stay.

What the rehearsal changes in the program, and why, is reported: no kubelet runs here, so the waits for pods are
skipped (``skipAwait``) and Helm's hook Jobs are finished by the rehearsal as the Job controller would; webhooks and
aggregated APIs are dropped by a post-renderer (``rehearse/postrender.py``). kube-controller-manager runs its
garbage collector and namespace controller, without which no foreground deletion (the provider's default) ends.
"""

from __future__ import annotations

import hashlib
import secrets
import subprocess
import sys
import tarfile
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pulumi
import yaml
from pulumi import automation as auto

from ultraserver.builders.reclaim_drain import drain_blocks
from ultraserver.config.settings import PROJECT, Settings, parse_settings
from ultraserver.config.views import needs_termination_handler
from ultraserver.facts.pins import charts
from ultraserver.facts.pins.deploy_engine import KUBERNETES_PROVIDER, LANGUAGE_HOST_MODULE, PULUMI_CLI
from ultraserver.facts.pins.manifests import DRA_DRIVER_CRDS, by_file_name
from ultraserver.rehearse.chart_repo import chart_repository, relabelled
from ultraserver.rehearse.control_plane import ApiError, ControlPlane, free_port
from ultraserver.rehearse.emulator import LOOPBACK
from ultraserver.rehearse.stage import Stage
from ultraserver.resources.program import layer_from_platform

LAYER_PROJECT_NAME = f"{PROJECT}-kubernetes"
"""kubernetes-layer/'s project name (its Pulumi.yaml)."""
WAITS_ON_PODS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "Job", "Pod", "Service"})
"""Kinds the provider waits on until pods run (a Service until its selector has ready endpoints)."""
SKIP_AWAIT = "pulumi.com/skipAwait"
HOOK = "helm.sh/hook"
RELEASE = "kubernetes:helm.sh/v3:Release"
COMPUTE_DOMAINS = "/apis/resource.nvidia.com/v1beta1/computedomains"


@dataclass
class Step:
    """One engine run: its name, the engine's change counts, what was checked after it and what failed."""

    name: str
    changes: dict[str, int] = field(default_factory=dict)
    checked: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    @property
    def changed(self) -> int:
        """Resources created, updated, replaced or deleted."""
        return sum(count for kind, count in self.changes.items() if kind != "same")

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.name,
            "changes": self.changes,
            "changed": self.changed,
            "checked": self.checked,
            "failed": self.failed,
        }


@dataclass
class Deployment:
    """What ``--deploy`` ran and found."""

    cli: str = PULUMI_CLI.version
    provider: str = KUBERNETES_PROVIDER.version
    """The provider version the engine loaded (its plugin list), the pin until the engine says."""
    steps: list[Step] = field(default_factory=list)
    waits_skipped: list[str] = field(default_factory=list)
    hooks_finished: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "pulumi": self.cli,
            "kubernetesProvider": self.provider,
            "languageHost": f"the Python SDK's Automation API server ({LANGUAGE_HOST_MODULE} is not served)",
            "steps": [s.to_json() for s in self.steps],
            "waitsSkipped": self.waits_skipped,
            "hookJobsFinished": self.hooks_finished,
            "notes": self.notes,
        }

    def stage(self) -> Stage:
        """The report's stage: each step's changes, checks and failures."""
        lines = [f"Pulumi CLI {self.cli} and pulumi-resource-kubernetes {self.provider}, built from their Go modules"]
        lines += self.notes
        for step in self.steps:
            counts = ", ".join(f"{k} {v}" for k, v in sorted(step.changes.items())) or "nothing"
            lines.append(f"{step.name}: {counts} ({step.changed} changed)")
            lines += [f"  ok: {c}" for c in step.checked] + [f"  FAILED {f}" for f in step.failed]
        if self.waits_skipped:
            lines.append("waits skipped (no kubelet runs here): " + ", ".join(self.waits_skipped))
        if self.hooks_finished:
            lines.append("Helm hook Jobs finished by the rehearsal: " + ", ".join(self.hooks_finished))
        failed = any(step.failed for step in self.steps)
        return Stage("deploy (real Pulumi engine)", 1 if failed else 0, "\n".join(lines))


def dra_step_version() -> str:
    """The version the DRA driver's release moves to in step 3: the pinned chart relabelled (no other version of it
    is at hand offline), its patch number past any real one so that it cannot be taken for a release."""
    major, minor, patch = charts.pinned(charts.DRA_DRIVER).version.lstrip("v").split(".")
    return f"{major}.{minor}.{int(patch) + 1000}"


def stack_settings_with(
    config: Mapping[str, Any], stack: str, kubernetes: Mapping[str, Any], untested: bool = False
) -> Settings:
    """The stack's settings with ``kubernetes`` keys merged into its ``kubernetes`` block; with ``untested``, a chart
    version off the tested set accepted (``acceptUntestedVersions``, as a deployer who moves a version must)."""
    key = f"{PROJECT}:kubernetes"
    raw = dict(config)
    if untested:
        raw[f"{PROJECT}:acceptUntestedVersions"] = True
    block = raw.get(key) or {}
    block = yaml.safe_load(block) if isinstance(block, str) else dict(block)
    merged = {**block, **kubernetes}
    for name, value in kubernetes.items():
        if isinstance(value, Mapping) and isinstance(block.get(name), Mapping):
            merged[name] = {**block[name], **value}
    raw[key] = merged
    return parse_settings(raw, PROJECT, stack)


def _pinned_files(chart_dir: Path, folder: Path, read_pin: Callable[[Any], bytes]) -> Path:
    """A ``kubernetes.manifestMirror`` folder: each pinned manifest under its file name, from a packaged chart's
    crds/ where one holds the pinned bytes (the DRA driver's, at the same git blobs; the GPU Operator's older copies
    of the same files are not them) or else from ``read_pin``; the program checks each one's digests again."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = by_file_name()
    for chart in sorted(chart_dir.glob("*.tgz")):
        with tarfile.open(chart) as packed:
            for member in packed.getmembers():
                pin = wanted.get(member.name.rsplit("/", 1)[-1]) if "/crds/" in member.name else None
                data = packed.extractfile(member) if pin is not None else None
                content = data.read() if data is not None else b""
                if pin is not None and hashlib.sha256(content).hexdigest() == pin.sha256:
                    (folder / pin.file_name).write_bytes(content)
    for name, pin in wanted.items():
        if not (folder / name).is_file():
            (folder / name).write_bytes(read_pin(pin))
    return folder


def _transforms(report: Deployment, postrender: Path) -> None:
    """The rehearsal's changes to the program (module docstring), registered for the whole stack."""

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        props = dict(args.props)
        if args.type_ == RELEASE:
            props["postrender"] = str(postrender)
            if not props.get("skipAwait") or props.get("atomic"):
                props.update(skipAwait=True, atomic=False)
                _note(report.waits_skipped, f"Helm release {args.name}")
            return pulumi.ResourceTransformResult(props, args.opts)
        kind = args.type_.rsplit(":", 1)[-1]
        if args.custom and args.type_.startswith("kubernetes:") and kind in WAITS_ON_PODS:
            meta = props.get("metadata")
            if not isinstance(meta, dict):
                return None  # not known until the deployment runs: left as the program declares it
            meta = {**meta}
            meta["annotations"] = {**(meta.get("annotations") or {}), SKIP_AWAIT: "true"}
            props["metadata"] = meta
            _note(report.waits_skipped, f"{kind} {meta.get('name', args.name)}")
            return pulumi.ResourceTransformResult(props, args.opts)
        return None

    pulumi.runtime.register_resource_transform(transform)


def _note(found: list[str], item: str) -> None:
    if item not in found:
        found.append(item)


def standin_program(settings: Settings, kubeconfig: str) -> Callable[[], None]:
    """The stand-in platform: the outputs the layer reads, the kubeconfig the rehearsal's, the rest of the stack's
    own form (``arn:aws:sns:<region>:<account>:...``) with nothing behind them."""
    account = next((arn.split(":")[4] for arn in settings.cluster.admin_principal_arns), "111122223333")
    name, region = settings.cluster.name, settings.region

    def program() -> None:
        pulumi.export("clusterName", name)
        pulumi.export("kubeconfig", pulumi.Output.secret(kubeconfig))
        if needs_termination_handler(settings):
            pulumi.export("nodeTerminationQueueUrl", f"https://sqs.{region}.amazonaws.com/{account}/{name}-termination")
        if drain_blocks(settings):
            pulumi.export("reclaimWarningQueueUrl", f"https://sqs.{region}.amazonaws.com/{account}/{name}-warnings")
        if settings.alerts_enabled:
            pulumi.export("alertTopicArn", f"arn:aws:sns:{region}:{account}:{name}-alerts")

    return program


def layer_program(
    settings: Settings, stack: str, moment: datetime, report: Deployment, postrender: Path
) -> Callable[[], None]:
    """The Kubernetes layer on the stand-in platform's cluster."""

    def program() -> None:
        _transforms(report, postrender)
        layer_from_platform(settings, pulumi.StackReference(f"organization/{PROJECT}/{stack}"), now=moment)

    return program


@contextmanager
def hook_jobs_finished(plane: ControlPlane, finished: list[str]) -> Iterator[None]:
    """While the block runs, every Helm hook Job is marked complete as the Job controller marks a Job whose pod
    succeeded (no kubelet runs its pod here); Helm waits for its hooks without a timeout of its own."""
    stop = threading.Event()

    def finish() -> None:
        while not stop.wait(0.5):
            try:
                jobs = plane.call("GET", "/apis/batch/v1/jobs")["items"]
            except (ApiError, OSError):
                continue
            for job in jobs:
                meta = job["metadata"]
                done = any(c["type"] == "Complete" for c in (job.get("status") or {}).get("conditions") or [])
                if HOOK in (meta.get("annotations") or {}) and not done:
                    _complete(plane, job)
                    _note(finished, f"{meta['namespace']}/{meta['name']} ({meta['annotations'][HOOK]})")

    thread = threading.Thread(target=finish, name="hook-jobs", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


def _complete(plane: ControlPlane, job: Mapping[str, Any]) -> None:
    meta = job["metadata"]
    now = datetime.now().astimezone().strftime("%Y-%m-%dT%H:%M:%SZ")
    conditions = [
        {"type": kind, "status": "True", "lastProbeTime": now, "lastTransitionTime": now, "reason": reason}
        for kind, reason in (("SuccessCriteriaMet", "CompletionsReached"), ("Complete", "CompletionsReached"))
    ]
    status = {"startTime": now, "completionTime": now, "succeeded": 1, "ready": 0, "conditions": conditions}
    path = f"/apis/batch/v1/namespaces/{meta['namespace']}/jobs/{meta['name']}/status"
    try:
        plane.call("PATCH", path, {"status": status}, "application/merge-patch+json")
    except ApiError:
        pass  # gone already (Helm deletes a succeeded hook), or refused: Helm then reports the hook as failed


def _uids(plane: ControlPlane) -> dict[str, str]:
    """The uids of the DRA driver's CRDs and of every ComputeDomain, by ``Kind name``."""
    found = {}
    for name in DRA_DRIVER_CRDS:
        try:
            crd = plane.call("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
        except ApiError:
            continue
        found[f"CustomResourceDefinition {name}"] = crd["metadata"]["uid"]
    try:
        domains = plane.call("GET", COMPUTE_DOMAINS)["items"]
    except ApiError:
        domains = []
    for domain in domains:
        meta = domain["metadata"]
        found[f"ComputeDomain {meta['namespace']}/{meta['name']}"] = meta["uid"]
    return found


class Engine:
    """The built CLI and provider in a folder of their own: a file backend, a Pulumi home, Helm's folders, the
    rehearsal's CA trusted (the chart repository's certificate), the provider found on the PATH."""

    def __init__(self, paths: Mapping[str, Path], folder: Path, ca: bytes) -> None:
        self.root = folder / "engine"
        (self.root / "bin").mkdir(parents=True, exist_ok=True)
        for name in (PULUMI_CLI.name, KUBERNETES_PROVIDER.name):
            link = self.root / "bin" / name
            link.unlink(missing_ok=True)
            link.symlink_to(paths[name])
        (folder / "backend").mkdir(exist_ok=True)
        (folder / "ca.pem").write_bytes(ca)
        self.env = {
            "PATH": f"{self.root / 'bin'}:/usr/bin:/bin",
            "PULUMI_BACKEND_URL": f"file://{folder / 'backend'}",
            "PULUMI_CONFIG_PASSPHRASE": secrets.token_urlsafe(16),
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "SSL_CERT_FILE": str(folder / "ca.pem"),
            **{f"HELM_{kind}_HOME": str(folder / "helm" / kind.lower()) for kind in ("CACHE", "CONFIG", "DATA")},
        }
        self.home = folder / "pulumi-home"
        self.command = auto.PulumiCommand(root=str(self.root))

    def stack(self, project: str, stack: str, program: Callable[[], None]) -> auto.Stack:
        options = auto.LocalWorkspaceOptions(
            pulumi_home=str(self.home), env_vars=self.env, pulumi_command=self.command, secrets_provider="passphrase"
        )
        return auto.create_or_select_stack(stack, project, program, opts=options)


def _changes(summary: Any) -> dict[str, int]:
    return {str(k): int(v) for k, v in (summary.resource_changes or {}).items()}


def _engine_versions(stack: auto.Stack, report: Deployment) -> None:
    """The CLI's and the provider's versions as the engine recorded them (its checkpoint's plugin list)."""
    report.cli = stack.workspace.pulumi_version or report.cli
    deployment = stack.export_stack().deployment or {}
    plugins = deployment.get("manifest", {}).get("plugins") or []
    for plugin in plugins:
        if plugin.get("name") == "kubernetes" and plugin.get("type") == "resource":
            report.provider = str(plugin.get("version") or report.provider)


def deploy(
    plane: ControlPlane,
    paths: Mapping[str, Path],
    config: Mapping[str, Any],
    stack: str,
    moment: datetime,
    charts_dir: Path,
    folder: Path,
    read_pin: Callable[[Any], bytes],
    out: Any = sys.stderr,
) -> Deployment:
    """The four steps against ``plane`` (module docstring); the engine's own output goes to ``out``."""
    report = Deployment()
    engine = Engine(paths, folder, plane.authority.ca)
    postrender = folder / "postrender"
    postrender.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m ultraserver.rehearse.postrender\n')
    postrender.chmod(0o755)
    mirror = _pinned_files(charts_dir, folder / "manifests", read_pin)
    new_version = dra_step_version()
    dra_chart = next(charts_dir.glob(f"{charts.DRA_DRIVER}-{charts.pinned(charts.DRA_DRIVER).version}.tgz"))
    packaged = [*sorted(charts_dir.glob("*.tgz")), relabelled(dra_chart, new_version, folder / "relabelled")]
    kubeconfig = plane.kubeconfig(folder).read_text()
    with ExitStack() as running:
        repo = running.enter_context(chart_repository(packaged, plane.authority, folder / "charts"))
        running.enter_context(hook_jobs_finished(plane, report.hooks_finished))
        mirrors = {"chartMirror": repo, "manifestMirror": str(mirror)}
        settings = stack_settings_with(config, stack, mirrors)
        changed = stack_settings_with(config, stack, {**mirrors, "draDriver": {"version": new_version}}, True)
        standin = engine.stack(PROJECT, stack, standin_program(settings, kubeconfig))
        standin.up(on_output=out.write, color="never")
        layer = engine.stack(LAYER_PROJECT_NAME, stack, layer_program(settings, stack, moment, report, postrender))
        first = Step("pulumi up", _changes(layer.up(on_output=out.write, color="never").summary))
        report.steps.append(first)
        _engine_versions(layer, report)
        second = Step("second pulumi up")
        report.steps.append(second)
        try:
            second.changes = _changes(layer.up(on_output=out.write, color="never", expect_no_changes=True).summary)
        except auto.CommandError as error:
            second.failed.append(f"the engine found changes: {str(error)[-400:]}")
        if second.changed:
            second.failed.append(f"{second.changed} change(s) where none was expected")
        elif not second.failed:
            second.checked.append("no changes")
        before = _uids(plane)
        third = Step(f"DRA driver chart {charts.pinned(charts.DRA_DRIVER).version} -> {new_version}")
        report.steps.append(third)
        program = layer_program(changed, stack, moment, report, postrender)
        third.changes = _changes(layer.up(on_output=out.write, color="never", program=program).summary)
        _kept(plane, before, third)
        destroy = Step("pulumi destroy")
        report.steps.append(destroy)
        destroy.changes = _changes(layer.destroy(on_output=out.write, color="never").summary)
        crds = {k: v for k, v in before.items() if k.startswith("CustomResourceDefinition")}
        _kept(plane, crds, destroy)
        standin.destroy(on_output=out.write, color="never")
    return report


def _kept(plane: ControlPlane, before: Mapping[str, str], step: Step) -> None:
    """Each object of ``before`` still there with the same uid (never deleted and made again)."""
    after = _uids(plane)
    if not before:
        step.failed.append("no ComputeDomain CRD before the step: nothing to keep")
    for what, uid in before.items():
        if after.get(what) == uid:
            step.checked.append(f"{what} kept (uid {uid[:8]})")
        else:
            step.failed.append(f"{what} " + ("deleted" if what not in after else "deleted and created again"))


@contextmanager
def controller_manager(plane: ControlPlane, program: Path, folder: Path) -> Iterator[None]:
    """kube-controller-manager's garbage collector and namespace controller beside the control plane, as its
    administrator (what a foreground deletion and a namespace's deletion wait for)."""
    kubeconfig = plane.kubeconfig(folder)
    args = [
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
        "--leader-elect=false",
        f"--bind-address={LOOPBACK}",
        f"--secure-port={free_port()}",
        "--controllers=garbage-collector-controller,namespace-controller",
    ]
    with (folder / "kube-controller-manager.log").open("wb") as log:
        process = subprocess.Popen([str(program), *args], stdout=log, stderr=subprocess.STDOUT)
        try:
            yield
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def deploy_stage(
    config: Mapping[str, Any],
    stack: str,
    minor: str,
    moment: datetime,
    charts_dir: Path,
    read_pin: Callable[[Any], bytes],
) -> Deployment:
    """Build what is missing (progress on stderr), start a control plane of its own and run the four steps."""
    from ultraserver.rehearse.binaries import deploy_programs, ensure

    wanted, note = deploy_programs(minor)
    paths = ensure(wanted, sys.stderr)
    with tempfile.TemporaryDirectory(prefix="ultraserver-deploy-") as directory:
        folder = Path(directory)
        with (
            ControlPlane(paths, folder / "control-plane") as plane,
            controller_manager(plane, paths["kube-controller-manager"], folder),
        ):
            report = deploy(plane, paths, config, stack, moment, charts_dir, folder, read_pin)
            report.notes += [note] if note else []
            report.notes.append(f"kube-apiserver {plane.version().get('gitVersion')}")
    return report
