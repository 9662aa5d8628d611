"""AMI SSM parameter names and the v20251103 minimum release."""

from __future__ import annotations

import pytest
from ultraserver.facts.pins import ami
from ultraserver.problems import ConfigError


@pytest.mark.parametrize("release", ["v20251103", "20251103", "1.33.5-20251103"])
def test_pinned_parameter_accepts_every_release_form(release: str) -> None:
    assert ami.pinned_ssm_parameter_name("1.33", release) == (
        "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/arm64/nvidia/"
        "amazon-eks-node-al2023-arm64-nvidia-1.33-v20251103/image_id"
    )


def test_pinned_release_for_another_kubernetes_version_is_refused() -> None:
    with pytest.raises(
        ConfigError, match="got '1.32.9-20251201'; allowed: a release built for the cluster's Kubernetes 1.33"
    ):
        ami.pinned_ssm_parameter_name("1.33", "1.32.9-20251201")


@pytest.mark.parametrize("version", ["1.33.5", "v1.33", "133", ""])
def test_malformed_kubernetes_version(version: str) -> None:
    with pytest.raises(ConfigError, match="kubernetesVersion"):
        ami.checked_version(version)


@pytest.mark.parametrize("release", ["v20251103", "20251103", "1.33.5-20251103", "v20260115", "1.34.1-20251231"])
def test_current_releases_are_accepted(release: str) -> None:
    assert ami.release_problem(release) is None


@pytest.mark.parametrize("release", ["v20251102", "20250519", "1.32.3-20250519"])
def test_releases_before_driver_580_are_refused(release: str) -> None:
    problem = ami.release_problem(release)
    assert problem is not None and (problem.key, problem.value) == ("amiRelease", release)
    assert problem.allowed.startswith("v20251103 or later") and "v20251103 or later" in problem.fix


@pytest.mark.parametrize("release", ["latest", "v2025110", "V20251103", "1.33-20251103", "v20251303", " 20251103"])
def test_malformed_releases_are_refused(release: str) -> None:
    problem = ami.release_problem(release, key="gpu.ami_release")
    assert problem is not None and (problem.key, problem.value) == ("gpu.ami_release", release)
    assert "v20251103" in problem.allowed
