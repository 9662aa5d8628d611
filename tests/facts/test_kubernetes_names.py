"""Kubernetes DNS label and subdomain names."""

from __future__ import annotations

import re

import pytest
from ultraserver.facts.kubernetes.scheduling import DNS_LABEL, DNS_LABEL_PATTERN, DNS_SUBDOMAIN


@pytest.mark.parametrize("name", ["imex-check", "a", "0", "a" * 63])
def test_dns_labels(name: str) -> None:
    assert DNS_LABEL.fullmatch(name)
    assert re.fullmatch(DNS_LABEL_PATTERN, name)


@pytest.mark.parametrize("name", ["Imex", "-a", "a-", "a.b", "a" * 64, ""])
def test_not_dns_labels(name: str) -> None:
    assert not DNS_LABEL.fullmatch(name)


def test_subdomains_allow_dots_up_to_253_characters() -> None:
    assert DNS_SUBDOMAIN.fullmatch("compute-domain.gb200")
    assert DNS_SUBDOMAIN.fullmatch("a" * 253)
    assert not DNS_SUBDOMAIN.fullmatch("a" * 254)
    assert not DNS_SUBDOMAIN.fullmatch("a..")
