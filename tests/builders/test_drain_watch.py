"""What the drain's run reports: fabric checks that failed or never ran, a failed drift run, the Auto Scaling group
of a block found by its name, and each finding sent once while it lasts."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from helpers.sim_cluster import two_blocks
from ultraserver.builders.reclaim_drain import drain_blocks
from ultraserver.incluster import drain_watch as watch
from ultraserver.incluster.recheck import CHECKED_BLOCK, GROUP_LABEL, block_key


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _check(ultraserver: str) -> dict:
    worker = {"template": {"spec": {"nodeSelector": {GROUP_LABEL: ultraserver}}}, "replicas": 2}
    return {"metadata": {"namespace": "checks", "name": "nccl"}, "spec": {"mpiReplicaSpecs": {"Worker": worker}}}


def _conditions(kind: str) -> dict:
    return {"conditions": [{"type": kind, "status": "True"}]}


def test_a_failed_check_of_this_block_and_one_never_run_are_reported() -> None:
    first, _ = drain_blocks(two_blocks("managed", "standby"))
    manifest = _check(first.ultraserver)
    now = first.start + timedelta(hours=1)
    run = {
        "metadata": {"namespace": "checks", "name": "nccl", "annotations": {CHECKED_BLOCK: block_key(first)}},
        "status": _conditions("Failed"),
    }
    (failed,) = watch.check_findings("demo", [manifest], [run], [first], now)
    assert "failed" in failed["subject"] and "ultraserver verify --stack demo" in failed["message"]
    passed = {**run, "status": _conditions("Succeeded")}
    assert watch.check_findings("demo", [manifest], [passed], [first], now) == []
    # Nothing of this block: quiet until CHECKS_DUE after the start, then reported.
    old = {
        "metadata": {"namespace": "checks", "name": "nccl", "creationTimestamp": _iso(first.start - timedelta(days=1))}
    }
    assert (
        watch.check_findings("demo", [manifest], [old], [first], first.start + watch.CHECKS_DUE - timedelta(minutes=1))
        == []
    )
    (missing,) = watch.check_findings("demo", [manifest], [old], [first], first.start + watch.CHECKS_DUE)
    assert "has not run" in missing["message"]


def test_the_newest_finished_drift_run_decides() -> None:
    def job(name: str, at: str, kind: str) -> dict:
        return {
            "metadata": {"namespace": "ultraserver-health", "name": name, "creationTimestamp": at},
            "status": _conditions(kind),
        }

    older_failed = job("node-drift-1", "2026-12-02T10:00:00Z", "Failed")
    newer_ok = job("node-drift-2", "2026-12-02T10:30:00Z", "Complete")
    assert watch.drift_findings("demo", [older_failed, newer_ok]) == []
    (found,) = watch.drift_findings("demo", [newer_ok, job("node-drift-3", "2026-12-02T11:00:00Z", "Failed")])
    assert "node-drift-3" in found["message"] and "--node-facts-only" in found["message"]


def test_a_block_s_group_is_found_by_its_resource_name_only() -> None:
    groups = [
        {"name": "demo-gb200-0a1b2c3", "desired": 0, "max": 18},
        {"name": "demo-gb200-b-0a1b2c3", "desired": 0, "max": 18},
        {"name": "eks-demo-gb200-20261215t1130z-1a2b3c4-11112222-3333-4444-5555-666677778888", "desired": 0, "max": 18},
    ]
    assert watch.block_group(groups, "demo-gb200") == groups[0]
    assert watch.block_group(groups, "demo-gb200-20261215t1130z") == groups[2]
    assert watch.block_group(groups, "demo-other") is None


def test_a_finding_is_sent_once_while_it_lasts_and_again_when_it_comes_back() -> None:
    now = datetime(2026, 12, 2, 10, 7, tzinfo=timezone.utc)
    found = [watch.finding("a", "s", "m")]
    assert watch.to_send(found, set(), now) == found
    assert watch.to_send(found, {"a"}, now) == []
    # Nothing remembered (the ConfigMap unreadable): every half hour, not every minute.
    assert watch.to_send(found, None, now) == []
    assert watch.to_send(found, None, now.replace(minute=30)) == found


def test_a_block_whose_group_the_drain_regrew_gets_the_join_grace_again() -> None:
    # An extension confirmed after the old scale-down: the drain scales the group back up and the nodes take minutes to
    # launch and join. Paging "no nodes in its paid block" then sends a person to a loss that is already mending.
    block, _ = drain_blocks(two_blocks("managed", "standby"))
    now = block.start + timedelta(hours=2)
    (found,) = watch.empty_block_findings("demo", [block], [], now, {})
    assert f"{block.ultraserver} has no nodes in its paid block" in found["subject"]
    assert watch.empty_block_findings("demo", [block], [], now, {block.ultraserver: now - timedelta(minutes=5)}) == []
    # Past the grace from the regrowth, no node is a loss again.
    late = {block.ultraserver: now - watch.JOIN_GRACE}
    assert len(watch.empty_block_findings("demo", [block], [], now, late)) == 1


def test_the_regrowth_times_are_read_back_within_the_join_grace_only() -> None:
    now = datetime(2026, 12, 2, 10, 7, tzinfo=timezone.utc)
    kept = {"nvl72-1": _iso(now - timedelta(minutes=5)), "nvl72-2": _iso(now - timedelta(hours=2))}
    state = {"data": {watch.REGROWN_KEY: json.dumps(kept)}}
    assert watch.regrown_state(state, now) == {"nvl72-1": now - timedelta(minutes=5)}
    assert watch.regrown_state({"data": {watch.REGROWN_KEY: "not json"}}, now) == {}
    assert watch.regrown_state(None, now) == {}
