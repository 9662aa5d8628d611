"""ComputeDomain daemons start late on big domains (kubernetes-sigs/dra-driver-nvidia-gpu#1107); a priority class and
Guaranteed QoS would help, but the pinned chart cannot give them one: the controller renders the daemons' DaemonSet
from a template built into its image (templates/compute-domain-daemon.tmpl.yaml at v0.4.1: no priorityClassName, and
``resources`` holds only the daemon's claim), and the chart passes the controller nothing that could set either.

This test reads the packaged chart (../shared/upstream/charts/) and fails, naming what appeared, the day a chart
version offers such a knob, so the toolkit then sets it.
"""

from __future__ import annotations

import re
import tarfile

from helpers.render import packaged_chart
from ultraserver.facts.pins import charts

CHART = f"{charts.DRA_DRIVER}-{charts.pinned(charts.DRA_DRIVER).version}.tgz"


def test_the_pinned_dra_chart_offers_no_priority_or_resources_for_compute_domain_daemons() -> None:
    with tarfile.open(packaged_chart(CHART)) as tar:
        member = tar.extractfile(f"{charts.DRA_DRIVER}/templates/controller.yaml")
        assert member is not None
        controller = member.read().decode()
    # What the controller is told about the daemons it renders: env vars whose name mentions the CD daemon.
    daemon_env = sorted(set(re.findall(r"name: (\w*CD_DAEMON\w*)", controller)))
    assert daemon_env == ["CD_DAEMON_IMAGE_PULL_SECRET_NAMES", "LOG_VERBOSITY_CD_DAEMON"], daemon_env
    assert not re.search(r"(?i)daemon\w*priority|priority\w*daemon|DAEMON_RESOURCES", controller)
