"""Version rules: the Kubernetes support window, and stacks staying on the tested version set.

A minor in paid extended support, or leaving standard support soon, is a warning with both cluster-hour prices.
A chart or EKS add-on version outside the tested set is refused at plan time, and so is a Kubernetes version outside
the `kubeVersion` of a chart the stack installs (Helm would refuse that install at deploy time).

A stack may still run an untested version on purpose with ``acceptUntestedVersions: true``; the plan then warns.
The set is ``facts/pins/version_set.py``; ``ultraserver versions`` prints it.
"""

from __future__ import annotations

from datetime import date

from pydantic.alias_generators import to_camel

from ultraserver.config.kubernetes_model import RELEASE_KEYS
from ultraserver.config.model import Settings
from ultraserver.config.views import installed_releases
from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.pins import addons, ami, charts
from ultraserver.facts.pins import version_set as vs
from ultraserver.problems import ERROR, WARNING, Problem

ADDON_KEYS = {
    "vpc_cni": addons.VPC_CNI,
    "coredns": addons.COREDNS,
    "kube_proxy": addons.KUBE_PROXY,
    "pod_identity_agent": addons.POD_IDENTITY_AGENT,
}
"""AddonSettings field -> EKS add-on name."""


def _upgrade_fix(version: str, today: date) -> str:
    """Upgrade to the next allowed minor, or, with none pinned yet, to a toolkit release that pins one."""
    later = [v for v in eks_versions.supported(tuple(ami.RELEASE_VERSIONS), today) if eks_versions.is_newer(v, version)]
    step = f'kubernetesVersion: "{later[0]}"' if later else "a toolkit release that pins a newer minor"
    return f"upgrade one minor at a time, next {step} (capacity-block groups at 0 first; docs/versions.md)"


def support_window(s: Settings, today: date) -> list[Problem]:
    """A warning when the version is in paid extended support or leaves standard support soon, with both prices."""
    version = s.cluster.kubernetes_version
    row = eks_versions.leaving_standard_support(version, today)
    days = eks_versions.days_of_standard_support(version, today)
    if row is None or days is None:
        return []
    ends = "ended" if days <= 0 else "ends"
    read = "" if row.verified else ", date not read in the EKS guide"
    return [
        Problem(
            f"{s.project}:cluster.kubernetesVersion",
            version,
            f"a version in EKS standard support: standard support {ends} {row.end_of_standard_support}{read}; "
            f"extended support costs ${eks_versions.EXTENDED_PRICE_PER_HOUR:.2f} per cluster-hour instead of "
            f"${eks_versions.STANDARD_PRICE_PER_HOUR:.2f} ({eks_versions.PRICE_SOURCE})",
            _upgrade_fix(version, today),
            WARNING,
        )
    ]


def _problem(s: Settings, path: str, value: str, what: str, known: tuple[str, ...]) -> Problem:
    untested = s.accept_untested_versions
    listed = ", ".join(known) if known else "none pinned (the toolkit leaves it to EKS's default)"
    return Problem(
        f"{s.project}:{path}",
        value,
        f"a {what} of the tested version set: {listed}"
        + ("; accepted as untested (acceptUntestedVersions: true)" if untested else ""),
        f"remove {path.rsplit('.', 1)[-1]} to take the pin, or set acceptUntestedVersions: true to run it untested "
        "(docs/versions.md)",
        WARNING if untested else ERROR,
    )


def untested_versions(s: Settings, today: date) -> list[Problem]:
    """Chart and add-on versions the stack sets that the tested set does not hold."""
    found = []
    for field, chart in RELEASE_KEYS.items():
        version = getattr(s.kubernetes, field).version
        known = vs.known_chart_versions(chart)
        if version and not any(vs.same_version(version, k) for k in known):
            found.append(_problem(s, f"kubernetes.{to_camel(field)}.version", version, f"{chart} chart version", known))
    minor = s.cluster.kubernetes_version
    for field, addon in ADDON_KEYS.items():
        version = getattr(s.addons, field)
        known = vs.known_addon_versions(addon, minor)
        if version and version not in known:
            found.append(_problem(s, f"addons.{to_camel(field)}", version, f"{addon} version on {minor}", known))
    return found


