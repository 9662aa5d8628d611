"""One owner per CRD: a CRD that two pinned charts ship in their crds/ is applied by the toolkit itself.

The GPU Operator v26.7.0 chart carries copies of the DRA driver's ComputeDomain CRDs in its crds/, older than the
driver's 0.4.1 ones (ComputeDomain still requires numNodes there). Helm creates a crds/ entry only when it is absent
and never upgrades it, so whichever chart came first would own the version. The toolkit applies the DRA driver's
copies before either chart (tests/resources/test_kubernetes_layer.py checks the order in the plan).
"""

from __future__ import annotations

from collections import defaultdict

from ultraserver.facts.pins import charts, manifests


def shipped_by() -> dict[str, set[str]]:
    """CRD name -> the pinned charts whose crds/ ship it."""
    owners: dict[str, set[str]] = defaultdict(set)
    for name, chart in charts.catalog().items():
        for crd in chart.crds:
            owners[crd].add(name)
    return owners


def test_every_crd_two_charts_ship_is_applied_by_the_toolkit() -> None:
    shared = {crd: found for crd, found in shipped_by().items() if len(found) > 1}
    assert shared, "no CRD is shipped twice any more: the ownership rule (and this test) can go"
    unowned = {crd: sorted(found) for crd, found in shared.items() if crd not in manifests.DRA_DRIVER_CRDS}
    assert unowned == {}


def test_the_toolkit_applies_the_dra_drivers_copies() -> None:
    assert {c for c, found in shipped_by().items() if charts.DRA_DRIVER in found} == set(manifests.DRA_DRIVER_CRDS)
    assert {c for c, found in shipped_by().items() if charts.GPU_OPERATOR in found} >= set(manifests.DRA_DRIVER_CRDS)
