"""Kubernetes versions: the default, the GB200 floor, the EKS release calendar and its prices.

GB200 UltraServers need Dynamic Resource Allocation (ComputeDomains), so the floor is 1.33 (the EKS UltraServer
guide, ml-eks-nvidia-ultraserver.adoc:20 @e0464053: "Amazon EKS supports P6e-GB200 UltraServers for Kubernetes
versions 1.33 and above"). New stacks default to DEFAULT_TEXT, a minor in standard support with DRA at
resource.k8s.io/v1; which minors a stack may use also depends on the AMI pin table (``facts/pins/ami.py``): a minor
without a pinned GB200 AMI release is refused.

The calendar comes from the EKS user guide, awsdocs/amazon-eks-user-guide
``latest/ug/versioning/kubernetes-versions.adoc`` ("A minor version is under standard support in Amazon EKS
for the first 14 months after it's released. Once a version is past the end of standard support date, it
enters extended support for the next 12 months."). ``aws eks describe-cluster-versions`` returns the same
dates for an account. Rows marked ``verified=False`` were not read in the primary source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta

from ultraserver.facts.pins.charts import version_tuple

FLOOR = (1, 33)
"""Oldest Kubernetes minor the toolkit deploys (DRA for ComputeDomains)."""
FLOOR_TEXT = "1.33"
DEFAULT_TEXT = "1.35"
"""Kubernetes minor of new stacks and of the Cluster component when none is given (the one home of the default)."""
DRA_GA_TEXT = "1.34"
"""First minor that serves DRA at resource.k8s.io/v1 (GA); 1.33 serves only the beta versions (KEP-4381)."""
BETA_APIS_ON: dict[str, tuple[tuple[str, str], ...]] = {
    "1.33": (("resource.k8s.io", "v1beta1"), ("resource.k8s.io", "v1beta2")),
}
"""(group, version) of the beta APIs EKS serves on a minor beside its GA ones: DRA before its GA in 1.34 (the project's
reference, current-versions.md: "EKS 1.33 serves only the beta DRA API (v1beta1, v1beta2)", from the EKS user guide's
DRA pages; that EKS turns on no other beta API by default is UNVERIFIED)."""

# Control-plane prices per cluster-hour (US East, USD). Source: the AWS containers blog "Amazon EKS extended support
# for Kubernetes versions pricing" (aws.amazon.com/blogs/containers/amazon-eks-extended-support-for-kubernetes-versions-
# pricing, 2024; read in a stored copy): "charged a total of $0.60 per cluster per hour ... clusters running
# Kubernetes versions in standard support ... $0.10 per cluster per hour". UNVERIFIED on the EKS pricing page itself
# (https://aws.amazon.com/eks/pricing/ was not in the searched corpora); dated third-party copies agree (Vantage and
# CloudZero, checked 2026-11-25).
STANDARD_PRICE_PER_HOUR = 0.10
EXTENDED_PRICE_PER_HOUR = 0.60
PRICE_SOURCE = (
    "AWS containers blog 'Amazon EKS extended support for Kubernetes versions pricing' "
    "(unverified on the EKS pricing page)"
)
SUPPORT_WARNING_DAYS = 90
"""Plans warn from this many days before a minor leaves standard support (time to upgrade at capacity 0)."""


@dataclass(frozen=True)
class EksVersion:
    """One Kubernetes minor in EKS."""

    version: str
    released: date | None
    """Available in EKS; None when no primary source gives the date (the minor is then not offered here)."""
    end_of_standard_support: date | None
    end_of_extended_support: date | None
    verified: bool = True
    """Whether the row was read in the EKS user guide (False: third-party copies of the AWS table)."""


EKS_VERSIONS: tuple[EksVersion, ...] = (
    EksVersion("1.31", date(2024, 9, 26), date(2025, 11, 26), date(2026, 11, 26)),
    EksVersion("1.32", date(2025, 1, 23), date(2026, 3, 23), date(2027, 3, 23)),
    EksVersion("1.33", date(2025, 5, 29), date(2026, 7, 29), date(2027, 7, 29)),
    EksVersion("1.34", date(2025, 10, 2), date(2026, 12, 2), date(2027, 12, 2)),
    # UNVERIFIED in the EKS guide: a third-party copy of the AWS table row and endoflife.date agree.
    EksVersion("1.35", date(2026, 1, 27), date(2027, 3, 27), date(2028, 3, 27), verified=False),
    # UNVERIFIED dates: availability is in the EKS guide; dates from a third-party blog, ends derived (14 + 12 months).
    EksVersion("1.36", date(2026, 6, 2), date(2027, 8, 2), date(2028, 8, 2), verified=False),
    # Listed by EKS: AMI release v20261012 (2026-10-14) heads its table "Source AMI Name (K8s 1.36 – 1.37)" and the CDK
    # docs (v2.277.0) have eks.KubernetesVersion.V1_37. No primary source read gives its dates: unknown, not guessed.
    EksVersion("1.37", None, None, None, verified=False),
)
_BY_VERSION = {v.version: v for v in EKS_VERSIONS}
_MINOR = re.compile(r"1\.([0-9]+)")


def is_minor(version: str) -> bool:
    """Whether the text is a Kubernetes minor version such as 1.33."""
    return bool(_MINOR.fullmatch(version))


def eks_version(version: str) -> EksVersion | None:
    """The EKS calendar row of a minor version, or None when EKS never offered it (or the table does not know it)."""
    return _BY_VERSION.get(version)


def offered(version: str, on: date) -> bool:
    """Whether EKS offers the version for new clusters on a date (released, not past extended support)."""
    row = eks_version(version)
    if row is None or row.released is None:
        return False
    return row.released <= on and (row.end_of_extended_support is None or on < row.end_of_extended_support)


def past_standard_support(version: str, on: date) -> bool:
    """Whether the version is in (paid) extended support, or past it, on a date; False for unknown versions."""
    row = eks_version(version)
    return row is not None and row.end_of_standard_support is not None and on >= row.end_of_standard_support


def support_status(version: str, on: date) -> str:
    """'standard', 'extended' (paid), 'end of support' or 'unknown' for a minor on a date."""
    row = eks_version(version)
    if row is None or row.released is None:
        return "unknown"
    if row.end_of_extended_support is not None and on >= row.end_of_extended_support:
        return "end of support"
    return "extended" if past_standard_support(version, on) else "standard"


def leaving_standard_support(version: str, on: date) -> EksVersion | None:
    """The calendar row when the minor is past standard support or leaves it within SUPPORT_WARNING_DAYS."""
    row = eks_version(version)
    if row is None or row.end_of_standard_support is None:
        return None
    return None if (row.end_of_standard_support - on).days > SUPPORT_WARNING_DAYS else row


def days_of_standard_support(version: str, on: date) -> int | None:
    """Days from a date until the minor leaves standard support (negative once past it); None when unknown."""
    row = eks_version(version)
    if row is None or row.end_of_standard_support is None:
        return None
    return (row.end_of_standard_support - on).days


def is_newer(version: str, than: str) -> bool:
    """Whether one dotted version is newer than another (False when either does not parse)."""
    a, b = version_tuple(version), version_tuple(than)
    return a is not None and b is not None and a > b


def at_floor(version: str) -> bool:
    """Whether a dotted version is at or above the GB200 floor (DRA)."""
    return (version_tuple(version) or ()) >= FLOOR


def supported(versions: tuple[str, ...], on: date) -> list[str]:
    """The versions of a list at or above the floor that EKS offers on a date."""
    return [v for v in versions if at_floor(v) and offered(v, on)]


def offered_span(versions: tuple[str, ...]) -> tuple[date, date] | None:
    """The first and last day EKS offers any version of a list at or above the floor (the calendar above)."""
    rows = [r for v in versions if at_floor(v) and (r := eks_version(v)) is not None and r.released is not None]
    ends = [r.end_of_extended_support for r in rows if r.end_of_extended_support is not None]
    if not rows or not ends:
        return None
    return min(r.released for r in rows if r.released is not None), max(ends) - timedelta(days=1)
