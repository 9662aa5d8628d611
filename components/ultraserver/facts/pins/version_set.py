"""One tested version set: every version the toolkit pins, as one list, with its source, date checked and status.

The numbers keep their single homes (Kubernetes: ``facts/kubernetes/eks_versions.py``; node image:
``facts/pins/ami.py``; charts:
``facts/pins/charts.py`` and its ``data/chart_keys.json``; EKS add-ons: ``facts/pins/addons.py``; images:
``facts/pins/manifests.py``;
manifests: ``facts/pins/manifests.py``); this module only gathers them, adds what each release's vendor says about its
support, and judges the set: a chart whose ``kubeVersion`` excludes the stack's Kubernetes fails it
(tests/facts/test_version_set.py). ``ultraserver versions`` prints it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.pins import addons, ami, charts, manifests
from ultraserver.facts.pins.charts import version_tuple
from ultraserver.facts.pins.newest_found import AMI_ENTRY, KUBERNETES, MPI_OPERATOR, NEWEST_FOUND, NewestFound
from ultraserver.problems import Problem

SUPPORTED = "supported"
DEPRECATED = "deprecated"
END_OF_SUPPORT = "end of support"
NO_POLICY = "no published support policy"
UNPINNED = "unpinned (EKS default; unverified)"

CHECKED = date(2026, 11, 25)
"""When the set was last checked against its sources as a whole."""


@dataclass(frozen=True)
class SupportLine:
    """What a vendor says about one release line (major.minor) of a component."""

    line: tuple[int, int]
    status: str
    source: str
    checked: date


# NVIDIA GPU Operator "Platform Support", section "NVIDIA GPU Operator Life Cycle" (docs preview
# https://nvidia.github.io/cloud-native-docs/review/pr-512/gpu-operator/latest/platform-support.html, checked
# 2026-11-25): 26.7.x Supported, 26.3.x Deprecated, "25.10.x and lower" End of Support. A new major version moves the
# previous one to deprecated and ends support for all older ones. Read in a review build of the docs, not yet on
# docs.nvidia.com: unverified on the published page.
_GPU_OPERATOR_MATRIX = "NVIDIA GPU Operator Platform Support, life cycle table (docs preview, cloud-native-docs PR 512)"
CHART_SUPPORT: dict[str, tuple[SupportLine, ...]] = {
    charts.GPU_OPERATOR: (
        SupportLine((26, 7), SUPPORTED, _GPU_OPERATOR_MATRIX, CHECKED),
        SupportLine((26, 3), DEPRECATED, _GPU_OPERATOR_MATRIX, CHECKED),
        SupportLine((25, 10), END_OF_SUPPORT, _GPU_OPERATOR_MATRIX, CHECKED),
    ),
}
"""Support statements per chart, newest line first; a chart with none has NO_POLICY."""

# EKS user guide "Use P6e-GB200 UltraServers with Amazon EKS" (awsdocs/amazon-eks-user-guide
# latest/ug/ml/ml-eks-nvidia-ultraserver.adoc), versions it names for GB200: GPU Operator 25.3.4+, EFA device plugin
# 0.5.14+, NVIDIA DRA driver 25.8.0+ (ComputeDomain numNodes 0). The DRA minimum is of the chart under its old name;
# every release of the renamed chart (charts.DRA_DRIVER_FIRST_SEMVER on) is newer, so policy/charts.py holds the DRA
# driver to that first release instead. Taken from the project's GB200 fact sheet of that guide; the guide page itself
# was not re-read on 2026-11-25 (not in the searched copies): UNVERIFIED there.
GUIDE_MINIMUMS: dict[str, str] = {
    charts.GPU_OPERATOR: "25.3.4",
    charts.EFA_DEVICE_PLUGIN: "0.5.14",
}
"""The oldest chart release the EKS UltraServer guide names for GB200, per chart."""


@dataclass(frozen=True)
class VersionEntry:
    """One pinned version of the set."""

    kind: str
    """kubernetes, ami, chart, addon, image or manifest."""
    name: str
    version: str
    source: str
    checked: date
    home: str
    """The module that pins it (the one place to change it)."""
    minor: str = ""
    """The Kubernetes minor the entry belongs to (AMI releases, add-ons); empty when it applies to all."""
    newest: NewestFound | None = None
    """The newest release found upstream, when it was re-checked."""


def chart_support(chart: str, version: str) -> str:
    """What the vendor says about a chart release: supported, deprecated, end of support, or no policy."""
    lines = CHART_SUPPORT.get(chart, ())
    parsed = version_tuple(version) or ()
    if not lines or len(parsed) < 2:
        return NO_POLICY
    line = (parsed[0], parsed[1])
    for entry in lines:
        if entry.line == line:
            return entry.status
    if line < lines[-1].line:
        return END_OF_SUPPORT
    return NO_POLICY


def supported_floor(chart: str) -> str | None:
    """The first release (x.y.0) of the oldest line the vendor has not ended support for; None without a policy."""
    alive = [entry.line for entry in CHART_SUPPORT.get(chart, ()) if entry.status != END_OF_SUPPORT]
    return f"{alive[-1][0]}.{alive[-1][1]}.0" if alive else None


def minimum_version(chart: str) -> str | None:
    """The oldest release of a chart the toolkit accepts: the newer of the EKS UltraServer guide's minimum and the
    vendor's supported floor (policy/charts.py enforces it on the plan)."""
    known = [v for v in (GUIDE_MINIMUMS.get(chart), supported_floor(chart)) if v]
    return max(known, key=lambda v: version_tuple(v) or ()) if known else None


