"""The EKS version calendar, the GB200 floor, the pinned AMI releases and the instance facts settings rely on."""

from __future__ import annotations

import copy
from datetime import date

import pytest
from helpers.stacks import STACKS, stack_config
from ultraserver.config.examples import EXAMPLE_RESERVATION_IDS
from ultraserver.config.settings import parse_settings
from ultraserver.facts.hardware import instances
from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.pins import ami
from ultraserver.problems import ConfigError


def test_calendar_follows_the_14_plus_12_month_rule() -> None:
    for row in eks_versions.EKS_VERSIONS:
        if row.released is None or row.end_of_standard_support is None or row.end_of_extended_support is None:
            continue
        months = (row.end_of_standard_support.year - row.released.year) * 12 + (
            row.end_of_standard_support.month - row.released.month
        )
        assert months == 14, row
        assert (
            row.end_of_extended_support.replace(year=row.end_of_extended_support.year - 1)
            == row.end_of_standard_support
        )


@pytest.mark.parametrize(
    ("version", "on", "past"),
    [
        ("1.33", date(2026, 7, 28), False),
        ("1.33", date(2026, 7, 29), True),
        ("1.34", date(2026, 11, 23), False),
        ("1.99", date(2026, 11, 23), False),
    ],
)
def test_past_standard_support(version: str, on: date, past: bool) -> None:
    assert eks_versions.past_standard_support(version, on) is past


def test_offered_has_both_bounds() -> None:
    assert not eks_versions.offered("1.35", date(2026, 1, 26))
    assert eks_versions.offered("1.35", date(2026, 1, 27))
    assert not eks_versions.offered("1.31", date(2026, 11, 26))
    assert eks_versions.supported(("1.31", "1.33", "1.34"), date(2026, 11, 23)) == ["1.33", "1.34"]


@pytest.mark.parametrize(
    ("version", "ok"), [("1.32", False), ("1.33", True), ("1.35", True), ("1.36", True), ("1.37", False)]
)
def test_settings_take_only_versions_eks_offers_and_the_toolkit_pins(version: str, ok: bool) -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:cluster"]["kubernetesVersion"] = version
    if ok:
        settings = parse_settings(config, today=date(2026, 11, 23))
        assert settings.gpu_node_groups[0].release_version == ami.RELEASE_VERSIONS[version]
    else:
        with pytest.raises(ConfigError, match="kubernetesVersion"):
            parse_settings(config, today=date(2026, 11, 23))


def test_a_minor_is_allowed_only_once_its_ami_release_is_pinned(monkeypatch: pytest.MonkeyPatch) -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:cluster"]["kubernetesVersion"] = "1.36"
    monkeypatch.setattr(ami, "RELEASE_VERSIONS", {k: v for k, v in ami.RELEASE_VERSIONS.items() if k != "1.36"})
    with pytest.raises(ConfigError, match="pins no GB200 AMI release"):
        parse_settings(config, today=date(2026, 11, 23))


def test_default_is_one_home_and_every_shipped_stack_uses_it() -> None:
    minimal = {
        "aws:region": "us-west-2",
        "ultraserver-eks:cluster": {"name": "c1", "endpointPublicAccessCidrs": ["203.0.113.0/24"]},
        "ultraserver-eks:network": {"availabilityZones": ["us-west-2a", "us-west-2b"]},
    }
    assert parse_settings(minimal, today=date(2026, 11, 23)).cluster.kubernetes_version == eks_versions.DEFAULT_TEXT
    for stack in STACKS:
        assert stack_config(stack)["ultraserver-eks:cluster"]["kubernetesVersion"] == eks_versions.DEFAULT_TEXT


def test_pinned_releases_match_their_minor_and_the_guide_minimum() -> None:
    assert ami.RELEASE_VERSIONS == {
        "1.33": "1.33.13-20260714",
        "1.34": "1.34.9-20260714",
        "1.35": "1.35.6-20260714",
        "1.36": "1.36.2-20260714",
    }
    for minor, release in ami.RELEASE_VERSIONS.items():
        assert ami.release_version_problem(release, minor, date(2026, 11, 23)) is None


@pytest.mark.parametrize(
    ("release", "says"),
    [
        ("1.34.2-20260120", "Kubernetes 1.33"),
        ("1.33.1-20250519", "20251103 or later"),
        ("1.33.9-20251029", "EKS UltraServer guide"),
        ("1.33.9-20991231", "already published"),
        ("20251103", "release version such as"),
    ],
)
def test_release_version_problems(release: str, says: str) -> None:
    problem = ami.release_version_problem(release, "1.33", date(2026, 11, 23))
    assert problem is not None and problem.key == "releaseVersion" and says in problem.allowed


def test_future_ami_release_is_refused() -> None:
    problem = ami.release_problem("v20991231", date(2026, 11, 23))
    assert problem is not None and "dated in the future (dated 20261123 or earlier)" in problem.allowed


def test_instance_store_disks_and_architecture() -> None:
    assert instances.instance_store_disks(instances.GB200_INSTANCE_TYPE) == 3 < instances.RAID10_MIN_DISKS
    assert instances.instance_store_disks("p5.48xlarge") == 8
    assert instances.architecture("m7g.xlarge") == "arm64"
    assert instances.architecture("c7gn.large") == "arm64"
    assert instances.architecture("m7i.xlarge") == "x86_64"
    assert instances.architecture(instances.GB200_INSTANCE_TYPE) == "arm64"


def test_example_reservation_ids_cover_the_shipped_stacks() -> None:
    shipped = {
        rid
        for s in STACKS
        for g in parse_settings(stack_config(s)).gpu_node_groups
        for rid in g.capacity_reservation_ids
    }
    assert shipped <= EXAMPLE_RESERVATION_IDS


def test_1_37_is_listed_without_invented_dates_and_is_not_offered() -> None:
    row = eks_versions.eks_version("1.37")
    assert row is not None and not row.verified
    assert (row.released, row.end_of_standard_support, row.end_of_extended_support) == (None, None, None)
    assert not eks_versions.offered("1.37", date(2026, 11, 28))
    assert eks_versions.support_status("1.37", date(2026, 11, 28)) == "unknown"
    assert eks_versions.days_of_standard_support("1.34", date(2026, 11, 28)) == 4
