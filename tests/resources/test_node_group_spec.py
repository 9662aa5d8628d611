"""One node-group spec: the settings derive a group's values once (size, layout, blocks and the current one,
reservation, size now, actions, AMI release); GpuNodeGroupArgs carries them and the component only reads them."""

from __future__ import annotations

import dataclasses
from datetime import datetime

import pytest
from helpers.capacity import BEFORE, DURING_A, DURING_B, A, B, two_block_settings
from helpers.plan_lookup import one
from ultraserver.config.node_group_spec import NodeGroupSpec
from ultraserver.facts import ami, efa
from ultraserver.facts.capacity_blocks import CapacityBlock
from ultraserver.offline import record
from ultraserver.resources.cluster import ClusterCoreData
from ultraserver.resources.gpu_node_group import GpuNodeGroup, GpuNodeGroupArgs

TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
SCHEDULE = "aws:autoscaling/schedule:Schedule"
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
    return GpuNodeGroupArgs.from_settings(
        group, 0, cluster=CORE, subnet_ids=["subnet-0aaaaaaaaaaaaaaaa"], security_group_ids=[], tags={}, now=now
    )


@pytest.mark.parametrize(("now", "index", "reservation"), [(BEFORE, 0, A), (DURING_A, 0, A), (DURING_B, 1, B)])
def test_the_settings_derive_the_spec_at_the_plan_date(now: datetime, index: int, reservation: str) -> None:
    (group,) = two_block_settings().gpu_node_groups
    spec = group.spec(0, now, "1.35")
    assert spec.current_block == index
    assert spec.reservation_id == reservation
    assert [b.reservation_ids for b in spec.blocks] == [(A,), (B,)]
    assert spec.desired_size == (0 if now == BEFORE else 18)
    assert spec.full_size == 18 and spec.interfaces == group.efa_interfaces
    assert spec.release_version == ami.default_release_version("1.35") != ""
    assert spec.successive


def test_the_arguments_carry_the_settings_spec() -> None:
    (group,) = two_block_settings().gpu_node_groups
    args = from_settings(DURING_B)
    assert args.spec == group.spec(0, DURING_B, "1.35")
    assert args.reservation_target == B
    assert args.capacity_blocks == args.spec.blocks


def test_a_program_gets_the_same_spec_from_its_arguments() -> None:
    """The arguments derive the spec once from the same facts: layout default, size, block and AMI pin."""
    args = GpuNodeGroupArgs(cluster=CORE, subnet_ids=[], capacity_reservation_id="cr-0123456789abcdef0", now=BEFORE)
    assert args.spec.interfaces == tuple(efa.layout_for(args.instance_type, None, None))
    assert args.spec.full_size == 18 and args.spec.desired_size == 18
    assert args.spec.blocks == (CapacityBlock(("cr-0123456789abcdef0",), None),)
    assert args.spec.release_version == ami.default_release_version("1.35")
    assert args.reservation_target == "cr-0123456789abcdef0"


def test_the_component_only_reads_the_spec() -> None:
    """A spec other than the one the arguments would give is what the component declares: nothing is re-derived."""
    args = from_settings(DURING_A)
    other = CapacityBlock(("cr-0ffffffffffffffff",), args.spec.block.window)
    spec: NodeGroupSpec = dataclasses.replace(
        args.spec,
        full_size=9,
        desired_size=5,
        blocks=(other,),
        current_block=0,
        actions=(),
        interfaces=args.spec.interfaces[:1],
        release_version="1.35.0-20260101",
    )
    args.spec = spec
    plan = record(lambda: GpuNodeGroup("gpu", args))
    template = one(plan, TEMPLATE, "gpu").inputs
    assert template["capacityReservationSpecification"]["capacityReservationTarget"] == {
        "capacityReservationId": "cr-0ffffffffffffffff"
    }
    assert len(template["networkInterfaces"]) == 1
    group = one(plan, NODE_GROUP, "gpu").inputs
    assert group["scalingConfig"] == {"minSize": 0, "maxSize": 9, "desiredSize": 5}
    assert group["releaseVersion"] == "1.35.0-20260101"
    assert plan.of_type(SCHEDULE) == []


def test_the_image_parameter_is_derived_once_for_self_managed_groups_only() -> None:
    pin = ami.default_release_version("1.35")
    managed = GpuNodeGroupArgs(cluster=CORE, subnet_ids=[], capacity_reservation_id="cr-0123456789abcdef0", now=BEFORE)
    assert managed.spec.ami_ssm_parameter is None  # the node group's amiType and releaseVersion pick the AMI
    own = dataclasses.replace(managed, mode="self-managed")
    assert own.spec.ami_ssm_parameter == ami.pinned_ssm_parameter_name("1.35", pin)
    custom = dataclasses.replace(own, image_id="ami-0123456789abcdef0", ami_release="v20251103")
    assert custom.spec.ami_ssm_parameter is None


def test_the_template_reads_the_image_parameter_of_the_spec() -> None:
    args = GpuNodeGroupArgs(
        cluster=CORE, subnet_ids=[], mode="self-managed", capacity_reservation_id="cr-0123456789abcdef0", now=BEFORE
    )
    args.spec = dataclasses.replace(args.spec, ami_ssm_parameter="/chosen/by/the/spec")
    plan = record(lambda: GpuNodeGroup("gpu", args))
    assert [c for c in plan.placeholders if "getParameter" in c and "/chosen/by/the/spec" in c]