def status_source(entry: VersionEntry) -> str:
    """Where the entry's support status comes from: the vendor's statement, or the EKS calendar for a minor."""
    if entry.kind == "chart":
        return next((line.source for line in CHART_SUPPORT.get(entry.name, ())), "")
    if entry.kind == "kubernetes" or entry.minor:
        return "EKS Kubernetes calendar (facts/kubernetes/eks_versions.py)"
    return ""


def kubernetes_support(version: str, on: date) -> str:
    """A Kubernetes minor's EKS status on a date, in the set's words."""
    status = eks_versions.support_status(version, on)
    return {"standard": SUPPORTED, "extended": f"{DEPRECATED} (paid extended support)"}.get(status, status)


def status(entry: VersionEntry, on: date) -> str:
    """The support status of one entry on a date, saying which of its claims no checked source backs.

    A row's status is its Kubernetes minor's EKS support; its source says where the pinned version comes from. When
    either is unverified, the status says so instead of a bare "supported".
    """
    if entry.kind == "chart":
        return chart_support(entry.name, entry.version)
    if entry.kind == "addon" and not entry.version:
        return UNPINNED
    minor = entry.version if entry.kind == "kubernetes" else entry.minor
    if not minor:
        return NO_POLICY
    row = eks_versions.eks_version(minor)
    doubts = [] if row and row.verified else ["EKS dates unverified"]
    if entry.kind != "kubernetes" and "unverified" in entry.source.lower():
        doubts.append("pinned version unverified")
    return kubernetes_support(minor, on) + (f" ({'; '.join(doubts)})" if doubts else "")


def _kubernetes_entries() -> list[VersionEntry]:
    home = "facts/kubernetes/eks_versions.py"
    found = []
    for minor in ami.RELEASE_VERSIONS:
        row = eks_versions.eks_version(minor)
        read = "EKS user guide kubernetes-versions" if row and row.verified else "third-party copies (unverified)"
        name = f"{KUBERNETES} (default)" if minor == eks_versions.DEFAULT_TEXT else KUBERNETES
        found.append(
            VersionEntry(
                "kubernetes",
                name,
                minor,
                read,
                CHECKED,
                home,
                newest=NEWEST_FOUND[KUBERNETES],
            )
        )
    return found


def _ami_entries() -> list[VersionEntry]:
    return [
        VersionEntry(
            "ami",
            AMI_ENTRY,
            release,
            ami.RELEASE_SOURCE,
            ami.RELEASE_CHECKED,
            "facts/pins/ami.py",
            minor,
            newest=NEWEST_FOUND[AMI_ENTRY],
        )
        for minor, release in ami.RELEASE_VERSIONS.items()
    ]


def _chart_entries() -> list[VersionEntry]:
    return [
        VersionEntry(
            "chart",
            name,
            entry.version,
            f"{entry.source_repository} @{entry.source_commit[:8]}",
            CHECKED,
            "facts/pins/charts.py",
            newest=NEWEST_FOUND.get(name),
        )
        for name, entry in sorted(charts.catalog().items())
    ]


def _addon_entries() -> list[VersionEntry]:
    return [
        VersionEntry("addon", addon, pin.version, pin.source, pin.checked, "facts/pins/addons.py", minor)
        for addon, pins in addons.ADDON_VERSIONS.items()
        for minor, pin in pins.items()
    ]


def _artifact_entries() -> list[VersionEntry]:
    found = [
        VersionEntry("image", image.split(":")[0], image.split(":", 1)[1], source, CHECKED, "facts/pins/manifests.py")
        for image, source in manifests.IMAGE_SOURCES.items()
    ]
    found.append(
        VersionEntry(
            "manifest",
            MPI_OPERATOR,
            manifests.MPI_OPERATOR_VERSION,
            manifests.MPI_OPERATOR.url.split("/deploy/")[0],
            CHECKED,
            "facts/pins/manifests.py",
            newest=NEWEST_FOUND[MPI_OPERATOR],
        )
    )
    return found


