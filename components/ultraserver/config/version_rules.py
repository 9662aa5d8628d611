"""Version rules: the Kubernetes support window, and stacks staying on the tested version set.

A minor in paid extended support, or leaving standard support soon, is a warning with both cluster-hour prices.
A chart or EKS add-on version outside the tested set is refused at plan time.

A stack may still run an untested version on purpose with ``acceptUntestedVersions: true``; the plan then warns.
The set is ``facts/version_set.py``; ``ultraserver versions`` prints it.
"""

from __future__ import annotations

from datetime import date

from pydantic.alias_generators import to_camel

from ultraserver.config.model import RELEASE_KEYS, Settings
from ultraserver.facts import addons, ami, charts, kubernetes
from ultraserver.facts import version_set as vs
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
    later = [v for v in kubernetes.supported(tuple(ami.RELEASE_VERSIONS), today) if kubernetes.is_newer(v, version)]
    step = f'kubernetesVersion: "{later[0]}"' if later else "a toolkit release that pins a newer minor"
    return f"upgrade one minor at a time, next {step} (capacity-block groups at 0 first; docs/versions.md)"


def support_window(s: Settings, today: date) -> list[Problem]:
    """A warning when the version is in paid extended support or leaves standard support soon, with both prices."""
    version = s.cluster.kubernetes_version
    row = kubernetes.leaving_standard_support(version, today)
    if row is None:
        return []
    ends = "ended" if today >= row.end_of_standard_support else "ends"
    read = "" if row.verified else ", date not read in the EKS guide"
    return [
        Problem(
            f"{s.project}:cluster.kubernetesVersion",
            version,
            f"a version in EKS standard support: standard support {ends} {row.end_of_standard_support}{read}; "
            f"extended support costs ${kubernetes.EXTENDED_PRICE_PER_HOUR:.2f} per cluster-hour instead of "
            f"${kubernetes.STANDARD_PRICE_PER_HOUR:.2f} ({kubernetes.PRICE_SOURCE})",
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
    if not kubernetes.is_newer(kubernetes.DRA_GA_TEXT, version):
        return []
    return [
        Problem(
            f"{s.project}:cluster.kubernetesVersion",
            version,
            f"Kubernetes {kubernetes.DRA_GA_TEXT} or later for chart {charts.DRA_DRIVER} "
            f"{charts.pinned(charts.DRA_DRIVER).version} (its prerequisites ask for v1.34.2+; on {version} it runs "
            "against the beta DRA API, outside what the driver's project supports)",
            f'upgrade to kubernetesVersion: "{kubernetes.DEFAULT_TEXT}" (docs/dra-driver-upgrade.md#kubernetes-133)',
            WARNING,
        )
    ]
