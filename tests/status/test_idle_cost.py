"""The idle GPU-hours estimate: per reserved slot, from the block start to the node's last Ready transition."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from ultraserver.facts.kubernetes.scheduling import ULTRASERVER_LABEL
from ultraserver.status.cluster import ClusterSide, cluster_side, idle_gpu_hours
from ultraserver.verify.clients import Node

START = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
END = START + timedelta(days=7)


def side(*ready_since: datetime | None, not_ready: int = 0) -> ClusterSide:
    nodes = [Node(f"r{n}", {ULTRASERVER_LABEL: "g"}, {}, True, t) for n, t in enumerate(ready_since)]
    nodes += [Node(f"x{n}", {ULTRASERVER_LABEL: "g"}, {}, False, START) for n in range(not_ready)]
    nodes.append(Node("other", {ULTRASERVER_LABEL: "another-group"}, {}, False, START))
    return cluster_side(nodes, "g", gpus_per_node=4, efa_per_node=4)


@pytest.mark.parametrize(
    ("now", "expected"),
    [
        (START - timedelta(hours=1), 0.0),  # before the block: nothing paid yet
        (START + timedelta(hours=2), 4 * (1 + 2 * 2)),  # one node Ready after 1 h, one slot empty, one NotReady
        (END + timedelta(days=1), 4 * (1 + 2 * 7 * 24)),  # after the end: counted up to the end only
    ],
)
def test_idle_gpu_hours(now: datetime, expected: float) -> None:
    s = side(START + timedelta(hours=1), not_ready=1)
    assert idle_gpu_hours(s, 3, START, END, now) == pytest.approx(expected)


def test_ready_nodes_beyond_the_reservation_and_unknown_transitions() -> None:
    # Two Ready nodes on a one-instance reservation: the earliest counts; no transition time means Ready all along.
    assert idle_gpu_hours(side(None, START + timedelta(hours=3)), 1, START, END, END) == 0.0
    assert idle_gpu_hours(side(START - timedelta(hours=1)), 1, START, END, END) == 0.0
