"""The GPU-to-EFA pairing picture: each GPU with the EFA devices of its card group, as the layout places them."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
from ultraserver.facts.hardware import efa
from ultraserver.offline.pairing_svg import pairing_svg

SVG = "{http://www.w3.org/2000/svg}"
GB200 = "p6e-gb200.36xlarge"


@pytest.mark.parametrize(
    ("preset", "cards"),
    [
        ("one-per-nci-group", {0: "1", 1: "5", 2: "9", 3: "13"}),
        ("all-odd-cards", {0: "1,3", 1: "5,7", 2: "9,11", 3: "13,15"}),
        ("maximum", {0: "1,2,3,4", 1: "5,6,7,8", 2: "9,10,11,12", 3: "13,14,15,16"}),
    ],
)
def test_each_gpu_is_drawn_with_the_efa_devices_of_its_card_group(preset: str, cards: dict[int, str]) -> None:
    root = ET.fromstring(pairing_svg("nvl72", GB200, efa.layout_for(GB200, preset, None)))
    gpus = {
        int(g.get("data-gpu", "")): g.get("data-efa-cards") for g in root.iter(f"{SVG}g") if g.get("class") == "gpu"
    }
    assert gpus == cards
    drawn = [g for g in root.iter(f"{SVG}g") if g.get("class") == "efa"]
    assert len(drawn) == sum(len(v.split(",")) for v in cards.values())
    assert all(g.get("data-card") in cards[int(g.get("data-gpu", ""))].split(",") for g in drawn)


def test_a_type_without_per_gpu_card_groups_has_no_picture() -> None:
    other = next(t for t in efa.supported_instance_types() if t != GB200)
    assert pairing_svg("x", other, efa.layout_for(other, None, None)) == ""
