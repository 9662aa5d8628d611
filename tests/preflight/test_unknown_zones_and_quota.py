"""What the offline plan cannot know, preflight checks: the zones that exist and the account's node-group quota."""

from __future__ import annotations

import copy
from typing import Any

from helpers.cli import run_main
from helpers.preflight import LOCAL_ZONE, REGION, local_zone, quota_answer, stubbed, target, zone_answer
from helpers.stacks import stack_config
from ultraserver.config.settings import parse_settings, settings_warnings
from ultraserver.facts.aws import limits
from ultraserver.preflight.checks import check_control_plane_zones, check_node_group_quota
from ultraserver.preflight.report import FAIL, PASS
from ultraserver.preflight.target import target_from_settings


def regional(name: str) -> dict[str, Any]:
    return {"ZoneName": name, "ZoneType": "availability-zone", "RegionName": REGION, "State": "available"}


def test_a_zone_the_region_lacks_fails_preflight_and_the_plan_says_it_is_unchecked(tmp_path: Any) -> None:
    config = copy.deepcopy(stack_config("gb200-x72"))
    config["ultraserver-eks:network"]["availabilityZones"] = ["us-east-1a", "us-east-1z"]
    settings = parse_settings(config, stack="gb200-x72")  # the name's form is valid offline
    aimed = target_from_settings(settings)
    assert aimed.control_plane_zones == ("us-east-1a", "us-east-1z")
    ec2, stub = stubbed("ec2")
    zone_answer(stub, ["us-east-1a", "us-east-1z"], [regional("us-east-1a")])
    checks = {c.key: c for c in check_control_plane_zones(aimed, ec2)}
    assert checks["zone us-east-1a exists"].level == PASS
    missing = checks["zone us-east-1z exists"]
    assert missing.level == FAIL and "us-east-1z is not a zone of us-east-1" in str(missing.value)
    assert "describe-availability-zones --region us-east-1" in missing.fix


def test_a_local_zone_for_the_control_plane_fails_preflight() -> None:
    ec2, stub = stubbed("ec2")
    zone_answer(stub, [LOCAL_ZONE], [local_zone("opted-in")])
    [found] = check_control_plane_zones(target(control_plane_zones=(LOCAL_ZONE,)), ec2)
    assert found.level == FAIL and "not a regional zone" in str(found.value)


def test_the_plan_names_the_zones_preflight_will_check() -> None:
    result = run_main("plan", "--stack", "gb200-x72")
    assert result.code == 0, result.stderr
    assert (
        "Zones not checked offline (us-east-1-dfw-2a, us-east-1a, us-east-1b): `ultraserver preflight` checks that "
        "they exist." in result.stdout
    )


def _thirty_one_managed_groups() -> Any:
    config = copy.deepcopy(stack_config("gb200-x72"))
    group = config["ultraserver-eks:gpuNodeGroups"][0]
    group["capacityReservationIds"] = [f"cr-{i:017x}" for i in range(1, 31)]  # one managed group per UltraServer
    return parse_settings(config, stack="gb200-x72")


def test_thirty_one_managed_groups_plan_with_a_warning_and_fail_preflight_under_a_lower_quota() -> None:
    settings = _thirty_one_managed_groups()
    warned = [p for p in settings_warnings(settings) if "L-6D54EA21" in p.allowed]
    assert warned and "31 managed node groups" in str(warned[0].value)
    aimed = target_from_settings(settings)
    assert aimed.managed_node_group_count == 31 > limits.MANAGED_NODE_GROUPS_PER_CLUSTER.maximum
    [at_default] = check_node_group_quota(aimed, quota_answer(30.0))
    assert at_default.level == FAIL and "31 managed node groups, quota 30 (Service Quotas L-6D54EA21)" in str(
        at_default.value
    )
    [raised] = check_node_group_quota(aimed, quota_answer(40.0))
    assert raised.level == PASS
