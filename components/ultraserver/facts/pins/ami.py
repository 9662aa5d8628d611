"""The EKS-optimized AL2023 ARM64 NVIDIA AMI: SSM parameter names, the pinned releases and the GB200 minimum, and
what the node user data acts on in the image (the host IMEX unit, the NodeConfig MIME type, the NVIDIA driver params).

The minimum is the EKS UltraServer guide's, word for word: "It is recommend to use EKS-optimized AMI release
`v20251103` or later, which includes NVIDIA driver version 580" (awsdocs/amazon-eks-user-guide
``latest/ug/ml/ml-eks-nvidia-ultraserver.adoc`` line 24 at commit e0464053baeb13f4f102ceb426ff3df137afb7b0, checked
2026-11-25). Driver 580 itself came earlier: awslabs/amazon-eks-ami ``CHANGELOG.md`` puts it in the 1.34 AMIs of
v20251023 and the 1.33 AMIs of v20251029; v20251103 is a git tag with no CHANGELOG section. The toolkit enforces the
guide's v20251103, not the first driver-580 release. A pinned release
resolves through its own SSM parameter,
``/aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/arm64/nvidia/amazon-eks-node-al2023-arm64-nvidia-<k8s>-v<YYYYMMDD>/image_id``
(the dated form Karpenter resolves pinned AL2023 aliases through, e.g. its e2e suite's
``.../x86_64/standard/amazon-eks-node-al2023-x86_64-standard-<k8s>-v20241213/image_id``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

from ultraserver.facts.kubernetes.eks_versions import DEFAULT_TEXT as _EXAMPLE_MINOR
from ultraserver.problems import ConfigError, Problem

MIN_RELEASE = "20251103"
"""Oldest release date the EKS UltraServer guide recommends for GB200 (see the module docstring)."""
MIN_RELEASE_SOURCE = (
    "EKS UltraServer guide (awsdocs/amazon-eks-user-guide latest/ug/ml/ml-eks-nvidia-ultraserver.adoc:24 @e0464053)"
)
AMI_TYPE = "AL2023_ARM_64_NVIDIA"
"""EKS AMI type of the GB200 nodes: with no ImageId in the launch template EKS picks the AMI from amiType +
releaseVersion and merges its bootstrap into the user data (EKS user guide, launch-templates)."""

SSM_ROOT = "/aws/service/eks/optimized-ami"
VARIANT = "amazon-linux-2023/arm64/nvidia"

# Pinned default release version per Kubernetes minor, in the EKS form <k8s major.minor.patch>-<YYYYMMDD>
# (EKS user guide eks-linux-ami-versions: "k8s_major_version.k8s_minor_version.k8s_patch_version-release_date").
# Pinning keeps every `pulumi up` on the same AMI: following SSM's "recommended" would roll capacity-block
# groups whenever AWS publishes a new AMI. To move on, read the SSM parameter
#   /aws/service/eks/optimized-ami/<k8s>/amazon-linux-2023/arm64/nvidia/recommended/release_version
# and follow docs/versions.md. The keys of this table are the minors a stack may run (with the EKS calendar and the
# floor, facts/kubernetes/eks_versions.py): a minor gets in once its AMI release is pinned here.
# Source: awslabs/amazon-eks-ami CHANGELOG.md at commit 81fec2e (2026-07-23), section "AMI Release v20260714", the
# newest release with notes (tag v20260724 has none), checked 2026-11-25.
RELEASE = "20260714"
RELEASE_SOURCE = "awslabs/amazon-eks-ami CHANGELOG.md @81fec2e, AMI Release v20260714"


@dataclass(frozen=True)
class ReleaseDriver:
    """The NVIDIA driver of one AMI release's AL2023 ARM64 NVIDIA images, as its source gives it."""

    driver: str
    """A full version (580.159.03) or only its branch (580) when the source names no more."""
    source: str

    @property
    def branch(self) -> str:
        """The driver's major version (its branch, R580 -> 580)."""
        return self.driver.split(".")[0]


