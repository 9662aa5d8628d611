"""Cross-field rules: each plan-time rejection names the stack key, the bad value and the fix."""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest
from helpers.stacks import stack_config
from ultraserver.config.settings import parse_settings, settings_warnings
from ultraserver.facts.pins import ami
from ultraserver.problems import ConfigError

TODAY = date(2026, 11, 23)


def cluster(**values: Any) -> Any:
    return lambda c: c["ultraserver-eks:cluster"].update(values)


def network(**values: Any) -> Any:
    return lambda c: c["ultraserver-eks:network"].update(values)


def group(**values: Any) -> Any:
    return lambda c: c["ultraserver-eks:gpuNodeGroups"][0].update(values)


def problems(change: Any, stack: str = "gb200-x72") -> str:
    config = copy.deepcopy(stack_config(stack))
    change(config)
    with pytest.raises(ConfigError) as info:
        parse_settings(config, today=TODAY)
    text = "\n".join([str(p) for p in info.value.items])
    assert all(p.startswith(("ultraserver-eks:", "aws:")) for p in [str(p) for p in info.value.items]), text
    return text


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (cluster(endpointPublicAccessCidrs=["::/0"]), ["endpointPublicAccessCidrs", "'::/0'", "whole internet"]),
        (
            cluster(endpointPublicAccessCidrs=["0.0.0.0/1", "128.0.0.0/1"]),
            ["endpointPublicAccessCidrs", "whole internet", "allowPublicEndpointFromAnywhere"],
        ),
        (
            cluster(endpointPublicAccessCidrs=["10.0.0.1/24"]),
            ["endpointPublicAccessCidrs[0]", "host bits", "10.0.0.0/24"],
        ),
        (
            cluster(adminPrincipalArns=["arn:aws:iam::123456789012:role/A"] * 2),
            ["adminPrincipalArns", "each principal once"],
        ),
        (
            cluster(deployerAccess="", endpointPublicAccessCidrs=[]),
            ["cluster.deployerAccess", "in-vpc", "separate-stack"],
        ),
        (
            cluster(deployerAccess="public-endpoint", endpointPublicAccessCidrs=[]),
            ["cluster.deployerAccess", "endpointPublicAccessCidrs"],
        ),
        (network(availabilityZones=["us-east-1a", "us-east-1a"]), ["availabilityZones[1]", "each zone once"]),
        (network(availabilityZones=["us-east-1", "us-east-1b"]), ["availabilityZones[0]", "not the region itself"]),
        (
            network(availabilityZones=["us-east-1a", "us-east-1-dfw-2a"]),
            ["availabilityZones[1]", "Local Zones cannot host the EKS control plane"],
        ),
        (network(vpcCidr="224.0.0.0/16"), ["network.vpcCidr", "a block inside 10.0.0.0/8"]),
        (network(vpcCidr="10.0.0.0/12"), ["network.vpcCidr", "/16 to /28"]),
        (network(vpcCidr="10.0.0.0/33"), ["network.vpcCidr", "CIDR"]),
        (
            lambda c: c["ultraserver-eks:systemNodeGroup"].update(instanceType="m7i.xlarge"),
            ["systemNodeGroup.instanceType", "arm64", "AL2023_x86_64_STANDARD"],
        ),
        (group(instanceType="p5.48xlarge"), ["gpuNodeGroups[0].instanceType", "follows ultraserverType"]),
        (group(localStorage="RAID10"), ["gpuNodeGroups[0].localStorage", "3 instance-store disks", "RAID0"]),
        (group(labels={"kubernetes.io/role": "gpu"}), ["labels.kubernetes.io/role", "kubelet"]),
        (group(labels={"team": "a,b"}), ["labels.team", "commas"]),
        (group(labels={"bad label": "x"}), ["labels.bad label", "label name"]),
        (group(releaseVersion="1.35.9-20991231"), ["releaseVersion", "already published"]),
        (group(releaseVersion="1.34.2-20260120"), ["releaseVersion", "Kubernetes 1.35"]),
        (group(amiRelease="v20991231", amiId="ami-0123456789abcdef0"), ["amiRelease", "future"]),
        (
            group(amiRelease="v20251103", releaseVersion="1.33.5-20251103"),
            ["releaseVersion", "not with amiId/amiRelease"],
        ),
        (group(autoRepair=True, mode="self-managed"), ["autoRepair", "managed groups"]),
        (group(imdsHopLimit=3), ["imdsHopLimit", "<= 2"]),
        (
            lambda c: c["ultraserver-eks:gpuNodeGroups"][0]["reservationWindow"].update(scaleDownLeadMinutes=60),
            [
                "reservationWindow.scaleDownLeadMinutes: got 60; allowed: 65 or more: EC2 starts terminating an "
                "UltraServer block's instances 60 minutes before its end",
                "fix: set 65 or more",
            ],
        ),
        (
            lambda c: c["ultraserver-eks:imexCheck"].update(thresholdGbps=float("inf")),
            ["imexCheck.thresholdGbps", "a finite number"],
        ),
        (group(capacityReservationIds=["cr-0123456789abcdef0"] * 2), ["each reservation once"]),
        (lambda c: c["ultraserver-eks:imexCheck"].update(nodes=1), ["imexCheck.nodes", ">= 2"]),
        (lambda c: c.update({"ultraserver-eks:imexChek": {}}), ["ultraserver-eks:imexChek", "did you mean"]),
        (lambda c: c.update({"ultraserver-eks:efaCheck": {"enabled": True}}), ["efaCheck.ultraservers", "at most"]),
        (
            lambda c: (
                c["ultraserver-eks:health"].update({"driftCheck": {"schedule": "hourly"}})
                if "ultraserver-eks:health" in c
                else c.update({"ultraserver-eks:health": {"driftCheck": {"schedule": "hourly"}}})
            ),
            ["health.driftCheck.schedule", "cron"],
        ),
        (
            lambda c: c.update({"ultraserver-eks:kubernetes": {"layer": "elsewhere"}}),
            ["kubernetes.layer", "separate-stack"],
        ),
    ],
)
def test_rule_names_key_value_and_fix(change: Any, expected: list[str]) -> None:
    text = problems(change)
    for fragment in expected:
        assert fragment in text, f"{fragment!r} missing from:\n{text}"