_NO_PRERELEASE = (
    "EKS reports its version as a SemVer pre-release (v1.35.6-eks-<hash>), which Helm matches only against a "
    "kubeVersion with a pre-release such as >=1.25.0-0 (helm/helm#10375)"
)


def _kube_version_fix(chart: charts.PinnedChart, accepted: list[str]) -> str:
    """Move to a minor the chart accepts (the default when it is one), or to a toolkit release that pins a chart
    for this minor."""
    if not accepted:
        return f"use a toolkit release whose {chart.name} chart supports this Kubernetes version"
    minor = eks_versions.DEFAULT_TEXT if eks_versions.DEFAULT_TEXT in accepted else accepted[-1]
    return f'set kubernetesVersion: "{minor}"'


def chart_kubernetes_versions(s: Settings, today: date) -> list[Problem]:
    """Every chart the stack installs at its pin accepts the stack's Kubernetes version.

    Helm checks a chart's kubeVersion against the cluster before rendering and fails the install or upgrade otherwise
    (helm v3 pkg/action/action.go renderResources, "chart requires kubeVersion ... incompatible"; read in an indexed
    copy, tag unverified). A chart version the stack overrides has a constraint the toolkit does not know;
    untested_versions reports that override instead.
    """
    version = s.cluster.kubernetes_version
    found = []
    for field in installed_releases(s):
        chart = charts.pinned(RELEASE_KEYS[field])
        override = getattr(s.kubernetes, field).version
        if override and not vs.same_version(override, chart.version):
            continue
        if vs.kube_version_allows(chart.kube_version, version):
            continue
        accepted = [m for m in ami.RELEASE_VERSIONS if vs.kube_version_allows(chart.kube_version, m)]
        eks = "" if vs.admits_eks_versions(chart.kube_version or "") else f"; {_NO_PRERELEASE}"
        found.append(
            Problem(
                f"{s.project}:cluster.kubernetesVersion",
                version,
                f"a version chart {chart.name} {chart.version} accepts (its Chart.yaml kubeVersion "
                f"'{chart.kube_version}'): {', '.join(accepted) or 'none the toolkit pins'}{eks}",
                _kube_version_fix(chart, accepted),
            )
        )
    return found


def dra_driver_forward_only(s: Settings, today: date) -> list[Problem]:
    """A DRA driver version must be a release of the renamed chart: no way back to 25.x, even untested."""
    version = s.kubernetes.dra_driver.version
    if not version or charts.is_dra_driver_release(version):
        return []
    first = ".".join(map(str, charts.DRA_DRIVER_FIRST_SEMVER))
    return [
        Problem(
            f"{s.project}:kubernetes.draDriver.version",
            version,
            f"a release of chart {charts.DRA_DRIVER}, {first} or later: the chart was renamed at {first} (25.x "
            "releases are the old chart) and a cluster on it cannot go back (the DRA driver's upgrade guide)",
            f"remove kubernetes.draDriver.version to take the pin {charts.pinned(charts.DRA_DRIVER).version} "
            "(docs/dra-driver-upgrade.md)",
        )
    ]


def dra_driver_prerequisites(s: Settings, today: date) -> list[Problem]:
    """A warning below the DRA driver's stated Kubernetes minimum (v1.34.2, where DRA is on by default: its
    docs/prerequisites.md:10-11 at tag v0.4.1); its chart still installs from 1.32 on (kubeVersion >=1.32.0-0)."""
    version = s.cluster.kubernetes_version
    if not eks_versions.is_newer(eks_versions.DRA_GA_TEXT, version):
        return []
    return [
        Problem(
            f"{s.project}:cluster.kubernetesVersion",
            version,
            f"Kubernetes {eks_versions.DRA_GA_TEXT} or later for chart {charts.DRA_DRIVER} "
            f"{charts.pinned(charts.DRA_DRIVER).version} (its prerequisites ask for v1.34.2+; on {version} it runs "
            "against the beta DRA API, outside what the driver's project supports)",
            f'upgrade to kubernetesVersion: "{eks_versions.DEFAULT_TEXT}" (docs/dra-driver-upgrade.md#kubernetes-133)',
            WARNING,
        )
    ]