# The driver branch is a fact per release: R595 breaks GPUDirect RDMA over EFA on GB200 (facts/pins/known_bad.py), so
# a release whose driver nobody read is not assumed to be R580. Releases after v20260714 (v20260724 to v20261012)
# have notes that were not read for the driver, or notes that do not name it: unknown here.
RELEASE_DRIVERS: dict[str, ReleaseDriver] = {
    "20251103": ReleaseDriver("580", MIN_RELEASE_SOURCE),
    RELEASE: ReleaseDriver("580.159.03", RELEASE_SOURCE),
}
NVIDIA_DRIVER = RELEASE_DRIVERS[RELEASE].driver
"""NVIDIA driver of the pinned release's AL2023 ARM64 NVIDIA AMIs (same CHANGELOG section)."""
RELEASE_CHECKED = date(2026, 11, 25)
RELEASE_VERSIONS: dict[str, str] = {
    "1.33": f"1.33.13-{RELEASE}",
    "1.34": f"1.34.9-{RELEASE}",
    "1.35": f"1.35.6-{RELEASE}",
    "1.36": f"1.36.2-{RELEASE}",
}
EXAMPLE_RELEASE = RELEASE_VERSIONS[_EXAMPLE_MINOR]
"""The pinned release of the default minor, the example error messages give."""
_K8S = re.compile(r"1\.[0-9]{2,}")
# v20260714 (GitHub tag), 20260714, or 1.35.6-20260714 (the SSM release_version form).
_RELEASE = re.compile(r"(?:v|(?P<k8s>1\.[0-9]+\.[0-9]+)-)?(?P<date>[0-9]{8})")


def checked_version(kubernetes_version: str, key: str = "kubernetesVersion") -> str:
    """The Kubernetes minor version, or ConfigError naming ``key``."""
    if not _K8S.fullmatch(kubernetes_version):
        raise ConfigError(
            Problem(key, kubernetes_version, "a Kubernetes minor version such as 1.33", "use the form 1.33")
        )
    return kubernetes_version


def _checked_release(value: str) -> re.Match[str]:
    """The parsed release string, or ConfigError."""
    problem = release_problem(value)
    if problem:
        raise ConfigError(problem)
    match = _RELEASE.fullmatch(value)
    assert match is not None  # release_problem accepted it
    return match


def pinned_ssm_parameter_name(kubernetes_version: str, release: str) -> str:
    """SSM parameter holding the AMI ID of one pinned AL2023 ARM64 NVIDIA release."""
    version = checked_version(kubernetes_version)
    match = _checked_release(release)
    if match["k8s"] and not match["k8s"].startswith(f"{version}."):
        raise ConfigError(
            Problem(
                "amiRelease",
                release,
                f"a release built for the cluster's Kubernetes {version} (this one is for {match['k8s']})",
                f"pin a {version} release",
            )
        )
    name = f"amazon-eks-node-al2023-arm64-nvidia-{version}-v{match['date']}"
    return f"{SSM_ROOT}/{version}/{VARIANT}/{name}/image_id"


def release_date_in(text: str) -> str | None:
    """The YYYYMMDD release date in any release text: 1.35.6-20260714, v20260714, or an AMI name."""
    dates = re.findall(r"(?<![0-9])(20[0-9]{6})(?![0-9])", text)
    return dates[-1] if dates else None


def release_driver(release_date: str) -> ReleaseDriver | None:
    """The NVIDIA driver of an AMI release (YYYYMMDD), or None when no source read gave it."""
    return RELEASE_DRIVERS.get(release_date)


def default_release_version(kubernetes_version: str) -> str:
    """The pinned AL2023_ARM_64_NVIDIA release version for a Kubernetes minor ('' when none is pinned)."""
    return RELEASE_VERSIONS.get(kubernetes_version, "")


_RELEASE_VERSION = re.compile(r"(?P<minor>1\.[0-9]+)\.[0-9]+-(?P<date>[0-9]{8})")


def release_version_problem(
    value: str, kubernetes_version: str, today: date, key: str = "releaseVersion"
) -> Problem | None:
    """An EKS AMI release version (1.35.6-20260714) that does not fit the cluster, as a Problem at ``key``, or None."""
    match = _RELEASE_VERSION.fullmatch(value)
    if match is None:
        allowed: str | None = f"an EKS AMI release version such as {EXAMPLE_RELEASE} (<k8s version>-<YYYYMMDD>)"
    elif match["minor"] != kubernetes_version:
        example = default_release_version(kubernetes_version) or f"{kubernetes_version}.<patch>-<date>"
        allowed = f"a release of the cluster's Kubernetes {kubernetes_version}, e.g. {example}"
    else:
        allowed = _date_allowed(match["date"], today)
    return Problem(key, value, allowed, "remove it to take the toolkit's pin") if allowed else None


