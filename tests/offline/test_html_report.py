"""The HTML report: one self-contained page, the graph and the card pictures as well-formed inline SVG."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import replace
from datetime import datetime, timezone
from html.parser import HTMLParser

import pytest
from helpers.stacks import STACKS
from ultraserver.builders.device_claims import claim_template
from ultraserver.facts.capacity.capacity_blocks import ReservationWindow
from ultraserver.facts.hardware import devices, efa
from ultraserver.offline.graph import edges
from ultraserver.offline.groups import clock_line, group_views
from ultraserver.offline.html_report import html_report
from ultraserver.offline.pairing_svg import pairing_enforced
from ultraserver.offline.report import PlanText, summary, tree
from ultraserver.offline.svg import cards_svg, graph_svg, layers
from ultraserver.problems import WARNING, Problem

SVG = "{http://www.w3.org/2000/svg}"
NOW = datetime(2026, 11, 23, 2, 50, tzinfo=timezone.utc)
GB200 = "p6e-gb200.36xlarge"
WINDOW = ReservationWindow(
    datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc), datetime(2026, 12, 15, 11, 30, tzinfo=timezone.utc), 60
)


class Page(HTMLParser):
    """Tags, attributes and the raw SVG blocks of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def text_of(plan, **changes) -> PlanText:  # type: ignore[no-untyped-def]
    base = PlanText(
        title=f"Offline plan of {plan.stack}",
        clock=clock_line(NOW),
        groups=group_views(plan, {}, NOW),
        warnings=[Problem("cluster.name", "example", "your own value", "change it", WARNING)],
        policies="Policies: 30 rules checked, no violations.",
        tree=tree(plan),
        summary=summary(plan),
        placeholders=["aws:ssm/getParameter -> ami-offline-placeholder"],
    )
    return replace(base, **changes)


def svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(block) for block in re.findall(r"<svg\b.*?</svg>", page, flags=re.S)]


def test_graph_svg_has_one_box_per_node_and_one_arrow_per_edge(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x72")
    labels, pairs = edges(plan)
    root = ET.fromstring(graph_svg(plan))
    nodes = {g.get("data-urn"): g for g in root.iter(f"{SVG}g") if g.get("class") == "node"}
    assert set(nodes) == set(labels)
    assert len([p for p in root.iter(f"{SVG}path") if p.get("class") == "edge"]) == len(pairs)
    # Columns follow dependency depth: whatever waits sits right of what it waits for.
    x = {urn: float(g.find(f"{SVG}rect").get("x")) for urn, g in nodes.items()}  # type: ignore[union-attr]
    assert all(x[a] < x[b] for a, b in pairs)


def test_layers_are_longest_dependency_chains() -> None:
    assert layers(["a", "b", "c", "d"], {("a", "b"), ("b", "c"), ("a", "c")}) == {"a": 0, "b": 1, "c": 2, "d": 0}


def test_card_picture_shows_all_17_cards_with_type_nci_group_and_bandwidth() -> None:
    interfaces = efa.layout_for(GB200, "one-per-nci-group", None)
    root = ET.fromstring(cards_svg("gpu", GB200, interfaces))
    cards = {int(g.get("data-card", -1)): g for g in root.iter(f"{SVG}g") if g.get("class") == "card"}
    assert sorted(cards) == list(range(17))
    types = {i: g.get("data-type") for i, g in cards.items()}
    assert types[0] == "ena" and [i for i, t in types.items() if t == "efa-only"] == [1, 5, 9, 13]
    assert sum(1 for t in types.values() if t == "unused") == 12
    assert cards[5].get("data-nci") == "NCI 1" and cards[2].get("data-nci") == "-"
    texts = ["".join(t.itertext()) for t in cards[5].iter(f"{SVG}text")]
    assert texts == ["card 5", "efa-only", "400G", "NCI 1"]


def test_maximum_layout_fills_every_secondary_card() -> None:
    root = ET.fromstring(cards_svg("gpu", GB200, efa.layout_for(GB200, "maximum", None)))
    types = [g.get("data-type") for g in root.iter(f"{SVG}g") if g.get("class") == "card"]
    assert types.count("efa-only") == 16 and "unused" not in types


@pytest.mark.parametrize("stack", STACKS)
def test_page_is_self_contained_with_graph_cards_tables(shipped_plan, stack: str) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan(stack)
    text = text_of(plan)
    page = html_report(plan, text)
    parser = Page()
    parser.feed(page)
    tags = [tag for tag, _ in parser.tags]
    assert "script" not in tags and "link" not in tags and "img" not in tags and "iframe" not in tags
    # No network at view time: the only URL is the SVG namespace.
    assert set(re.findall(r"https?://[^\s\"'<>)]+", page)) <= {"http://www.w3.org/2000/svg"}
    assert "@import" not in page and "url(http" not in page
    pictures = svgs(page)
    # Each GB200 group: its network cards; no pairing picture, as no shipped stack's claims pair devices (device
    # plugins do not, whole-node DRA claims take every device without a constraint).
    assert [p.get("class") for p in pictures] == ["cards"] * len(text.groups) + ["graph"]
    assert tags.count("table") >= len(text.groups)
    for view in text.groups:
        assert f'id="group-{view.name}"' in page and view.row("reservation") in page
    assert "Policy results" in page and "ami-offline-placeholder" in page and text.clock in page


def test_everything_is_escaped(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x72")
    page = html_report(
        plan, text_of(plan, warnings=[Problem("k", "<script>alert(1)</script>", "", "", WARNING)], title="a & <b>")
    )
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<title>a &amp; &lt;b&gt;</title>" in page


def test_policy_violations_and_window_state_are_shown(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    violation = {"policy": "rule-<x>", "level": "mandatory", "urn": "urn:a", "message": "fix & retry"}
    plan = replace(shipped_plan("gb200-x72"), policies=[violation])
    page = html_report(plan, text_of(plan, policies="Policies: 1 mandatory violation."))
    assert '<table class="policies">' in page
    assert "<td>rule-&lt;x&gt;</td>" in page and "<td>fix &amp; retry</td>" in page
    assert '<td class="future">future: 2026-12-01T11:30Z' not in page  # no windows were given to text_of
    windows_page = html_report(plan, text_of(plan, groups=group_views(plan, {"gb200-x72-nvl72": [WINDOW]}, NOW)))
    assert '<td class="future">future: 2026-12-01T11:30Z to 2026-12-15T11:30Z' in windows_page


def test_the_pairing_picture_is_drawn_only_where_a_claim_enforces_the_pairing(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x72-dra")
    templates = [r for r in plan.resources if r.type.endswith(":ResourceClaimTemplate")]
    assert templates and not pairing_enforced(plan.resources)
    layout = efa.layout_for(GB200, "one-per-nci-group", None)
    partial = claim_template("half", "ml", devices.node_devices(GB200, layout), 2)
    paired = replace(plan, resources=[*plan.resources, replace(templates[0], inputs=partial)])
    assert pairing_enforced(paired.resources)
    classes = [p.get("class") for p in svgs(html_report(paired, text_of(paired)))]
    assert classes.count("pairing") == len(text_of(paired).groups) > 0
