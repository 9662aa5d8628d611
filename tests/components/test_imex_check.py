"""IMEX check inputs: one nvbandwidth job per UltraServer."""

from __future__ import annotations

import pytest
from ultraserver.components.imex_check import ImexCheckArgs, job_args
from ultraserver.config.views import ImexTarget
from ultraserver.problems import ConfigError


def test_job_args_one_job_per_ultraserver() -> None:
    args = ImexCheckArgs(
        targets=[ImexTarget("us0", {"us": "0"}, 9), ImexTarget("us1", {"us": "1"}, 18)],
        nodes=4,
        launcher_node_selector={"role": "system"},
    )
    jobs = job_args(args)
    assert [(j.name, j.max_nodes, dict(j.worker_node_selector)) for j in jobs] == [
        ("nvbandwidth-us0", 9, {"us": "0"}),
        ("nvbandwidth-us1", 18, {"us": "1"}),
    ]
    assert all(j.nodes == 4 and j.namespace == "imex-check" for j in jobs)
    assert all(dict(j.launcher_node_selector) == {"role": "system"} for j in jobs)


def test_job_args_reports_every_problem() -> None:
    args = ImexCheckArgs(
        targets=[ImexTarget("US_0", {}), ImexTarget("a", {}), ImexTarget("a", {})],
        namespace="Bad",
        threshold_gbps=-1,
    )
    with pytest.raises(ConfigError) as err:
        job_args(args)
    text = str(err.value)
    assert "imex_check.namespace: 'Bad'" in text
    assert "UltraServer name 'US_0'" in text
    assert "names a appear more than once" in text
    assert "imex_check.threshold_gbps: -1" in text
