"""The Capacity Block state lists match botocore's ec2 service model, and every state has one meaning here."""

from __future__ import annotations

import botocore.session
import pytest
from ultraserver.facts.capacity import capacity_states as cs

EC2 = botocore.session.get_session().get_service_model("ec2")


def enum(shape: str) -> tuple[str, ...]:
    return tuple(EC2.shape_for(shape).enum)


@pytest.mark.parametrize(
    ("ours", "shape"),
    [
        (cs.CAPACITY_RESERVATION_STATES, "CapacityReservationState"),
        (cs.CAPACITY_BLOCK_STATES, "CapacityBlockResourceState"),
        (cs.INTERCONNECT_STATUSES, "CapacityBlockInterconnectStatus"),
        (cs.EXTENSION_STATUSES, "CapacityBlockExtensionStatus"),
    ],
)
def test_lists_are_the_ec2_model_enums(ours: tuple[str, ...], shape: str) -> None:
    assert ours == enum(shape)


def test_the_members_use_those_enums() -> None:
    assert EC2.shape_for("CapacityReservation").members["State"].name == "CapacityReservationState"
    assert EC2.shape_for("CapacityBlock").members["State"].name == "CapacityBlockResourceState"
    assert EC2.shape_for("CapacityBlockStatus").members["InterconnectStatus"].name == "CapacityBlockInterconnectStatus"


def test_every_state_is_usable_ended_or_pending_exactly_once() -> None:
    every = set(cs.CAPACITY_RESERVATION_STATES) | set(cs.CAPACITY_BLOCK_STATES)
    assert cs.USABLE | cs.ENDED | cs.PENDING == every
    assert not (cs.USABLE & cs.ENDED or cs.USABLE & cs.PENDING or cs.ENDED & cs.PENDING)


@pytest.mark.parametrize("state", sorted(set(cs.CAPACITY_RESERVATION_STATES) | set(cs.CAPACITY_BLOCK_STATES)))
def test_every_state_has_a_kind_and_a_fix_unless_usable(state: str) -> None:
    kind = cs.state_kind(state)
    assert kind in ("usable", "ended", "pending")
    assert (cs.state_fix(state) == "") == (kind == "usable")


def test_unknown_states_are_not_usable() -> None:
    assert cs.state_kind("brand-new") == "unknown" and cs.state_fix("brand-new") == cs.OTHER_FIX


def test_extension_durations() -> None:
    hours = cs.EXTENSION_DURATION_HOURS
    assert hours[:3] == (24, 48, 72) and 336 in hours and 360 not in hours
    assert 504 in hours and 4368 == hours[-1] and 4368 == 182 * 24
    assert all(h % 168 == 0 for h in hours if h > 336)
    # The integer the API takes; the model sets no range, so EC2's user guide is the source of the steps.
    member = EC2.operation_model("DescribeCapacityBlockExtensionOfferings").input_shape.members
    assert member["CapacityBlockExtensionDurationHours"].type_name == "integer"
    assert "24 to 336 in steps of 24" in cs.allowed_extension_hours_text()


def test_stale_fixes_say_what_to_do() -> None:
    assert cs.stale_fix("gpuNodeGroups[0].capacityBlocks[0]", "expired", past=True).startswith(
        "remove gpuNodeGroups[0].capacityBlocks[0]"
    )
    assert "purchase a new Capacity Block" in cs.stale_fix("k", "cancelled", past=False)
