"""Nobody has to be online between blocks: a group listing several blocks hands over with standby unless the stack
says otherwise, and a switch over several blocks is a warning naming each gap's deadline."""

from __future__ import annotations

import copy
from datetime import date, timedelta
from typing import Any

import pytest
from helpers.sim_cluster import FIRST, _iso
from helpers.stacks import stack_config
from ultraserver.config.settings import parse_settings, settings_warnings

TODAY = date(2026, 11, 23)


def _two_blocks(**extra: Any) -> dict[str, Any]:
    config = copy.deepcopy(stack_config("gb200-x72"))
    group = config["ultraserver-eks:gpuNodeGroups"][0]
    group.pop("capacityReservationIds"), group.pop("reservationWindow")
    group.update(extra)
    group["capacityBlocks"] = [
        {"capacityReservationIds": [rid], "start": _iso(start), "end": _iso(start + timedelta(days=14))}
        for rid, start in (("cr-0aaaaaaaaaaaaaaaa", FIRST), ("cr-0bbbbbbbbbbbbbbbb", FIRST + timedelta(days=14)))
    ]
    return config


def test_several_blocks_hand_over_with_standby_by_default() -> None:
    (group,) = parse_settings(_two_blocks(), today=TODAY).gpu_node_groups
    assert group.handover == "standby"
    one = copy.deepcopy(_two_blocks())
    one["ultraserver-eks:gpuNodeGroups"][0]["capacityBlocks"].pop()
    assert parse_settings(one, today=TODAY).gpu_node_groups[0].handover == "switch"
    assert not [p for p in settings_warnings(parse_settings(_two_blocks(), today=TODAY), TODAY) if "handover" in p.key]


@pytest.mark.parametrize("mode", ["managed", "self-managed"])
def test_a_switch_over_several_blocks_warns_with_the_deadline_of_each_gap(mode: str) -> None:
    settings = parse_settings(_two_blocks(handover="switch", mode=mode), today=TODAY)
    (warning,) = [p for p in settings_warnings(settings, TODAY) if p.key.endswith(".handover")]
    # Block 1 scales down at its end - 65 minutes, settles 10 minutes, and block 2 starts at that end.
    assert "2026-12-15 10:35Z to 2026-12-15 11:30Z" in warning.fix and "standby" in warning.fix
