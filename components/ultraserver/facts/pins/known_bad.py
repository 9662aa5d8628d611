"""Releases known to break GB200 nodes: the one list, each entry with its source's own words and the fix.

A node that reboots or loses GPUDirect RDMA stops the whole NVL72 job, so the plan refuses these rather than
warning. Config rules (``config/release_rules.py``) and ``ultraserver versions --check`` read this list; nothing
else holds a known-bad version.
"""

from __future__ import annotations

from dataclasses import dataclass

from ultraserver.facts.pins.charts import version_tuple


@dataclass(frozen=True)
class BadAmiReleases:
    """EKS AMI releases (YYYYMMDD) that break nodes on a range of Kubernetes minors."""

    releases: tuple[str, ...]
    minors: tuple[str, str]
    """First and last Kubernetes minor affected, both included."""
    quote: str
    source: str
    fixed_in: str
    """The first release that fixes it (YYYYMMDD)."""
    fix_quote: str

    def affects(self, release_date: str, minor: str) -> bool:
        """Whether a release date on a Kubernetes minor is one of the bad ones."""
        low, high = (version_tuple(m) or () for m in self.minors)
        return release_date in self.releases and low <= (version_tuple(minor) or ()) <= high


@dataclass(frozen=True)
class BadDriverBranch:
    """An NVIDIA driver branch that breaks GB200 when EFA carries GPU traffic (GPUDirect RDMA)."""

    branch: str
    """The major version, e.g. 595."""
    quote: str
    source: str
    hold_at: str
    """The driver the source holds at instead."""


# awslabs/amazon-eks-ami GitHub releases v20261003 and v20261012 (read 2026-11-28, quoted in the project's
# current-versions reference; the release pages, not the CHANGELOG, which the stored copies stop before).
AMI_RELEASES: tuple[BadAmiReleases, ...] = (
    BadAmiReleases(
        releases=("20260930", "20261003"),
        minors=("1.31", "1.35"),
        quote="kernel 6.12.110 \u2026 might cause kernel panic on certain instances for kubernetes versions 1.31 to "
        "1.35 (#2845)",
        source="awslabs/amazon-eks-ami release v20261003 notes",
        fixed_in="20261012",
        fix_quote="v20261012: kernel 6.12.111-136.204 \u201cfixes a kernel panic during memory reclaim (#2845) that "
        "caused nodes to unexpectedly reboot on releases v20260930 and v20261003\u201d",
    ),
)

# NVIDIA/aicr issue #2383 "Driver pin: R595 is not adoptable on P6e EFA — holding at 580.173.02" (read 2026-11-28):
# NCCL aborted with "NVRM: dma-buf attach failed: topology not supported for mapping type FORCE_PCIE" (measured on
# GB300); it quotes NVIDIA calling R595 backward incompatible with P6e-GB200 EFA, and R595 drops
# NVreg_GrdmaPciTopoCheckOverride (ami.GRDMA_TOPO_OVERRIDE), which GPUDirect RDMA over EFA needs on Grace.
DRIVER_BRANCHES: tuple[BadDriverBranch, ...] = (
    BadDriverBranch(
        branch="595",
        quote="R595 is \u201cbackward incompatible with P6e-GB200 EFA\u201d: it drops "
        "NVreg_GrdmaPciTopoCheckOverride, and NCCL aborts with \u201cdma-buf attach failed: topology not supported "
        "for mapping type FORCE_PCIE\u201d",
        source="NVIDIA/aicr#2383",
        hold_at="580.173.02",
    ),
)


def bad_ami_release(release_date: str, minor: str) -> BadAmiReleases | None:
    """The known-bad entry for an AMI release date on a Kubernetes minor, or None."""
    return next((bad for bad in AMI_RELEASES if bad.affects(release_date, minor)), None)


def bad_driver_branch(driver: str) -> BadDriverBranch | None:
    """The known-bad entry for a driver version or branch (595.91.07 or 595) when EFA carries GPU traffic, or None."""
    branch = driver.split(".")[0]
    return next((bad for bad in DRIVER_BRANCHES if bad.branch == branch), None)
