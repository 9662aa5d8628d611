"""EKS deletion protection is on unless the stack turns it off (cluster.deletionProtection)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.stacks import ROOT, stack_config
from ultraserver.offline import run_plan


def cluster(**changes: Any) -> dict[str, Any]:
    return {**stack_config("gb200-x72")["ultraserver-eks:cluster"], **changes}


@pytest.mark.parametrize(("setting", "expected"), [({}, True), ({"deletionProtection": False}, False)])
def test_the_cluster_has_deletion_protection_unless_turned_off(setting: dict[str, Any], expected: bool) -> None:
    plan = run_plan(ROOT, "gb200-x72", {"ultraserver-eks:cluster": cluster(**setting)})
    assert plan.of_type("eks:index:Cluster")[0].inputs["deletionProtection"] is expected
