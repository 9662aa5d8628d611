"""``ultraserver versions --check``: each pin of one Kubernetes minor against what AWS and the chart registries offer
today, with a verdict.

- The node image against the EKS-recommended release, SSM public parameter
  ``/aws/service/eks/optimized-ami/<minor>/amazon-linux-2023/arm64/nvidia/recommended/release_version`` (the
  sibling of ``recommended/image_id``; EKS user guide retrieve-ami-id, terraform-aws-eks PR #3369 shows the value
  ``1.32.3-20250519``).
- The minor itself against EKS ``DescribeClusterVersions`` (``endOfStandardSupportDate``).
- Each pinned add-on against EKS ``DescribeAddonVersions`` for the minor.
- Each chart against its repository (``preflight/registries.py``).

Verdicts: current, newer available, known bad (``facts/pins/known_bad.py``), not offered, end of support in N days.
The command fails on a known-bad pin, a pin EKS no longer offers, or a minor whose standard support ends within the
warning window: each of those breaks or costs a deployment that nobody changed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime

from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.pins import addons, ami, charts, known_bad
from ultraserver.preflight.clients import ApiFailure, Client, call, call_all
from ultraserver.preflight.registries import Fetch, newest_chart_version

CURRENT = "current"
NEWER = "newer available"
KNOWN_BAD = "known bad"
NOT_OFFERED = "not offered"
NO_ANSWER = "no answer"
ENDING = "end of support in {days} days"
ENDED = "end of standard support passed {days} days ago"


@dataclass(frozen=True)
class Drift:
    """One pin against its newest upstream release."""

    kind: str
    name: str
    pinned: str
    newest: str
    verdict: str
    detail: str = ""
    failing: bool = False
    """The verdict fails the check (known bad, not offered, support ending within the window)."""


def recommended_parameter(minor: str) -> str:
    """The SSM public parameter holding the EKS-recommended AL2023 ARM64 NVIDIA release version of a minor."""
    return f"{ami.SSM_ROOT}/{ami.checked_version(minor)}/{ami.VARIANT}/recommended/release_version"


def _numbers(version: str) -> tuple[int, ...]:
    """Every number of a version text in order (v1.19.5-eksbuild.3 -> 1, 19, 5, 3), to order EKS add-on builds."""
    return tuple(int(n) for n in re.findall(r"[0-9]+", version))


def _verdict(newest: str, same: bool) -> str:
    return CURRENT if same or not newest else NEWER


def ami_drift(ssm: Client, minor: str) -> Drift:
    """The pinned node image against the EKS-recommended release of the minor."""
    pinned = ami.default_release_version(minor)
    bad = known_bad.bad_ami_release(ami.release_date_in(pinned) or "", minor)
    try:
        newest = str(call(ssm, "get_parameter", Name=recommended_parameter(minor))["Parameter"]["Value"])
    except ApiFailure as exc:
        return Drift("ami", ami.AMI_TYPE, pinned, "", KNOWN_BAD if bad else NO_ANSWER, str(exc), bool(bad))
    if bad:
        return Drift("ami", ami.AMI_TYPE, pinned, newest, KNOWN_BAD, f"{bad.quote} ({bad.source})", True)
    newest_bad = known_bad.bad_ami_release(ami.release_date_in(newest) or "", minor)
    detail = f"recommended {newest} is known bad: {newest_bad.quote}; keep the pin" if newest_bad else ""
    newer = (ami.release_date_in(newest) or "") > (ami.release_date_in(pinned) or "")
    return Drift("ami", ami.AMI_TYPE, pinned, newest, NEWER if newer else CURRENT, detail)


def kubernetes_drift(eks: Client, minor: str, on: date, warning_days: int) -> Drift:
    """The minor's end of standard support as EKS reports it, and the newest minor EKS lists."""
    try:
        answer = call_all(eks, "describe_cluster_versions", includeAll=True)
    except ApiFailure as exc:
        return Drift("kubernetes", "Kubernetes", minor, "", NO_ANSWER, str(exc))
    listed = {str(v.get("clusterVersion", "")): v for v in answer.get("clusterVersions", [])}
    newest = max(listed, key=_numbers, default="")
    row = listed.get(minor)
    if row is None:
        return Drift("kubernetes", "Kubernetes", minor, newest, NOT_OFFERED, "EKS does not list the minor", True)
    end = row.get("endOfStandardSupportDate")
    days = (end.date() - on).days if isinstance(end, datetime) else eks_versions.days_of_standard_support(minor, on)
    detail = f"standard support ends {end:%Y-%m-%d}" if isinstance(end, datetime) else "EKS gave no end date"
    if days is not None and days <= warning_days:
        verdict = ENDING.format(days=days) if days >= 0 else ENDED.format(days=-days)
        price = (
            f"extended support ${eks_versions.EXTENDED_PRICE_PER_HOUR:.2f} per cluster-hour instead of "
            f"${eks_versions.STANDARD_PRICE_PER_HOUR:.2f} ({eks_versions.PRICE_SOURCE})"
        )
        return Drift("kubernetes", "Kubernetes", minor, newest, verdict, f"{detail}; {price}", True)
    return Drift("kubernetes", "Kubernetes", minor, newest, _verdict(newest, newest == minor), detail)


def addon_drift(eks: Client, minor: str) -> list[Drift]:
    """Each add-on the toolkit pins for the minor against the versions EKS offers for it."""
    found = []
    for addon in sorted(addons.ADDON_VERSIONS):
        pinned = addons.pinned_version(addon, minor)
        if not pinned:
            continue
        try:
            answer = call_all(eks, "describe_addon_versions", addonName=addon, kubernetesVersion=minor)
        except ApiFailure as exc:
            found.append(Drift("addon", addon, pinned, "", NO_ANSWER, str(exc)))
            continue
        offered = [str(v.get("addonVersion", "")) for a in answer.get("addons", []) for v in a.get("addonVersions", [])]
        newest = max(offered, key=_numbers, default="")
        if pinned not in offered:
            found.append(Drift("addon", addon, pinned, newest, NOT_OFFERED, f"EKS offers {newest or 'none'}", True))
            continue
        found.append(Drift("addon", addon, pinned, newest, _verdict(newest, newest == pinned)))
    return found


def chart_drift(fetch: Fetch) -> list[Drift]:
    """Each pinned chart against the newest release its repository lists."""
    found = []
    for name, entry in sorted(charts.catalog().items()):
        try:
            newest = newest_chart_version(entry, fetch)
        except OSError as exc:
            found.append(Drift("chart", name, entry.version, "", NO_ANSWER, f"{entry.repo}: {exc}"))
            continue
        same = newest.lstrip("v") == entry.version.lstrip("v")
        found.append(Drift("chart", name, entry.version, newest, _verdict(newest, same), entry.repo))
    return found


def check(ssm: Client, eks: Client, fetch: Fetch, minor: str, on: date, warning_days: int) -> list[Drift]:
    """Every pin of the minor against AWS and the chart repositories."""
    return [
        kubernetes_drift(eks, minor, on, warning_days),
        ami_drift(ssm, minor),
        *addon_drift(eks, minor),
        *chart_drift(fetch),
    ]


def failed(drifts: Sequence[Drift]) -> bool:
    """Whether any verdict fails the check."""
    return any(d.failing for d in drifts)
