"""EFA layout engine: presets card by card against the catalog and AWS's rules, custom layouts, summaries."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ultraserver.facts.hardware import efa
from ultraserver.facts.hardware.efa import EfaInterface
from ultraserver.problems import ConfigError

GB200 = "p6e-gb200.36xlarge"
CATALOG = json.loads(
    (Path(__file__).resolve().parents[2] / "components/ultraserver/facts/data/network_cards.json").read_text()
)["instance_types"]


def cards_of(instance_type: str) -> dict[int, dict]:
    """Catalog cards of a type by index, read straight from the JSON file."""
    return {card["index"]: card for card in CATALOG[instance_type]["cards"]}


def efa_cards(layout: list[EfaInterface]) -> list[int]:
    """Cards that carry an EFA device."""
    return [i.network_card_index for i in layout if i.interface_type in ("efa", "efa-only")]


def test_catalog_covers_required_types_and_names_a_source_per_fact() -> None:
    assert {"p6e-gb200.36xlarge", "p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge"} <= set(
        efa.supported_instance_types()
    )
    for instance_type, facts in CATALOG.items():
        for fact in ("cards", "maximum_efa_interfaces", "efa_bandwidth_groups", "presets", "architecture", "gpus"):
            assert fact in facts and facts["source"].get(fact), (instance_type, fact)


def test_gb200_catalog_matches_the_aws_card_rules() -> None:
    cards = cards_of(GB200)
    assert sorted(cards) == list(range(17))
    assert cards[0]["interface_types"] == ["interface"]
    for index in range(1, 17):
        if index % 2:
            assert cards[index]["interface_types"] == ["efa-only"], index
        else:
            assert set(cards[index]["interface_types"]) == {"interface", "efa", "efa-only"}, index
    assert CATALOG[GB200]["nci_groups"] == [[1, 3], [5, 7], [9, 11], [13, 15]]


@pytest.mark.parametrize(
    ("preset", "expected_efa_cards"),
    [
        ("one-per-nci-group", [1, 5, 9, 13]),
        ("all-odd-cards", [1, 3, 5, 7, 9, 11, 13, 15]),
        ("maximum", list(range(1, 17))),
    ],
)
def test_gb200_presets_card_by_card(preset: str, expected_efa_cards: list[int]) -> None:
    layout = efa.layout_for(GB200, preset, None)
    cards = cards_of(GB200)
    assert layout[0] == EfaInterface(0, 0, "interface")
    assert efa_cards(layout) == expected_efa_cards
    for item in layout:
        assert item.interface_type in cards[item.network_card_index]["interface_types"], item
        if item.network_card_index != 0:
            # AWS: EFA-only on the next card at device index 0.
            assert (item.device_index, item.interface_type) == (0, "efa-only"), item
    assert len({(i.network_card_index, i.device_index) for i in layout}) == len(layout)
    assert len(efa_cards(layout)) <= CATALOG[GB200]["maximum_efa_interfaces"]
    assert efa.validate_layout(GB200, layout) == []


def test_nci_group_preset_uses_one_card_of_each_group() -> None:
    used = set(efa_cards(efa.layout_for(GB200, "one-per-nci-group", None)))
    for group in CATALOG[GB200]["nci_groups"]:
        assert len(used & set(group)) == 1, group


def test_default_preset_is_the_eks_guide_layout() -> None:
    assert efa.layout_for(GB200, None, None) == efa.layout_for(GB200, "one-per-nci-group", None)


@pytest.mark.parametrize("instance_type", ["p5.48xlarge", "p5en.48xlarge", "p6-b200.48xlarge"])
def test_maximum_on_other_types_fills_every_card(instance_type: str) -> None:
    layout = efa.layout_for(instance_type, "maximum", None)
    cards = cards_of(instance_type)
    assert layout[0] == EfaInterface(0, 0, "interface")
    assert sorted(set(efa_cards(layout))) == sorted(cards)
    assert EfaInterface(0, 1, "efa-only") in layout  # card 0 supports EFA behind the primary
    assert len(efa_cards(layout)) == CATALOG[instance_type]["maximum_efa_interfaces"]
    assert efa.validate_layout(instance_type, layout) == []


@pytest.mark.parametrize("preset", ["one-per-nci-group", "all-odd-cards"])
def test_gb200_preset_with_another_type_is_refused(preset: str) -> None:
    with pytest.raises(ConfigError) as error:
        efa.layout_for("p5.48xlarge", preset, None)
    (problem,) = error.value.items
    assert (problem.key, problem.value) == ("efa", preset) and problem.allowed.startswith("a preset for p5.48xlarge")


def test_unknown_instance_type_and_preset_are_refused() -> None:
    with pytest.raises(ConfigError, match="got 'm5.large'; allowed: a type of the EFA network-card catalog: p5"):
        efa.layout_for("m5.large", None, None)
    with pytest.raises(ConfigError, match="got 'fastest'; allowed: one of one-per-nci-group"):
        efa.layout_for(GB200, "fastest", None)
    with pytest.raises(ConfigError, match="allowed: a preset or a custom card list"):
        efa.layout_for(GB200, "maximum", [])


def test_custom_layout_adds_the_primary_and_keeps_explicit_cards() -> None:
    layout = efa.layout_for(
        GB200,
        None,
        [
            {"networkCardIndex": 3, "deviceIndex": 0, "interfaceType": "efa-only"},
            {"networkCardIndex": 2, "deviceIndex": 1, "interfaceType": "efa"},
        ],
    )
    assert layout == [EfaInterface(0, 0, "interface"), EfaInterface(2, 1, "efa"), EfaInterface(3, 0, "efa-only")]


def test_custom_item_shape_errors_name_the_item() -> None:
    with pytest.raises(ConfigError) as error:
        efa.layout_for(
            GB200,
            None,
            [
                {"networkCardIndex": 1, "deviceIndex": 0},
                {"networkCardIndex": "one", "deviceIndex": 0, "interfaceType": "efa-only"},
                "card 3",  # type: ignore[list-item]
            ],
            key="nodeGroups.gpu.efa",
        )
    problems = [str(p) for p in error.value.items]
    assert problems[0].startswith("nodeGroups.gpu.efa[0]: got") and "add ['interfaceType']" in problems[0]
    assert problems[1].startswith("nodeGroups.gpu.efa[1]: got") and "integers" in problems[1]
    assert problems[2].startswith("nodeGroups.gpu.efa[2]: got 'card 3'")


@pytest.mark.parametrize(
    ("interfaces", "card", "rule"),
    [
        ([EfaInterface(0, 0, "interface"), EfaInterface(17, 0, "efa-only")], "card 17", "card index exists"),
        (
            [EfaInterface(0, 0, "interface"), EfaInterface(1, 0, "efa-only"), EfaInterface(1, 0, "efa-only")],
            "card 1 device 0",
            "one interface per card and device index",
        ),
        ([EfaInterface(0, 0, "interface"), EfaInterface(3, 0, "efa")], "card 3", "interface type per card"),
        ([EfaInterface(0, 0, "interface"), EfaInterface(5, 0, "interface")], "card 5", "interface type per card"),
        ([EfaInterface(0, 0, "efa")], "card 0", "interface type per card"),
        ([EfaInterface(0, 0, "efa-only")], "card 0 device 0", "primary needs ENA"),
        ([EfaInterface(1, 0, "efa-only")], "card 0 device 0", "card 0 carries the ENA primary"),
        (
            [EfaInterface(0, 0, "interface"), EfaInterface(1, 0, "efa-only"), EfaInterface(1, 1, "efa-only")],
            "card 1",
            "interfaces per card",
        ),
        ([EfaInterface(0, 0, "interface"), EfaInterface(2, 0, "ena")], "card 2", "unknown"),
        ([EfaInterface(0, 0, "interface"), EfaInterface(2, -1, "efa")], "card 2", "0 or more"),
    ],
)
def test_layouts_aws_would_reject_name_card_and_rule(interfaces: list[EfaInterface], card: str, rule: str) -> None:
    problems = efa.validate_layout(GB200, interfaces, "gpu.interfaces")
    assert all(p.key == "gpu.interfaces" for p in problems), problems
    assert any(p.value.startswith(card) and rule in p.allowed for p in problems), problems


def test_efa_count_limit() -> None:
    # p6-b200 allows 8 EFA interfaces; 9 (two on card 1) break the limit.
    layout = efa.layout_for("p6-b200.48xlarge", "maximum", None) + [EfaInterface(1, 1, "efa")]
    problems = efa.validate_layout("p6-b200.48xlarge", layout)
    assert any("EFA count limit" in p.allowed and "9 EFA" in p.value for p in problems), problems


def test_custom_layout_errors_raise_config_error_with_key() -> None:
    with pytest.raises(ConfigError) as error:
        efa.layout_for(GB200, None, [{"networkCardIndex": 3, "deviceIndex": 0, "interfaceType": "interface"}])
    assert [str(p) for p in error.value.items] == [
        "efa: got card 3 device 0: interface; allowed: efa-only on this card of p6e-gb200.36xlarge (rule: interface "
        "type per card); fix: use efa-only on card 3"
    ]


@pytest.mark.parametrize(
    ("preset", "devices", "gbps"),
    [("one-per-nci-group", 4, 1600), ("all-odd-cards", 8, 1600), ("maximum", 16, 1600)],
)
def test_gb200_summaries(preset: str, devices: int, gbps: int) -> None:
    summary = efa.summarize_layout(GB200, efa.layout_for(GB200, preset, None))
    assert summary.efa_devices == devices
    assert summary.ena_interfaces == 1
    assert summary.efa_bandwidth_gbps == gbps  # the four GPUs cap EFA at 4 x 400 Gbps
    assert summary.ena_bandwidth_gbps == 100
    assert summary.network_cards_used == devices + 1


def test_summary_counts_efa_with_ena_on_both_sides_and_caps_a_group() -> None:
    layout = [EfaInterface(0, 0, "interface"), EfaInterface(2, 0, "efa"), EfaInterface(4, 0, "efa")]
    summary = efa.summarize_layout(GB200, layout)
    assert (summary.efa_devices, summary.ena_interfaces) == (2, 3)
    assert summary.efa_bandwidth_gbps == 400  # cards 2 and 4 share GPU 0's 400 Gbps budget
    assert summary.ena_bandwidth_gbps == 100 + 200 + 200


def test_p5_summary_is_the_documented_3200_gbps() -> None:
    summary = efa.summarize_layout("p5.48xlarge", efa.layout_for("p5.48xlarge", "maximum", None))
    assert (summary.efa_devices, summary.efa_bandwidth_gbps) == (32, 3200)
