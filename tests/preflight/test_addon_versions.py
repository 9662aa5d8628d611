"""Preflight checks every pinned EKS add-on version against what EKS offers for the stack's minor."""

from __future__ import annotations

import copy

from helpers.preflight import stubbed, target
from helpers.stacks import stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.facts.pins import addons
from ultraserver.preflight.addons import check_addon_versions
from ultraserver.preflight.report import FAIL, PASS
from ultraserver.preflight.target import target_from_settings


def _offers(stub, addon: str, minor: str, versions: list[str]) -> None:  # type: ignore[no-untyped-def]
    stub.add_response(
        "describe_addon_versions",
        {"addons": [{"addonName": addon, "addonVersions": [{"addonVersion": v} for v in versions]}]},
        {"addonName": addon, "kubernetesVersion": minor},
    )


def test_an_offered_pin_passes_and_a_missing_one_fails_naming_what_eks_offers() -> None:
    eks, stub = stubbed("eks")
    _offers(stub, "coredns", "1.35", ["v1.14.3-eksbuild.3", "v1.13.2-eksbuild.11"])
    _offers(stub, "vpc-cni", "1.35", ["v1.21.1-eksbuild.8", "v1.21.1-eksbuild.7"])
    pins = {"coredns": "v1.14.3-eksbuild.3", "vpc-cni": "v1.21.1-eksbuild.5"}
    checks = check_addon_versions(target(kubernetes_version="1.35", addon_versions=pins), eks)
    stub.assert_no_pending_responses()
    by_key = {c.key: c for c in checks}
    assert by_key["add-on coredns v1.14.3-eksbuild.3"].level == PASS
    missing = by_key["add-on vpc-cni v1.21.1-eksbuild.5"]
    assert missing.level == FAIL
    assert "does not offer v1.21.1-eksbuild.5 for Kubernetes 1.35 (offers v1.21.1-eksbuild.8, v1.21.1-eksbuild.7)" in (
        missing.value
    )
    assert "acceptUntestedVersions: true" in missing.fix


def test_the_target_carries_the_stack_pins_and_overrides() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    pinned = target_from_settings(parse_settings(config)).addon_versions
    expected = {
        name: addons.pinned_version(name, "1.35")
        for name in (addons.VPC_CNI, addons.KUBE_PROXY, addons.COREDNS, addons.POD_IDENTITY_AGENT)
    }
    assert pinned == {k: v for k, v in expected.items() if v}
    config["ultraserver-eks:addons"] = {"coredns": "v1.13.2-eksbuild.11"}
    config["ultraserver-eks:acceptUntestedVersions"] = True
    assert target_from_settings(parse_settings(config)).addon_versions[addons.COREDNS] == "v1.13.2-eksbuild.11"
