"""Known-bad AMI releases and driver branches are refused with their source's words (facts/pins/known_bad.py)."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest
from helpers.stacks import stack_config
from ultraserver.config.settings import parse_settings, settings_warnings
from ultraserver.facts.pins import ami, known_bad
from ultraserver.problems import ConfigError

TODAY = date(2026, 11, 28)
PRIMARY_ONLY = [{"networkCardIndex": 0, "deviceIndex": 0, "interfaceType": "interface"}]


def config(kubernetes_version: str = "1.35", **group: Any) -> dict[str, Any]:
    found = copy.deepcopy(stack_config("gb200-x72"))
    found["ultraserver-eks:cluster"]["kubernetesVersion"] = kubernetes_version
    found["ultraserver-eks:gpuNodeGroups"][0].update(group)
    return found


def refusal(c: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as info:
        parse_settings(c, today=TODAY)
    return "\n".join(str(p) for p in info.value.items)


@pytest.mark.parametrize("release", ["1.35.7-20260930", "1.35.7-20261003"])
def test_kernel_panic_releases_are_refused_on_1_35_with_the_quote_and_the_fix(release: str) -> None:
    text = refusal(config(releaseVersion=release))
    assert f"gpuNodeGroups[0].releaseVersion: got '{release}'" in text
    assert "might cause kernel panic on certain instances for kubernetes versions 1.31 to 1.35" in text
    assert "use v20261012 or later" in text and "fixes a kernel panic during memory reclaim (#2845)" in text


def test_a_custom_ami_of_a_kernel_panic_release_is_refused_too() -> None:
    text = refusal(config(amiRelease="v20261003", amiId="ami-0123456789abcdef0"))
    assert "gpuNodeGroups[0].amiRelease: got 'v20261003'" in text and "#2845" in text


def test_the_kernel_panic_releases_are_not_refused_on_1_36_which_runs_kernel_6_18() -> None:
    settings = parse_settings(config("1.36", releaseVersion="1.36.3-20261003"), today=TODAY)
    assert not [p for p in settings_warnings(settings, TODAY) if "kernel panic" in str(p)]


def test_a_release_whose_driver_is_unknown_is_warned_about_when_efa_carries_gpu_traffic() -> None:
    settings = parse_settings(config("1.36", releaseVersion="1.36.3-20261003"), today=TODAY)
    text = "\n".join(str(p) for p in settings_warnings(settings, TODAY))
    assert "releaseVersion: got '1.36.3-20261003'" in text and "R595" in text and "NVIDIA/aicr#2383" in text


def test_no_driver_warning_without_efa_interfaces() -> None:
    settings = parse_settings(config("1.36", releaseVersion="1.36.3-20261003", efaLayout=PRIMARY_ONLY), today=TODAY)
    assert not [p for p in settings_warnings(settings, TODAY) if "R595" in str(p)]


def test_the_pinned_release_has_a_known_r580_driver_and_no_finding() -> None:
    settings = parse_settings(config(), today=TODAY)
    assert ami.release_driver(ami.RELEASE) is not None and ami.release_driver(ami.RELEASE).branch == "580"  # type: ignore[union-attr]
    assert not [p for p in settings_warnings(settings, TODAY) if "R595" in str(p) or "#2845" in str(p)]
    assert all(known_bad.bad_ami_release(ami.RELEASE, minor) is None for minor in ami.RELEASE_VERSIONS)


def test_a_release_with_an_r595_driver_is_refused_when_efa_carries_gpu_traffic(monkeypatch: Any) -> None:
    # No AMI release read so far ships R595; a release whose notes name it gets this entry in facts/pins/ami.py.
    monkeypatch.setitem(ami.RELEASE_DRIVERS, "20261012", ami.ReleaseDriver("595.58.03", "release notes"))
    text = refusal(config(releaseVersion="1.35.8-20261012"))
    assert "releaseVersion: got '1.35.8-20261012'" in text and "ships 595.58.03" in text
    assert "backward incompatible with P6e-GB200 EFA" in text and "NVreg_GrdmaPciTopoCheckOverride" in text
    parse_settings(config(releaseVersion="1.35.8-20261012", efaLayout=PRIMARY_ONLY), today=TODAY)


def test_the_known_bad_list_names_a_source_and_fix_for_every_entry() -> None:
    for bad in known_bad.AMI_RELEASES:
        assert bad.source and bad.quote and bad.fixed_in > max(bad.releases)
    for branch in known_bad.DRIVER_BRANCHES:
        assert branch.source and branch.quote and known_bad.bad_driver_branch(branch.hold_at) is None