def test_gpu_subnet_zones_must_be_in_the_region() -> None:
    text = problems(
        lambda c: c["ultraserver-eks:network"]["gpuSubnetIds"].update({"us-west-2a": ["subnet-0ccccccccccccccc2"]}),
        "gb200-x36",
    )
    assert "network.gpuSubnetIds.us-west-2a" in text and "us-east-1" in text


def test_resource_group_targets_only_for_self_managed_groups() -> None:
    text = problems(lambda c: c["ultraserver-eks:gpuNodeGroups"][1].update(mode="managed"), "gb200-multi")
    assert "gpuNodeGroups[1].capacityReservationResourceGroupArn" in text and "self-managed" in text


def test_misspelled_required_key_gets_did_you_mean_on_both_lines() -> None:
    text = problems(
        lambda c: c["ultraserver-eks:gpuNodeGroups"][0].update(
            availabilityZon=c["ultraserver-eks:gpuNodeGroups"][0].pop("availabilityZone")
        )
    )
    assert "gpuNodeGroups[0].availabilityZone: got None" in text and "rename 'availabilityZon'" in text
    assert "gpuNodeGroups[0].availabilityZon: got" in text and "did you mean 'availabilityZone'" in text


def test_new_settings_defaults() -> None:
    settings = parse_settings(stack_config("gb200-x36"), today=TODAY)
    assert settings.cluster.deployer_access == "public-endpoint"
    assert settings.cluster.deployer_runner_labels == ("ubuntu-latest",)
    assert settings.kubernetes.layer == "same-stack"
    assert settings.kubernetes.prometheus_stack_enabled is False
    assert settings.health.node_monitoring_agent and settings.health.drift_check_enabled
    assert settings.health.drift_check_schedule == "*/30 * * * *"
    assert settings.efa_check.enabled is None and settings.efa_check.ultraservers == 2
    group = settings.gpu_node_groups[0]
    assert (group.imds_hop_limit, group.auto_repair) == (1, False)
    # gb200-x36 pins its EKS AMI release explicitly.
    assert group.release_version == "1.35.6-20260714"
    managed = parse_settings(stack_config("gb200-x72"), today=TODAY).gpu_node_groups[0]
    assert managed.release_version == ami.RELEASE_VERSIONS["1.35"]


def test_imex_nodes_all_means_every_node() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:imexCheck"]["nodes"] = "all"
    assert parse_settings(config, today=TODAY).imex_check.nodes is None


def test_release_settings_know_their_stack_key() -> None:
    settings = parse_settings(stack_config("gb200-x72"), today=TODAY)
    assert settings.kubernetes.dra_driver.settings_key == "ultraserver-eks:kubernetes.draDriver"


