"""What preflight checks for a stack, derived from the stack file's settings."""

from __future__ import annotations

import pytest
from helpers.stacks import ROOT, stack_config
from ultraserver.cli import stack_settings
from ultraserver.config.settings import parse_settings
from ultraserver.facts.pins import ami
from ultraserver.preflight.target import target_from_settings


def test_target_of_a_self_managed_stack_in_an_existing_vpc() -> None:
    target = target_from_settings(stack_settings(ROOT, "gb200-x36"))
    assert (target.region, target.kubernetes_version) == ("us-east-1", "1.35")
    assert target.ami_release == "1.35.6-20260714"
    assert target.ami_ssm_parameter == ami.pinned_ssm_parameter_name("1.35", "1.35.6-20260714")
    [group] = target.groups
    assert (group.name, group.instance_type, group.ultraserver_type) == (
        "nvl36",
        "p6e-gb200.36xlarge",
        "u-p6e-gb200x36",
    )
    assert (group.ultraserver_count, group.instances_per_ultraserver, group.managed) == (1, 9, False)
    assert group.capacity_reservation_ids == ["cr-0fedcba9876543210"]
    # GPU subnets must sit in the reservation's zone; private and public ones in any regional zone.
    assert target.existing_subnets["subnet-0ccccccccccccccc1"] == "us-east-1-dfw-2a"
    assert target.existing_subnets["subnet-0aaaaaaaaaaaaaaa1"] == ""
    assert target.required_free_ips["subnet-0ccccccccccccccc1"] > 0
    assert target.managed_node_group_count == 1  # the system group; the GPU group is self-managed


@pytest.mark.parametrize("stack", ["gb200-x72", "gb200-x36"])
def test_preflight_resolves_the_pinned_release_not_recommended(stack: str) -> None:
    t = target_from_settings(parse_settings(stack_config(stack), stack=stack))
    assert t.ami_release == "1.35.6-20260714"
    assert t.ami_ssm_parameter == (
        "/aws/service/eks/optimized-ami/1.35/amazon-linux-2023/arm64/nvidia/"
        "amazon-eks-node-al2023-arm64-nvidia-1.35-v20260714/image_id"
    )


def test_a_group_with_capacity_blocks_is_checked_on_its_blocks() -> None:
    config = stack_config("gb200-x72")
    groups = config["ultraserver-eks:gpuNodeGroups"]
    first, second = "cr-0aaaaaaaaaaaaaaa1", "cr-0aaaaaaaaaaaaaaa2"
    for g in groups:
        g.pop("capacityReservationIds", None)
        g.pop("reservationWindow", None)
        g["capacityBlocks"] = [
            {"start": "2026-03-02T11:30:00Z", "end": "2026-03-09T11:30:00Z", "capacityReservationIds": [first]},
            {"start": "2026-03-09T11:30:00Z", "end": "2026-03-16T11:30:00Z", "capacityReservationIds": [second]},
        ]
    config["ultraserver-eks:gpuNodeGroups"] = groups
    [group] = target_from_settings(parse_settings(config, stack="gb200-x72")).groups
    # Before this, a group with capacityBlocks (no top-level ids) named no reservation at all.
    assert group.capacity_reservation_ids == [first]
    assert [b.reservation_ids for b in group.blocks] == [(first,), (second,)]
    assert group.settings_key == "gpuNodeGroups[0]"
