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

import re
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pulumi import automation as auto

from ultraserver.config.settings import PROJECT
from ultraserver.facts.pins import charts
from ultraserver.facts.pins.deploy_engine import KUBERNETES_PROVIDER, LANGUAGE_HOST_MODULE, PULUMI_CLI
from ultraserver.facts.pins.manifests import DRA_DRIVER_CRDS
from ultraserver.rehearse.chart_repo import chart_repository, relabelled
from ultraserver.rehearse.control_plane import ApiError, ControlPlane, free_port
from ultraserver.rehearse.deploy_program import (
    Engine,
    dra_step_version,
    layer_program,
    note,
    pinned_files,
    stack_settings_with,
    standin_program,
)
from ultraserver.rehearse.emulator import LOOPBACK
from ultraserver.rehearse.stage import Stage

LAYER_PROJECT_NAME = f"{PROJECT}-kubernetes"
"""kubernetes-layer/'s project name (its Pulumi.yaml)."""
HOOK = "helm.sh/hook"
COMPUTE_DOMAINS = "/apis/resource.nvidia.com/v1beta1/computedomains"
LOADED_PROVIDER = re.compile(r"resource plugin kubernetes is expected to have version \S+, but has ([^;\s]+);")
"""The engine's warning when the provider it loaded is not the version the SDK asked for (4.34.2)."""


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
    """The provider version the engine loaded (``_engine_versions``), the pin until the engine says."""
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
                    note(finished, f"{meta['namespace']}/{meta['name']} ({meta['annotations'][HOOK]})")

    thread = threading.Thread(target=finish, name="hook-jobs", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=10)


def _complete(plane: ControlPlane, job: Mapping[str, Any]) -> None:
    meta = job["metadata"]
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
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


def _changes(summary: Any) -> dict[str, int]:
    return {str(k): int(v) for k, v in (summary.resource_changes or {}).items()}


def _engine_versions(stack: auto.Stack, report: Deployment, output: list[str]) -> None:
    """The CLI's version, and the provider's as the engine loaded it: its checkpoint's plugin list when it records
    one, else the engine's own warning that the plugin's version is not the one the SDK asked for (3.274.1 records
    none for a plugin found on the PATH; the provider's version comes from its GetPluginInfo)."""
    report.cli = stack.workspace.pulumi_version or report.cli
    deployment = stack.export_stack().deployment or {}
    plugins = deployment.get("manifest", {}).get("plugins") or []
    recorded = [p for p in plugins if p.get("name") == "kubernetes" and p.get("type") == "resource"]
    loaded = LOADED_PROVIDER.search("".join(output))
    if recorded and recorded[0].get("version"):
        report.provider = str(recorded[0]["version"])
    elif loaded:
        report.provider = loaded.group(1)


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
    mirror = pinned_files(charts_dir, folder / "manifests", read_pin)
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
        output: list[str] = []

        def seen(text: str) -> None:
            output.append(text)
            out.write(text)

        shown: dict[str, Any] = {"on_output": seen, "color": "never"}
        standin = engine.stack(PROJECT, stack, standin_program(settings, kubeconfig))
        if not _step(report, "stand-in platform: pulumi up", lambda: standin.up(**shown), lambda step: None):
            return report
        layer = engine.stack(
            LAYER_PROJECT_NAME, stack, layer_program(settings, stack, moment, report.waits_skipped, postrender)
        )
        steps: list[tuple[str, Callable[[], Any], Callable[[Step], None]]] = [
            ("pulumi up", lambda: layer.up(**shown), lambda step: _engine_versions(layer, report, output)),
            ("second pulumi up", lambda: layer.up(expect_no_changes=True, **shown), _unchanged),
        ]
        for name, action, check in steps:
            if not _step(report, name, action, check):
                return report
        before = _uids(plane)
        moved = layer_program(changed, stack, moment, report.waits_skipped, postrender)
        version_change = f"DRA driver chart {charts.pinned(charts.DRA_DRIVER).version} -> {new_version}"
        if not _step(report, version_change, lambda: layer.up(program=moved, **shown), _keeping(plane, before)):
            return report
        crds = {k: v for k, v in before.items() if k.startswith("CustomResourceDefinition")}
        _step(report, "pulumi destroy", lambda: layer.destroy(**shown), _keeping(plane, crds))
        standin.destroy(**shown)
    return report


def _step(report: Deployment, name: str, action: Callable[[], Any], check: Callable[[Step], None]) -> bool:
    """Run one engine step and its check; False (the failure recorded) when either failed."""
    step = Step(name)
    report.steps.append(step)
    try:
        step.changes = _changes(action().summary)
    except auto.CommandError as error:
        lines = [line for line in str(error).splitlines() if line.strip()]
        step.failed.append("the engine failed: " + " | ".join(lines[-12:]))
        return False
    check(step)
    return not step.failed


def _unchanged(step: Step) -> None:
    if step.changed:
        step.failed.append(f"{step.changed} change(s) where none was expected")
    else:
        step.checked.append("no changes")


def _keeping(plane: ControlPlane, before: Mapping[str, str]) -> Callable[[Step], None]:
    """A check that each object of ``before`` is still there with the same uid (never deleted and made again)."""

    def check(step: Step) -> None:
        after = _uids(plane)
        if not before:
            step.failed.append("no ComputeDomain CRD before the step: nothing to keep")
        for what, uid in before.items():
            if after.get(what) == uid:
                step.checked.append(f"{what} kept (uid {uid[:8]})")
            else:
                step.failed.append(f"{what} " + ("deleted" if what not in after else "deleted and created again"))

    return check


def start_controller_manager(plane: ControlPlane, program: Path) -> None:
    """kube-controller-manager's garbage collector and namespace controller beside the control plane (stopped with
    it), as its administrator: what a foreground deletion and a namespace's deletion wait for."""
    kubeconfig = plane.kubeconfig(plane.folder)
    plane.run(
        "kube-controller-manager",
        program,
        [
            f"--kubeconfig={kubeconfig}",
            f"--authentication-kubeconfig={kubeconfig}",
            f"--authorization-kubeconfig={kubeconfig}",
            "--leader-elect=false",
            f"--bind-address={LOOPBACK}",
            f"--secure-port={free_port()}",
            "--controllers=garbage-collector-controller,namespace-controller",
        ],
    )


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
        with ControlPlane(paths, folder / "control-plane") as plane:
            start_controller_manager(plane, paths["kube-controller-manager"])
            report = deploy(plane, paths, config, stack, moment, charts_dir, folder, read_pin)
            report.notes += [note] if note else []
            report.notes.append(f"kube-apiserver {plane.version().get('gitVersion')}")
    return report