@pytest.mark.parametrize(
    ("version", "says", "upgrade"),
    [("1.33", "standard support ended 2026-07-29", "1.34"), ("1.34", "standard support ends 2026-12-02", "1.35")],
)
def test_old_minors_warn_with_the_end_date_and_both_prices(version: str, says: str, upgrade: str) -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:cluster"]["kubernetesVersion"] = version
    settings = parse_settings(config, today=TODAY)
    warnings = [str(w) for w in settings_warnings(settings, TODAY) if "EKS standard support" in str(w)]
    assert len(warnings) == 1 and says in warnings[0]
    assert "$0.60 per cluster-hour instead of $0.10" in warnings[0]
    assert f'next kubernetesVersion: "{upgrade}"' in warnings[0]


def test_the_default_minor_plans_without_a_support_warning_until_it_nears_its_end() -> None:
    settings = parse_settings(stack_config("gb200-x72"), today=TODAY)
    assert not [w for w in settings_warnings(settings, TODAY) if "kubernetesVersion" in str(w)]
    late = [str(w) for w in settings_warnings(settings, date(2027, 1, 5)) if "kubernetesVersion" in str(w)]
    assert late and "date not read in the EKS guide" in late[0]


def test_null_and_unknown_chart_values_are_refused_before_anything_is_declared() -> None:
    text = problems(
        lambda c: c.update(
            {"ultraserver-eks:kubernetes": {"gpuOperator": {"values": {"driver": None, "drivr": {"enabled": False}}}}}
        )
    )
    assert "kubernetes.gpuOperator.values.driver: got None" in text and "Pulumi drops nulls" in text
    assert "kubernetes.gpuOperator.values.drivr" in text


def test_other_chart_version_skips_the_key_check() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:kubernetes"] = {"gpuOperator": {"version": "v99.1.0", "values": {"newKey": True}}}
    config["ultraserver-eks:acceptUntestedVersions"] = True
    assert parse_settings(config, today=TODAY).kubernetes.gpu_operator.values == {"newKey": True}


def _blocks(*ids_and_starts: tuple[list[str], str], days: int = 14) -> list[dict[str, Any]]:
    from datetime import datetime, timedelta

    return [
        {
            "capacityReservationIds": ids,
            "start": start,
            "end": (datetime.fromisoformat(start) + timedelta(days=days)).isoformat().replace("+00:00", "Z"),
        }
        for ids, start in ids_and_starts
    ]


def _renewal(**extra: Any) -> Any:
    def change(c: dict[str, Any]) -> None:
        g = c["ultraserver-eks:gpuNodeGroups"][0]
        g.pop("capacityReservationIds")
        g.pop("reservationWindow")
        g.update(extra)

    return change


def test_successive_blocks_parse_in_order_with_one_id_list_per_block() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    blocks = _blocks(
        (["cr-0aaaaaaaaaaaaaaaa"], "2026-12-01T11:30:00+00:00"), (["cr-0bbbbbbbbbbbbbbbb"], "2026-12-15T11:30:00+00:00")
    )
    _renewal(capacityBlocks=blocks)(config)
    g = parse_settings(config, today=TODAY).gpu_node_groups[0]
    assert [b.reservation_ids for b in g.blocks] == [("cr-0aaaaaaaaaaaaaaaa",), ("cr-0bbbbbbbbbbbbbbbb",)]
    assert g.all_reservation_ids == ("cr-0aaaaaaaaaaaaaaaa", "cr-0bbbbbbbbbbbbbbbb")
    assert g.node_group_names == ["nvl72"]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            group(capacityBlocks=_blocks((["cr-0aaaaaaaaaaaaaaaa"], "2026-12-01T11:30:00+00:00"))),
            ["gpuNodeGroups[0].capacityReservationIds", "not both", "move capacityReservationIds into"],
        ),
        (
            _renewal(
                capacityBlocks=_blocks(
                    (["cr-0aaaaaaaaaaaaaaaa"], "2026-12-01T11:30:00+00:00"),
                    (["cr-0bbbbbbbbbbbbbbbb", "cr-0cccccccccccccccc"], "2026-12-15T11:30:00+00:00"),
                )
            ),
            ["capacityBlocks[1].capacityReservationIds", "1 reservation(s), like capacityBlocks[0]"],
        ),
        (
            _renewal(
                capacityBlocks=_blocks(
                    (["cr-0aaaaaaaaaaaaaaaa"], "2026-12-01T11:30:00+00:00"),
                    (["cr-0bbbbbbbbbbbbbbbb"], "2026-12-10T11:30:00+00:00"),
                )
            ),
            ["gpuNodeGroups[0].capacityBlocks[1].start", "a start after block 0 has scaled to 0 and settled"],
        ),
        (
            _renewal(
                capacityBlocks=_blocks(
                    (["cr-0aaaaaaaaaaaaaaaa"], "2026-12-01T11:30:00+00:00"),
                    (["cr-0aaaaaaaaaaaaaaaa"], "2026-12-15T11:30:00+00:00"),
                )
            ),
            ["gpuNodeGroups[0].capacityBlocks", "each reservation once"],
        ),
    ],
)
def test_capacity_block_sequences_refused(change: Any, expected: list[str]) -> None:
    text = problems(change)
    for part in expected:
        assert part in text, text


