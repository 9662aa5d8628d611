"""A GPU group's node image: an EKS AMI release of the cluster's version or a custom AMI with its release, and
not on the known-bad list (``facts/pins/known_bad.py``).

An AMI release that panics the kernel on the cluster's minor is refused. A release whose NVIDIA driver is on a
branch that breaks GPUDirect RDMA over EFA is refused when the group's nodes have EFA interfaces (EFA then carries
the GPUs' traffic between UltraServers); a release whose driver no source gave is warned about, since nothing shows
it is not that branch.
"""

from __future__ import annotations

from datetime import date

from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.facts.hardware import efa
from ultraserver.facts.pins import ami, known_bad
from ultraserver.problems import WARNING, ConfigError, Problem


def _image(g: GpuNodeGroupSettings, at: str) -> tuple[str, str] | None:
    """The key and value naming the group's node image release, or None when it names none."""
    if g.ami_release:
        return f"{at}.amiRelease", g.ami_release
    if g.release_version:
        return f"{at}.releaseVersion", g.release_version
    return None


def _carries_gpu_traffic(g: GpuNodeGroupSettings) -> bool:
    """Whether the nodes have EFA interfaces (an invalid layout is the efa_layout rule's finding, not this one's)."""
    try:
        return any(i.interface_type in efa.EFA_TYPES for i in g.efa_interfaces)
    except ConfigError:
        return False


def known_bad_releases(g: GpuNodeGroupSettings, at: str, version: str, today: date) -> list[Problem]:
    """The group's AMI release is not known to break GB200 nodes on the cluster's minor or with EFA."""
    image = _image(g, at)
    release_date = ami.release_date_in(image[1]) if image else None
    if image is None or release_date is None:
        return []
    key, value = image
    found = []
    bad = known_bad.bad_ami_release(release_date, version)
    if bad:
        found.append(
            Problem(
                key,
                value,
                f"a release other than v{', v'.join(bad.releases)} on Kubernetes {bad.minors[0]} to {bad.minors[1]}: "
                f"{bad.quote} ({bad.source})",
                f"use v{bad.fixed_in} or later ({bad.fix_quote}), or remove it to take the toolkit's pin",
            )
        )
    if _carries_gpu_traffic(g):
        found += _driver_problems(key, value, release_date)
    return found


def _driver_problems(key: str, value: str, release_date: str) -> list[Problem]:
    driver = ami.release_driver(release_date)
    branches = ", ".join(f"R{b.branch}" for b in known_bad.DRIVER_BRANCHES)
    if driver is None:
        return [
            Problem(
                key,
                value,
                f"a release whose NVIDIA driver branch is known: this one's was not read, and {branches} breaks "
                f"GPUDirect RDMA over EFA on GB200 ({known_bad.DRIVER_BRANCHES[0].source})",
                "check the release notes' NVIDIA driver (or /proc/driver/nvidia/version on a node) before the block "
                "starts, or remove it to take the toolkit's pin",
                WARNING,
            )
        ]
    bad = known_bad.bad_driver_branch(driver.driver)
    if bad is None:
        return []
    return [
        Problem(
            key,
            value,
            f"an AMI whose NVIDIA driver is not R{bad.branch} while EFA carries GPU traffic: this release ships "
            f"{driver.driver} ({driver.source}); {bad.quote} ({bad.source})",
            f"use a release with an R580 driver (the source holds at {bad.hold_at}), or remove it to take the "
            "toolkit's pin",
        )
    ]


def amis(g: GpuNodeGroupSettings, at: str, version: str, today: date) -> list[Problem]:
    """An EKS AMI release of the cluster's version, or a custom AMI with its release; none in the future."""
    found = []
    if g.ami_release:
        found += [p for p in [ami.release_problem(g.ami_release, today, f"{at}.amiRelease")] if p]
    if g.ami_release and not g.ami_id:
        pin = ami.default_release_version(version)
        found.append(
            Problem(
                f"{at}.amiRelease",
                g.ami_release,
                "amiRelease only with amiId (a custom AMI)",
                f"pin the EKS AMI with releaseVersion (e.g. {pin or ami.EXAMPLE_RELEASE}) and remove amiRelease",
            )
        )
    if g.ami_id and not g.ami_release:
        found.append(
            Problem(
                f"{at}.amiId",
                g.ami_id,
                "a pinned AMI together with amiRelease",
                "set amiRelease to the AMI's release (v20251103 or later) so the NVIDIA driver can be checked",
            )
        )
    custom = g.ami_id or g.ami_release
    if custom and "release_version" in g.model_fields_set:
        found.append(
            Problem(
                f"{at}.releaseVersion",
                g.release_version,
                "releaseVersion only with the EKS AMI (not with amiId/amiRelease)",
                "remove releaseVersion, or remove amiId and amiRelease",
            )
        )
    elif g.release_version:
        found += [
            p for p in [ami.release_version_problem(g.release_version, version, today, f"{at}.releaseVersion")] if p
        ]
    return found