def _date_allowed(text: str, today: date | None) -> str | None:
    """What a YYYYMMDD release date must be when it is invalid, before driver 580, or in the future; else None."""
    try:
        day = datetime.strptime(text, "%Y%m%d").date()
    except ValueError:
        return "a release with a valid date (YYYYMMDD)"
    if text < MIN_RELEASE:
        return f"release {MIN_RELEASE} or later (the {MIN_RELEASE_SOURCE} recommends v{MIN_RELEASE} or later for GB200)"
    if today is not None and day > today:
        return f"a release already published (dated {today:%Y%m%d} or earlier)"
    return None


def release_problem(value: str, today: date | None = None, key: str = "amiRelease") -> Problem | None:
    """An AMI release string unusable on GB200, as a Problem at ``key``, or None when it is fine."""
    match = _RELEASE.fullmatch(value) if isinstance(value, str) else None
    forms = f"v{MIN_RELEASE}, {MIN_RELEASE} or {EXAMPLE_RELEASE}"
    if match is None:
        return Problem(key, value, f"a release in one of the forms {forms}", "write the release in one of these forms")
    try:
        datetime.strptime(match["date"], "%Y%m%d")
    except ValueError:
        return Problem(key, value, f"a release with a valid date (YYYYMMDD), as in {forms}", "correct the date")
    if today is not None and datetime.strptime(match["date"], "%Y%m%d").date() > today:
        return Problem(
            key,
            value,
            f"a published release, not one dated in the future (dated {today:%Y%m%d} or earlier)",
            "pin a release that is out",
        )
    if match["date"] < MIN_RELEASE:
        return Problem(
            key,
            value,
            f"v{MIN_RELEASE} or later: the {MIN_RELEASE_SOURCE} recommends it for GB200 (NVIDIA driver 580)",
            f"use an AMI of v{MIN_RELEASE} or later",
        )
    return None


# Facts about the EKS AL2023 ARM64 NVIDIA AMI that the node user data acts on (findings in docs/node-image.md).
# The host IMEX daemon's systemd unit. The AMI build installs the nvidia-imex package but enables only
# nvidia-fabricmanager and nvidia-persistenced (awslabs/amazon-eks-ami
# templates/al2023/provisioners/install-nvidia-driver.sh; templates/al2023/runtime/gpu/setup-nvidia.sh).
# Whether the package's own preset enables the unit is UNVERIFIED. A running host daemon breaks DRA-managed
# ComputeDomains (kubernetes-sigs/dra-driver-nvidia-gpu issue #524: "you need to disable that so that the DRA
# driver can orchestrate the IMEX daemons"), so the nodes disable and mask it either way.
HOST_IMEX_SERVICE = "nvidia-imex.service"

NODECONFIG_CONTENT_TYPE = "application/node.eks.aws"
"""MIME type of a nodeadm NodeConfig part in EC2 user data (amazon-eks-ami, nodeadm docs)."""

# GPUDirect RDMA between EFA and GB200 GPUs on the R580 driver needs the NVIDIA kernel module parameter
# NVreg_GrdmaPciTopoCheckOverride=1; without it NCCL silently falls back to TCP sockets (NVIDIA/aicr pull request
# #668, "required on the NVIDIA driver so EFA can attach dma-buf to the Grace PCI topology. Without it, NCCL silently
# falls back to Socket on NET", merged 2026-04-24). A node shows the value in /proc/driver/nvidia/params as
# "GrdmaPciTopoCheckOverride: 1" (NVIDIA/aicr issue #2459, which also reports that the R595 driver no longer has the
# parameter). Whether the EKS AL2023 NVIDIA AMI sets it is UNVERIFIED.
GRDMA_TOPO_OVERRIDE = "NVreg_GrdmaPciTopoCheckOverride"
NVIDIA_PARAMS_FILE = "/proc/driver/nvidia/params"
