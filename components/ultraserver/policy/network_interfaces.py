"""Rules for the network interfaces of GB200 launch templates: the 17-card layout of ENA and EFA interfaces."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ultraserver.facts.hardware.efa import EFA_TYPES, INTERFACE_TYPES
from ultraserver.policy.model import LAUNCH_TEMPLATE, Rule, as_int, as_list, is_gb200, is_unknown
from ultraserver.problems import Described, Problem

ENA, EFA, EFA_ONLY = INTERFACE_TYPES


@dataclass(frozen=True)
class Interface:
    """One launch-template network interface, with EC2's defaults applied."""

    card: int | None
    device: int | None
    kind: str


def _slot(value: Any) -> int | None:
    """A card or device index; EC2 defaults a missing one to 0, an unknown one stays None."""
    if is_unknown(value):
        return None
    return 0 if value is None else as_int(value)


def interfaces(props: Mapping[str, Any]) -> list[Interface]:
    """The template's network interfaces (card and device default to 0, type to ENA)."""
    out = []
    for nic in as_list(props.get("networkInterfaces")):
        if isinstance(nic, Mapping):
            kind = nic.get("interfaceType")
            out.append(
                Interface(
                    card=_slot(nic.get("networkCardIndex")),
                    device=_slot(nic.get("deviceIndex")),
                    kind=kind if isinstance(kind, str) and kind else ENA,
                )
            )
    return out


def is_gb200_template(resource_type: str, props: Mapping[str, Any]) -> bool:
    """A launch template for P6e-GB200 instances."""
    return resource_type == LAUNCH_TEMPLATE and is_gb200(props.get("instanceType"))


def has_efa(props: Mapping[str, Any]) -> bool:
    """The template attaches at least one EFA or EFA-only interface."""
    return any(nic.kind in EFA_TYPES for nic in interfaces(props))


def check_ena_primary(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """Card 0 carries the ENA primary interface at device index 0."""
    if not is_gb200_template(resource_type, props):
        return []
    primary = [nic for nic in interfaces(props) if nic.card == 0 and nic.device == 0]
    if len(primary) == 1 and primary[0].kind == ENA:
        return []
    found = Described(f"an {primary[0].kind!r} interface" if primary else "no interface")
    return [
        Problem(
            "networkInterfaces card 0 device 0",
            found,
            "the ENA primary interface (P6e-GB200 needs it there)",
            'add {networkCardIndex: 0, deviceIndex: 0, interfaceType: "interface"} (or leave interfaceType unset)',
        )
    ]


def check_no_efa_only_primary(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """No EFA-only interface on network card 0, where the primary lives."""
    if not is_gb200_template(resource_type, props):
        return []
    bad = [nic for nic in interfaces(props) if nic.card == 0 and nic.kind == EFA_ONLY]
    if not bad:
        return []
    return [
        Problem(
            f"networkInterfaces card 0 device {bad[0].device}",
            EFA_ONLY,
            "no efa-only interface on card 0: an EFA-only interface can never be the primary",
            'use interfaceType "interface" on card 0 and put EFA-only interfaces on odd cards',
        )
    ]


def check_card_range(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """Network card indices stay within the instance's cards, one interface per card and device index."""
    if not is_gb200_template(resource_type, props):
        return []
    limit = int(opts["networkCards"])
    nics = interfaces(props)
    out = []
    outside = sorted({nic.card for nic in nics if nic.card is not None and not 0 <= nic.card < limit})
    if outside:
        out.append(
            Problem(
                "networkInterfaces networkCardIndex",
                outside,
                f"0..{limit - 1}: {props.get('instanceType')} has {limit} cards",
                "build the interfaces from the instance type's NetworkCards",
            )
        )
    pairs = [(nic.card, nic.device) for nic in nics if nic.card is not None and nic.device is not None]
    duplicates = sorted({p for p in pairs if pairs.count(p) > 1})
    if duplicates:
        out.append(
            Problem(
                "networkInterfaces (card, device index)",
                duplicates,
                "each pair once",
                "give each interface its own slot",
            )
        )
    return out


def check_odd_cards_efa_only(resource_type: str, props: Mapping[str, Any], opts: Mapping[str, Any]) -> list[Problem]:
    """Odd network cards carry only EFA-only interfaces."""
    if not is_gb200_template(resource_type, props):
        return []
    bad = sorted(
        {nic.card for nic in interfaces(props) if nic.card is not None and nic.card % 2 == 1 and nic.kind != EFA_ONLY}
    )
    if not bad:
        return []
    return [
        Problem(
            "networkInterfaces odd cards",
            bad,
            "efa-only interfaces only: odd cards of P6e-GB200 support nothing else",
            'set interfaceType "efa-only" on every odd card',
        )
    ]


RULES: tuple[Rule, ...] = (
    Rule(
        name="gb200-ena-primary",
        description="GB200 launch templates put the ENA primary interface on network card 0, device index 0.",
        fix="Add an interface {networkCardIndex 0, deviceIndex 0, interfaceType interface}.",
        resource_types=(LAUNCH_TEMPLATE,),
        check_resource=check_ena_primary,
    ),
    Rule(
        name="gb200-no-efa-only-primary",
        description="GB200 launch templates have no EFA-only interface on network card 0 (the primary's card).",
        fix="Use interfaceType interface on card 0; EFA-only goes on odd cards.",
        resource_types=(LAUNCH_TEMPLATE,),
        check_resource=check_no_efa_only_primary,
    ),
    Rule(
        name="gb200-network-card-range",
        description="GB200 launch templates use network card indices below 17, each (card, device) slot once.",
        fix="Build the interfaces from the instance type's NetworkCards (0-16).",
        resource_types=(LAUNCH_TEMPLATE,),
        check_resource=check_card_range,
        config_schema={"networkCards": {"type": "integer", "description": "Network cards on the instance."}},
        defaults={"networkCards": 17},
    ),
    Rule(
        name="gb200-odd-cards-efa-only",
        description="GB200 launch templates attach only EFA-only interfaces to odd network cards.",
        fix="Set interfaceType efa-only on every odd card.",
        resource_types=(LAUNCH_TEMPLATE,),
        check_resource=check_odd_cards_efa_only,
    ),
)
