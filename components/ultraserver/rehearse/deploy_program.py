"""The program and the engine of ``rehearse --deploy`` (``rehearse/deploy.py`` runs the steps): the stack's
settings with the rehearsal's mirrors, the pinned manifests in a mirror folder, the stand-in platform and the layer
as inline programs, the rehearsal's transforms, and the built CLI and provider in a folder of their own.
"""

from __future__ import annotations

import hashlib
import secrets
import tarfile
from collections.abc import Callable, Mapping
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
from ultraserver.facts.pins.deploy_engine import KUBERNETES_PROVIDER, PULUMI_CLI
from ultraserver.facts.pins.manifests import by_file_name
from ultraserver.resources.program import layer_from_platform

WAITS_ON_PODS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "Job", "Pod", "Service"})
"""Kinds the provider waits on until pods run (a Service until its selector has ready endpoints)."""
SKIP_AWAIT = "pulumi.com/skipAwait"
RELEASE = "kubernetes:helm.sh/v3:Release"


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


def pinned_files(chart_dir: Path, folder: Path, read_pin: Callable[[Any], bytes]) -> Path:
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


def _transforms(waits_skipped: list[str], postrender: Path) -> None:
    """The rehearsal's changes to the program (module docstring), registered for the whole stack."""

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        props = dict(args.props)
        if args.type_ == RELEASE:
            props["postrender"] = str(postrender)
            if not props.get("skipAwait") or props.get("atomic"):
                props.update(skipAwait=True, atomic=False)
                note(waits_skipped, f"Helm release {args.name}")
            return pulumi.ResourceTransformResult(props, args.opts)
        kind = args.type_.rsplit(":", 1)[-1]
        if args.custom and args.type_.startswith("kubernetes:") and kind in WAITS_ON_PODS:
            meta = props.get("metadata")
            if not isinstance(meta, dict):
                return None  # not known until the deployment runs: left as the program declares it
            meta = {**meta}
            meta["annotations"] = {**(meta.get("annotations") or {}), SKIP_AWAIT: "true"}
            props["metadata"] = meta
            note(waits_skipped, f"{kind} {meta.get('name', args.name)}")
            return pulumi.ResourceTransformResult(props, args.opts)
        return None

    pulumi.runtime.register_resource_transform(transform)


def note(found: list[str], item: str) -> None:
    """Add ``item`` once."""
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
    settings: Settings, stack: str, moment: datetime, waits_skipped: list[str], postrender: Path
) -> Callable[[], None]:
    """The Kubernetes layer on the stand-in platform's cluster."""

    def program() -> None:
        _transforms(waits_skipped, postrender)
        layer_from_platform(settings, pulumi.StackReference(f"organization/{PROJECT}/{stack}"), now=moment)

    return program


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
