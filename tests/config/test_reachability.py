"""Where `pulumi up` runs must reach the API server: unreachable combinations are settings errors."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest
from helpers.stacks import STACKS, stack_config
from ultraserver.config.reachability import deployer_reach
from ultraserver.config.settings import parse_settings, settings_warnings
from ultraserver.problems import ConfigError

PRIVATE = {"name": "c1"}
EXISTING_VPC = {
    "vpcId": "vpc-0123456789abcdef0",
    "privateSubnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
}
RUNNER_SG = {"deployerSecurityGroupIds": ["sg-0123456789abcdef0"]}
BASE: dict[str, Any] = {
    "aws:region": "us-west-2",
    "ultraserver-eks:network": {"availabilityZones": ["us-west-2a", "us-west-2b"]},
}


def problems(config: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_settings(config)
    return [str(p) for p in info.value.items]


def with_(
    cluster: dict[str, Any],
    kubernetes: dict[str, Any] | None = None,
    network: dict[str, Any] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    config = {**copy.deepcopy(BASE), "ultraserver-eks:cluster": cluster, **extra}
    if network is not None:
        config["ultraserver-eks:network"] = {**config["ultraserver-eks:network"], **network}
    if kubernetes is not None:
        config["ultraserver-eks:kubernetes"] = kubernetes
    return config


def test_private_endpoint_same_stack_without_an_in_vpc_deployer_is_refused_with_the_fixes() -> None:
    found = problems(with_(PRIVATE))
    assert len(found) == 1
    text = found[0]
    assert text.startswith("ultraserver-eks:kubernetes.layer: got 'same-stack'")
    for fix in ("endpointPublicAccessCidrs", "deployerAccess: in-vpc", "deployerSecurityGroupIds", "separate-stack"):
        assert fix in text


@pytest.mark.parametrize(
    ("cluster", "kubernetes", "access", "layer"),
    [
        ({**PRIVATE, "endpointPublicAccessCidrs": ["203.0.113.0/24"]}, None, "public-endpoint", "same-stack"),
        ({**PRIVATE, "deployerAccess": "in-vpc", **RUNNER_SG}, None, "in-vpc", "same-stack"),
        ({**PRIVATE, "deployerAccess": "in-vpc", "deployerCidrs": ["10.9.0.0/24"]}, None, "in-vpc", "same-stack"),
        ({**PRIVATE, **RUNNER_SG}, {"layer": "separate-stack"}, "", "separate-stack"),
        ({**PRIVATE, "deployerCidrs": ["10.9.0.0/24"]}, {"layer": "separate-stack"}, "", "separate-stack"),
    ],
)
def test_each_reachable_form_is_accepted(
    cluster: dict[str, Any], kubernetes: dict[str, Any] | None, access: str, layer: str
) -> None:
    settings = parse_settings(with_(cluster, kubernetes, EXISTING_VPC if access == "in-vpc" else None))
    assert settings.cluster.deployer_access == access
    assert settings.kubernetes.layer == layer


def test_public_endpoint_access_needs_cidrs() -> None:
    found = problems(with_({**PRIVATE, "deployerAccess": "public-endpoint"}))
    assert any(p.startswith("ultraserver-eks:cluster.deployerAccess: got 'public-endpoint'") for p in found)


def test_unknown_access_and_layer_are_named() -> None:
    found = "\n".join(problems(with_({**PRIVATE, "deployerAccess": "vpn"}, {"layer": "other-stack"})))
    assert "ultraserver-eks:cluster.deployerAccess: got 'vpn'; allowed: one of public-endpoint, in-vpc" in found
    assert "ultraserver-eks:kubernetes.layer: got 'other-stack'" in found


def test_in_vpc_in_a_vpc_the_stack_creates_is_refused_with_the_three_fixes() -> None:
    (text,) = problems(with_({**PRIVATE, "deployerAccess": "in-vpc", **RUNNER_SG}))
    assert text.startswith(
        "ultraserver-eks:cluster.deployerAccess: got 'in-vpc'; allowed: in-vpc only in an existing VPC"
    )
    for fix in ("network.vpcId", "endpointPublicAccessCidrs", "kubernetes.layer: separate-stack"):
        assert fix in text


def test_in_vpc_needs_the_deployer_source_for_the_cluster_security_group() -> None:
    (text,) = problems(with_({**PRIVATE, "deployerAccess": "in-vpc"}, network=EXISTING_VPC))
    assert "deployerCidrs or cluster.deployerSecurityGroupIds" in text


def test_a_separate_kubernetes_layer_needs_its_runners_source_for_the_cluster_security_group() -> None:
    (text,) = problems(with_(PRIVATE, {"layer": "separate-stack"}))
    assert text.startswith("ultraserver-eks:cluster.deployerSecurityGroupIds: got []")
    assert "kubernetes.layer: separate-stack" in text and "deployerCidrs" in text


def test_a_separate_layer_with_a_public_endpoint_needs_no_in_vpc_source() -> None:
    cluster = {**PRIVATE, "endpointPublicAccessCidrs": ["198.18.0.0/24"]}
    assert parse_settings(with_(cluster, {"layer": "separate-stack"})).cluster.deployer_cidrs == ()


def test_shipped_stacks_have_no_reachability_gap() -> None:
    for stack in STACKS:
        settings = parse_settings(stack_config(stack), stack=stack)
        assert deployer_reach(settings, date(2026, 11, 27)) == [], stack


@pytest.mark.parametrize(
    ("labels", "cidrs", "warned"),
    [
        (["ubuntu-latest"], ["198.18.0.0/24"], True),
        (["self-hosted", "gb200-deploy"], ["198.18.0.0/24"], False),
        (["ubuntu-latest"], ["0.0.0.0/0"], False),  # allowPublicEndpointFromAnywhere: hosted runners get through
    ],
)
def test_auto_deploy_from_a_hosted_runner_to_an_endpoint_limited_to_cidrs_warns(
    labels: list[str], cidrs: list[str], warned: bool
) -> None:
    cluster = {**PRIVATE, "endpointPublicAccessCidrs": cidrs, "deployerRunnerLabels": labels}
    cluster |= {"allowPublicEndpointFromAnywhere": True} if "0.0.0.0/0" in cidrs else {}
    settings = parse_settings(with_(cluster, **{"ultraserver-eks:autoDeploy": True}))
    found = settings_warnings(settings)
    hits = [p for p in found if p.key == "ultraserver-eks:cluster.deployerRunnerLabels"]
    assert bool(hits) == warned
    if warned:
        assert "GitHub-hosted runners" in hits[0].allowed and "self-hosted" in hits[0].fix


def test_deployer_sources_are_checked() -> None:
    cluster = {**PRIVATE, "deployerAccess": "in-vpc", "deployerSecurityGroupIds": ["sg-1"], "deployerCidrs": ["x"]}
    found = "\n".join(problems(with_(cluster, network=EXISTING_VPC)))
    assert "ultraserver-eks:cluster.deployerSecurityGroupIds[0]: got 'sg-1'" in found
    assert "ultraserver-eks:cluster.deployerCidrs[0]: got 'x'" in found


def test_auto_deploy_to_a_private_endpoint_needs_a_self_hosted_runner() -> None:
    in_vpc = {**PRIVATE, "deployerAccess": "in-vpc", **RUNNER_SG}
    found = problems(with_(in_vpc, network=EXISTING_VPC, **{"ultraserver-eks:autoDeploy": True}))
    assert any("cluster.deployerRunnerLabels: got ['ubuntu-latest']" in p and "self-hosted" in p for p in found)
    labels = {**in_vpc, "deployerRunnerLabels": ["self-hosted", "gb200-vpc"]}
    settings = parse_settings(with_(labels, network=EXISTING_VPC, **{"ultraserver-eks:autoDeploy": True}))
    assert settings.cluster.deployer_runner_labels == ("self-hosted", "gb200-vpc")


def test_runner_labels_are_checked() -> None:
    cluster = {**PRIVATE, "deployerAccess": "in-vpc", **RUNNER_SG, "deployerRunnerLabels": ["bad label"]}
    found = problems(with_(cluster, network=EXISTING_VPC))
    assert any(p.startswith("ultraserver-eks:cluster.deployerRunnerLabels[0]: got 'bad label'") for p in found)


def test_shipped_stacks_are_deployable_the_first_time() -> None:
    """in-vpc needs an existing VPC, which no shipped example can name; each ships a first-deploy form instead."""
    forms = set()
    for stack in STACKS:
        settings = parse_settings(stack_config(stack), stack=stack)
        if settings.kubernetes.layer == "separate-stack":
            forms.add("separate-stack")
        else:
            forms.add(settings.cluster.deployer_access)
    assert forms == {"public-endpoint", "separate-stack"}
