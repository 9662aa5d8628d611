"""Stack settings: every shipped stack is valid; every bad input is one clear message naming the key."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers.stacks import STACKS, stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.problems import ConfigError


def problems_for(stack: str, section: str, change: Any) -> list[str]:
    """Problems after applying ``change`` (a function editing the section in place) to a shipped stack."""
    config = copy.deepcopy(stack_config(stack))
    key = f"ultraserver-eks:{section}" if ":" not in section else section
    if callable(change):
        change(config[key])
    else:
        config[key] = change
    with pytest.raises(ConfigError) as info:
        parse_settings(config, stack=stack)
    return info.value.problems


@pytest.mark.parametrize("stack", STACKS)
def test_shipped_stacks_are_valid(stack: str) -> None:
    settings = parse_settings(stack_config(stack), stack=stack)
    assert settings.cluster.kubernetes_version >= "1.33"
    assert settings.gpu_node_groups, "every shipped stack plans GB200 nodes"


def test_shipped_stacks_cover_both_ultraserver_types_and_many_ultraservers() -> None:
    groups = [g for s in STACKS for g in parse_settings(stack_config(s), stack=s).gpu_node_groups]
    assert {g.ultraserver_type for g in groups} == {"u-p6e-gb200x36", "u-p6e-gb200x72"}
    assert {g.mode for g in groups} == {"managed", "self-managed"}
    assert max(g.node_groups for g in groups) > 1
    assert any(g.grouped for g in groups)


def test_defaults_fill_a_minimal_stack() -> None:
    settings = parse_settings(
        {
            "aws:region": "us-west-2",
            "ultraserver-eks:cluster": {"name": "c1", "deployerAccess": "in-vpc"},
            "ultraserver-eks:network": {"availabilityZones": ["us-west-2a", "us-west-2b"]},
        }
    )
    assert settings.cluster.kubernetes_version == "1.33"
    assert settings.cluster.public_access_cidrs == ()
    assert settings.system_node_group.instance_type == "m7g.xlarge"
    assert settings.imex_check.threshold_gbps == 700.0
    assert settings.gpu_node_groups == ()


def test_json_strings_are_read_like_yaml() -> None:
    # The Pulumi engine hands object config to programs as JSON strings.
    config = {
        k: __import__("json").dumps(v) if not isinstance(v, str) else v for k, v in stack_config("gb200-x72").items()
    }
    assert parse_settings(config).cluster.name == "gb200-x72"


@pytest.mark.parametrize(
    ("section", "change", "expected"),
    [
        (
            "cluster",
            lambda c: c.update(kubernetesVersion="1.31"),
            ["cluster.kubernetesVersion", "'1.31'", "1.33 or newer"],
        ),
        (
            "cluster",
            lambda c: c.update(endpointPublicAccessCidrs=["0.0.0.0/0"]),
            ["endpointPublicAccessCidrs", "0.0.0.0/0", "allowPublicEndpointFromAnywhere"],
        ),
        (
            "cluster",
            lambda c: c.update(endpointPublicAccessCidrs=["10.0.0.300/8"]),
            ["endpointPublicAccessCidrs[0]", "10.0.0.300/8", "CIDR"],
        ),
        (
            "cluster",
            lambda c: c.update(adminPrincipalArns=["admin"]),
            ["adminPrincipalArns[0]", "'admin'", "role or user ARN"],
        ),
        ("cluster", lambda c: c.update(nmae="x"), ["cluster.nmae", "did you mean 'name'"]),
        ("cluster", lambda c: c.pop("name"), ["cluster.name", "required"]),
        ("aws:region", "mars-1", ["aws:region", "'mars-1'", "us-east-1"]),
        (
            "network",
            lambda n: n.update(availabilityZones=["us-east-1a"]),
            ["network.availabilityZones", "at least two"],
        ),
        (
            "network",
            lambda n: n.update(availabilityZones=["eu-west-1a", "us-east-1b"]),
            ["availabilityZones[0]", "eu-west-1a", "zone of us-east-1"],
        ),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(capacityReservationIds=["cr-123"]),
            ["capacityReservationIds[0]", "cr-123"],
        ),
        ("gpuNodeGroups", lambda g: g[0].update(desiredSize=19), ["gpuNodeGroups[0].desiredSize", "19", "0 to 18"]),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(ultraserverType="u-p6e-gb200x144"),
            ["ultraserverType", "u-p6e-gb200x72"],
        ),
        ("gpuNodeGroups", lambda g: g[0].update(efaLayout="fastest"), ["efaLayout", "'fastest'", "one-per-nci-group"]),
        ("gpuNodeGroups", lambda g: g[0].update(amiRelease="v20250519"), ["amiRelease", "v20250519"]),
        ("gpuNodeGroups", lambda g: g[0].update(amiId="ami-0123456789abcdef0"), ["amiId", "amiRelease"]),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(mode="karpenter"),
            ["gpuNodeGroups[0].mode", "'karpenter'", "self-managed"],
        ),
        (
            "gpuNodeGroups",
            lambda g: g.append(dict(g[0])),
            ["unique group names", "each capacity reservation in one group only"],
        ),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(
                capacityReservationResourceGroupArn="arn:aws:resource-groups:us-east-1:111122223333:group/x"
            ),
            ["either capacityReservationIds"],
        ),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(reservationWindow={"start": "2026-12-02T00:00:00Z", "end": "2026-12-01T00:00:00Z"}),
            ["reservationWindow.end", "after start"],
        ),
        (
            "gpuNodeGroups",
            lambda g: g[0].update(availabilityZone="us-west-2a"),
            ["availabilityZone", "us-west-2a", "region us-east-1"],
        ),
        ("addons", {"vpcCni": "v1.18.1-eksbuild.1"}, ["addons.vpcCni", "v1.18.5 or newer"]),
        ("imexCheck", {"nodes": 19}, ["imexCheck.nodes", "19"]),
        ("autoDeploy", "yes", ["autoDeploy", "true or false"]),
    ],
)
def test_bad_input_names_key_value_allowed_and_fix(section: str, change: Any, expected: list[str]) -> None:
    problems = problems_for("gb200-x72", section, change)
    text = "\n".join(problems)
    for fragment in expected:
        assert fragment in text, f"{fragment!r} missing from:\n{text}"
    for line in problems:
        assert line.startswith(("ultraserver-eks:", "aws:")), f"problem does not name its key: {line}"


def test_every_problem_is_reported_at_once() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:cluster"]["kubernetesVersion"] = "1.30"
    config["ultraserver-eks:gpuNodeGroups"][0]["capacityReservationIds"] = ["nope"]
    config["aws:region"] = "nowhere"
    with pytest.raises(ConfigError) as info:
        parse_settings(config)
    assert len(info.value.problems) >= 3


def test_existing_vpc_needs_gpu_subnets_in_the_reservation_zone() -> None:
    problems = problems_for(
        "gb200-x36", "network", lambda n: n.update(gpuSubnetIds={"us-east-1a": ["subnet-0ccccccccccccccc1"]})
    )
    assert any("availabilityZone" in p and "gpuSubnetIds" in p for p in problems)


def test_subnet_ids_need_a_vpc_id() -> None:
    problems = problems_for("gb200-x72", "network", lambda n: n.update(privateSubnetIds=["subnet-0aaaaaaaaaaaaaaa1"]))
    assert any("network.privateSubnetIds" in p and "vpcId" in p for p in problems)


def test_public_endpoint_from_anywhere_only_when_asked() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:cluster"].update(
        endpointPublicAccessCidrs=["0.0.0.0/0"], allowPublicEndpointFromAnywhere=True
    )
    assert parse_settings(config).cluster.public_access_cidrs == ("0.0.0.0/0",)
