"""The VPC CNI holds the planned pods' addresses plus 2 per node (WARM_IP_TARGET, MINIMUM_IP_TARGET), not its default
whole warm ENI (WARM_ENI_TARGET=1), which the subnet sizing does not cover."""

from __future__ import annotations

import pytest
from helpers.stacks import ROOT, stack_config
from ultraserver.offline import run_plan


@pytest.mark.parametrize("pods", [None, 48])
def test_the_cni_keeps_the_planned_pods_and_two_spare_addresses(pods: int | None) -> None:
    network = stack_config("gb200-x72")["ultraserver-eks:network"]
    overrides = {"ultraserver-eks:network": {**network, "gpuPodsPerNode": pods}} if pods else {}
    plan = run_plan(ROOT, "gb200-x72", overrides)
    options = plan.of_type("eks:index:Cluster")[0].inputs["vpcCniOptions"]
    assert options["configurationValues"] == {"env": {"WARM_IP_TARGET": "2", "MINIMUM_IP_TARGET": str(pods or 32)}}
    assert "warmEniTarget" not in options  # ignored once WARM_IP_TARGET is set (the CNI's README)
