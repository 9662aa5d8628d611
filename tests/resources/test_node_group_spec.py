"""One node-group spec: a group's values derived once from its settings (size, layout, blocks and the current one,
reservation, size now, actions, AMI release); the component only reads them."""

from __future__ import annotations

from datetime import datetime

import pytest
from helpers.capacity import BEFORE, DURING_A, DURING_B, A, B, two_block_settings
from ultraserver.config.gpu_model import GpuNodeGroupSettings
from ultraserver.config.node_group_spec import node_group_spec
from ultraserver.facts.capacity.capacity_blocks import CapacityBlock
from ultraserver.facts.hardware import efa
from ultraserver.facts.pins import ami
from ultraserver.offline import record
from ultraserver.resources.cluster import ClusterCoreData
from ultraserver.resources.gpu_node_group import GpuNodeGroup, GpuNodeGroupArgs

CORE = ClusterCoreData(
    name="gb200",
    endpoint="https://ABC.gr7.us-east-1.eks.amazonaws.com",
    certificate_authority="Y2VydA==",
    service_cidr="10.100.0.0/16",
    security_group_id="sg-0ccccccccccccccc1",
    kubernetes_version="1.35",
)


def from_settings(now: datetime) -> GpuNodeGroupArgs:
    (group,) = two_block_settings().gpu_node_groups
    return GpuNodeGroupArgs(settings=group, cluster=CORE, subnet_ids=["subnet-0aaaaaaaaaaaaaaaa"], now=now)


@pytest.mark.parametrize(("now", "index", "reservation"), [(BEFORE, 0, A), (DURING_A, 0, A), (DURING_B, 1, B)])
def test_the_settings_derive_the_spec_at_the_plan_date(now: datetime, index: int, reservation: str) -> None:
    (group,) = two_block_settings().gpu_node_groups
    spec = node_group_spec(group, 0, now, "1.35")
    assert spec.current_block == index
    assert spec.reservation_id == reservation
    assert [b.reservation_ids for b in spec.blocks] == [(A,), (B,)]
    assert spec.desired_size == (0 if now == BEFORE else 18)
    assert spec.full_size == 18 and spec.interfaces == group.efa_interfaces
    assert spec.release_version == ami.default_release_version("1.35") != ""
    assert spec.successive


def test_the_component_declares_the_spec_of_its_settings() -> None:
    (group,) = two_block_settings().gpu_node_groups
    holder: list[GpuNodeGroup] = []
    record(lambda: holder.append(GpuNodeGroup("gpu", from_settings(DURING_B))))
    assert holder[0].spec == node_group_spec(group, 0, DURING_B, "1.35")
    assert holder[0].reservation_id == B


def test_a_program_gets_the_defaults_of_the_facts() -> None:
    """Layout default, size, block and AMI pin come from the same facts for a program's settings."""
    group = GpuNodeGroupSettings(
        name="gpu", availability_zone="us-east-1-dfw-2a", capacity_reservation_ids=("cr-0123456789abcdef0",)
    )
    spec = node_group_spec(group, 0, BEFORE, "1.35")
    assert spec.interfaces == tuple(efa.layout_for(group.instance_type, None, None))
    assert spec.full_size == 18 and spec.desired_size == 18
    assert spec.blocks == (CapacityBlock(("cr-0123456789abcdef0",), None),)
    assert spec.release_version == ami.default_release_version("1.35")
    assert spec.reservation_id == "cr-0123456789abcdef0"


RESERVATION = "cr-0123456789abcdef0"


def test_the_image_parameter_is_derived_once_for_self_managed_groups_only() -> None:
    pin = ami.default_release_version("1.35")
    base = {"name": "gpu", "availability_zone": "us-east-1-dfw-2a", "capacity_reservation_ids": (RESERVATION,)}
    managed = GpuNodeGroupSettings(**base)
    assert node_group_spec(managed, 0, BEFORE, "1.35").ami_ssm_parameter is None  # amiType + releaseVersion pick it
    own = GpuNodeGroupSettings(**base, mode="self-managed")
    assert node_group_spec(own, 0, BEFORE, "1.35").ami_ssm_parameter == ami.pinned_ssm_parameter_name("1.35", pin)
    custom = GpuNodeGroupSettings(**base, mode="self-managed", ami_id="ami-0123456789abcdef0", ami_release="v20251103")
    assert node_group_spec(custom, 0, BEFORE, "1.35").ami_ssm_parameter is None
