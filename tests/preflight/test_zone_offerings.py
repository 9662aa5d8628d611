"""A GPU group outside the toolkit's zone catalog (zoneNotInCatalog) is checked live: DescribeInstanceTypeOfferings."""

from __future__ import annotations

from helpers.preflight import group, stubbed, target
from ultraserver.config.settings import parse_settings
from ultraserver.preflight.checks import check_zone_offerings
from ultraserver.preflight.report import FAIL, PASS
from ultraserver.preflight.target import target_from_settings

ZONE = "us-east-1-atl-2a"
TYPE = "p6e-gb200.36xlarge"
REQUEST = {
    "LocationType": "availability-zone",
    "Filters": [{"Name": "instance-type", "Values": [TYPE]}, {"Name": "location", "Values": [ZONE]}],
}


def test_groups_in_the_catalog_ask_nothing() -> None:
    ec2, stub = stubbed("ec2")
    assert check_zone_offerings(target(), ec2) == []
    stub.assert_no_pending_responses()


def test_an_offered_zone_passes() -> None:
    ec2, stub = stubbed("ec2")
    offer = {"InstanceType": TYPE, "LocationType": "availability-zone", "Location": ZONE}
    stub.add_response("describe_instance_type_offerings", {"InstanceTypeOfferings": [offer]}, REQUEST)
    [check] = check_zone_offerings(target(groups=[group(availability_zone=ZONE, zone_not_in_catalog=True)]), ec2)
    assert check.level == PASS
    stub.assert_no_pending_responses()


def test_a_zone_that_does_not_offer_the_type_fails_naming_the_key() -> None:
    ec2, stub = stubbed("ec2")
    stub.add_response("describe_instance_type_offerings", {"InstanceTypeOfferings": []}, REQUEST)
    unlisted = group(availability_zone=ZONE, zone_not_in_catalog=True, settings_key="gpuNodeGroups[0]")
    [check] = check_zone_offerings(target(groups=[unlisted]), ec2)
    assert check.level == FAIL
    assert f"does not offer {TYPE} in {ZONE}" in check.value
    assert "gpuNodeGroups[0].availabilityZone" in check.fix


def test_the_setting_reaches_preflight() -> None:
    config = {
        "aws:region": "us-east-1",
        "ultraserver-eks:cluster": {"name": "c1", "endpointPublicAccessCidrs": ["203.0.113.0/24"]},
        "ultraserver-eks:network": {"availabilityZones": ["us-east-1a", "us-east-1b"]},
        "ultraserver-eks:gpuNodeGroups": [
            {
                "name": "nvl72",
                "availabilityZone": ZONE,
                "zoneNotInCatalog": True,
                "capacityReservationIds": ["cr-0123456789abcdef0"],
            }
        ],
    }
    [g] = target_from_settings(parse_settings(config)).groups
    assert g.zone_not_in_catalog and g.availability_zone == ZONE