def version_set() -> tuple[VersionEntry, ...]:
    """Every pinned version: Kubernetes minors, node images, charts, EKS add-ons, images, manifests."""
    return (
        *_kubernetes_entries(),
        *_ami_entries(),
        *_chart_entries(),
        *_addon_entries(),
        *_artifact_entries(),
    )


def known_chart_versions(chart: str) -> tuple[str, ...]:
    """The versions of a chart the set was tested with (the pin)."""
    entry = charts.catalog().get(chart)
    return (entry.version,) if entry else ()


def known_addon_versions(addon: str, kubernetes_version: str) -> tuple[str, ...]:
    """The add-on versions the set was tested with on a minor (empty when it pins none there)."""
    pinned = addons.pinned_version(addon, kubernetes_version)
    return (pinned,) if pinned else ()


def same_version(a: str, b: str) -> bool:
    """Whether two version texts name one release (v25.3.4 and 25.3.4 are the same)."""
    return a.strip().lstrip("vV") == b.strip().lstrip("vV")


def chart_kube_versions() -> dict[str, str | None]:
    """Each pinned chart's Chart.yaml kubeVersion constraint (None: the chart states none)."""
    return {name: entry.kube_version for name, entry in charts.catalog().items()}


_COMPARATOR = re.compile(r"(>=|<=|!=|=|>|<|~|\^)?\s*v?([0-9]+(?:\.[0-9]+){0,2})(-[0-9A-Za-z.]+)?")


def _satisfies(op: str, have: tuple[int, ...], want: tuple[int, ...]) -> bool:
    want = want + (0,) * (3 - len(want))
    upper = (want[0], want[1] + 1, 0) if op == "~" else (want[0] + 1, 0, 0)
    checks = {
        ">=": have >= want,
        "<=": have <= want,
        ">": have > want,
        "<": have < want,
        "!=": have != want,
        "~": want <= have < upper,
        "^": want <= have < upper,
    }
    return checks.get(op, have == want)


def kube_version_allows(constraint: str | None, kubernetes_version: str) -> bool:
    """Whether a Helm kubeVersion constraint (">= 1.16.0-0", ">=1.25.0-0 <1.36.0-0 || >=1.37.0-0") admits an EKS
    cluster of a Kubernetes minor.

    Helm checks the server's GitVersion (helm v3.21.4 pkg/action/action.go:119-123, :282), which EKS reports as a
    SemVer pre-release, v1.35.6-eks-<hash> (helm/helm#10375). Masterminds semver admits a pre-release only in an `||`
    alternative where some comparator carries a pre-release itself (constraints.go:79 and :421-427 at v3.4.0; Helm
    v3.21.4 vendors v3.5.0, same rule UNVERIFIED there): the "-0" charts add for this. The cluster's patch is the
    pinned AMI's kubelet patch (1.35 -> 1.35.6) where known, else .0 (the control plane's own patch is not pinned).
    """
    if not constraint:
        return True
    release = ami.RELEASE_VERSIONS.get(kubernetes_version, "")
    have = version_tuple(release.split("-")[0] if release else f"{kubernetes_version}.0") or ()
    for alternative in constraint.split("||"):
        comparators = _COMPARATOR.findall(alternative)
        if not any(pre for _, _, pre in comparators):
            continue  # no pre-release in the alternative: the EKS version never matches it
        if all(_satisfies(op, have, version_tuple(v) or ()) for op, v, _ in comparators):
            return True
    return False


def admits_eks_versions(constraint: str) -> bool:
    """Whether some alternative of a kubeVersion constraint carries a pre-release, without which no EKS version
    (v1.35.6-eks-<hash>) can match it (kube_version_allows)."""
    return any(pre for alternative in constraint.split("||") for _, _, pre in _COMPARATOR.findall(alternative))


def kube_version_problems(kubernetes_version: str) -> list[Problem]:
    """Charts of the set whose kubeVersion excludes a Kubernetes minor, one Problem each (keyed by the chart)."""
    return [
        Problem(
            f"chart {name} kubeVersion",
            constraint,
            f"a constraint that admits Kubernetes {kubernetes_version}",
            "pin a chart version that supports this minor, or use a minor the chart admits",
        )
        for name, constraint in sorted(chart_kube_versions().items())
        if not kube_version_allows(constraint, kubernetes_version)
    ]