def test_a_block_that_ended_is_a_warning_naming_its_reservation() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    blocks = _blocks(
        (["cr-0aaaaaaaaaaaaaaaa"], "2026-10-01T11:30:00+00:00"), (["cr-0bbbbbbbbbbbbbbbb"], "2026-11-20T11:30:00+00:00")
    )
    _renewal(capacityBlocks=blocks)(config)
    warnings = [str(w) for w in settings_warnings(parse_settings(config, today=TODAY), today=TODAY)]
    ended = [w for w in warnings if "capacityBlocks[0].end" in w]
    assert len(ended) == 1 and "cr-0aaaaaaaaaaaaaaaa" in ended[0], warnings
    assert not any("capacityBlocks[1].end" in w for w in warnings)


def test_a_gpu_zone_outside_the_catalog_is_refused_unless_the_group_says_so() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:gpuNodeGroups"][0]["availabilityZone"] = "us-east-1-atl-9z"
    with pytest.raises(ConfigError) as info:
        parse_settings(config, today=TODAY)
    text = str(info.value)
    assert "gpuNodeGroups[0].availabilityZone: got 'us-east-1-atl-9z'" in text
    assert "us-east-1-dfw-2a" in text and "zoneNotInCatalog: true" in text
    config["ultraserver-eks:gpuNodeGroups"][0]["zoneNotInCatalog"] = True
    assert parse_settings(config, today=TODAY).gpu_node_groups[0].zone_not_in_catalog


def _self_managed_fleet(groups: int, ultraservers: int) -> dict[str, Any]:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:gpuNodeGroups"] = [
        {
            "name": f"fleet-{i}",
            "mode": "self-managed",
            "availabilityZone": "us-east-1-dfw-2a",
            "capacityReservationResourceGroupArn": f"arn:aws:resource-groups:us-east-1:111122223333:group/f{i}",
            "ultraserverCount": ultraservers,
        }
        for i in range(groups)
    ]
    return config


def test_a_self_managed_fleet_is_not_held_to_the_managed_node_group_quota() -> None:
    settings = parse_settings(_self_managed_fleet(1, 1000), today=TODAY)
    assert settings.gpu_node_groups[0].full_size == 18_000
    warnings = [str(w) for w in settings_warnings(settings, TODAY)]
    assert not any("managed node group" in w.lower() or "450" in w for w in warnings), warnings


def test_more_self_managed_groups_than_auto_scaling_allows_warn_with_that_quota() -> None:
    warnings = [str(w) for w in settings_warnings(parse_settings(_self_managed_fleet(501, 1), today=TODAY), TODAY)]
    [asg] = [w for w in warnings if "Auto Scaling groups" in w]
    assert "501 self-managed Auto Scaling groups" in asg and "at most 500 per region" in asg
    assert "ec2-auto-scaling-quotas" in asg and "Managed node groups" not in asg


def test_a_gpu_zone_of_another_region_is_one_problem() -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:gpuNodeGroups"][0]["availabilityZone"] = "us-west-2-lax-1a"
    with pytest.raises(ConfigError) as info:
        parse_settings(config, today=TODAY)
    assert len([p for p in [str(p) for p in info.value.items] if "gpuNodeGroups[0].availabilityZone" in p]) == 1


def test_a_capacity_block_group_with_no_window_and_no_blocks_is_a_warning_saying_where_it_stays() -> None:
    config = copy.deepcopy(stack_config("gb200-multi"))
    for group in config["ultraserver-eks:gpuNodeGroups"]:
        group.pop("reservationWindow")
    settings = parse_settings(config, today=TODAY)
    found = {str(p.key): str(p.value) for p in settings_warnings(settings, TODAY)}
    # The self-managed fleet has no desired size: created at 0, nothing ever raises it.
    fleet = found["ultraserver-eks:gpuNodeGroups[1].reservationWindow"]
    assert fleet.startswith("not set, nor capacityBlocks: the group stays at 0 of 144 nodes for good")
    assert "60 minutes before its end" in fleet
    assert "stays at 18 of 18 nodes (no scale-up" in found["ultraserver-eks:gpuNodeGroups[0].reservationWindow"]
    for shipped in ("gb200-x72", "gb200-multi"):  # gb200-multi ships with windows now
        windowed = parse_settings(stack_config(shipped), today=TODAY)
        assert not [p for p in settings_warnings(windowed, TODAY) if p.key.endswith("reservationWindow")]
