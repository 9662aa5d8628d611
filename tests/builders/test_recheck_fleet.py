"""Fabric checks at each join for jobs over several UltraServers: a grouped fleet's jobs (one node group of several
UltraServers, told apart by anti-affinity) and the EFA check over several node groups are made again once EVERY
UltraServer they may run on has its current block's nodes all joined and Ready, once per set of blocks."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta
from typing import Any

import pytest
from helpers.sim_cluster import DAYS, FIRST
from helpers.stacks import stack_config
from ultraserver.builders.efa_check import EfaCheckArgs, efa_check_args, efa_mpijob_manifest
from ultraserver.builders.imex_check import imex_check_args, job_args
from ultraserver.builders.nccl_check import mpijob_manifest as nccl_manifest
from ultraserver.builders.nccl_check import nccl_check_args
from ultraserver.builders.nvbandwidth_job import mpijob_manifest as nvbandwidth_manifest
from ultraserver.builders.reclaim_drain import ReclaimDrainArgs, drain_blocks, rechecked_jobs
from ultraserver.config.settings import Settings, parse_settings
from ultraserver.config.views import device_mode
from ultraserver.facts.hardware.devices import NodeDevices
from ultraserver.incluster import recheck as rc
from ultraserver.incluster.drain import Block
from ultraserver.verify.acceptance import ultraserver_checks
from ultraserver.verify.expect import expectation

from tests.builders.test_recheck_clock import MINUTE, CheckCluster, walk

API = "/apis/kubeflow.org/v2beta1/namespaces"


def fleet_on_two_blocks() -> Settings:
    """gb200-multi's fleet alone: one self-managed group over 2 UltraServers, on two back-to-back blocks, standby."""
    config = copy.deepcopy(stack_config("gb200-multi"))
    fleet = config["ultraserver-eks:gpuNodeGroups"][1]
    fleet.update(handover="standby", ultraserverCount=2)
    fleet.pop("reservationWindow")
    fleet["capacityBlocks"] = [
        {
            "start": (FIRST + timedelta(days=DAYS * i)).isoformat(),
            "end": (FIRST + timedelta(days=DAYS * (i + 1))).isoformat(),
        }
        for i in range(2)
    ]
    config["ultraserver-eks:gpuNodeGroups"] = [fleet]
    config["ultraserver-eks:ncclCheck"] = {"enabled": True}
    return parse_settings(config, today=FIRST.date() - timedelta(days=7))


def check_manifests(settings: Settings) -> list[dict[str, Any]]:
    """The check MPIJobs the stack deploys (the drain's checks.json)."""
    mode = device_mode(settings)
    imex, efa = imex_check_args(settings, mode), efa_check_args(settings, mode)
    return [
        *(nvbandwidth_manifest(j) for j in (job_args(imex) if imex else [])),
        *(nccl_manifest(j) for j in nccl_check_args(settings, mode)),
        *([efa_mpijob_manifest(efa)] if efa else []),
    ]


def test_a_grouped_fleets_jobs_are_made_again_once_every_ultraserver_of_it_is_ready() -> None:
    settings = fleet_on_two_blocks()
    first, second = drain_blocks(settings)
    manifests = check_manifests(settings)
    names = sorted(m["metadata"]["name"] for m in manifests)
    assert names == ["nccl-efa", "nccl-fleet", "nvbandwidth-fleet-1", "nvbandwidth-fleet-2"]
    # Every one of them is in the drain's checks: the fleet's nvbandwidth and NCCL jobs, the EFA job over the fleet.
    assert len(rechecked_jobs(ReclaimDrainArgs([first, second], checks=manifests))) == 4
    assert {rc.job_node_groups(m) for m in manifests} == {("fleet",)} and second.nodes == 36
    sim = CheckCluster()
    # The second block: one UltraServer's 18 nodes are Ready at +8, the other's join at +20 and are Ready at +25.
    one = sim.join("fleet", 18, second.start + timedelta(minutes=5), "self-managed")
    other = sim.join("fleet", 18, second.start + timedelta(minutes=20), "self-managed")
    all_ready = second.start + timedelta(minutes=25)
    ready_at = {second.start + timedelta(minutes=8): one, all_ready: other}
    walk(sim, manifests, [first, second], second.start, second.start + timedelta(hours=1), ready_at)
    # Made once, together (so the fleet's nvbandwidth jobs avoid each other), when the last UltraServer was Ready.
    assert sorted(sim.made) == [(all_ready, name) for name in names]
    keys = {j["metadata"]["annotations"][rc.CHECKED_BLOCK] for j in sim.mpijobs.values()}
    assert keys == {rc.block_key(second)}


def test_the_efa_job_waits_for_every_node_group_it_spans_and_records_their_blocks() -> None:
    efa = efa_mpijob_manifest(
        EfaCheckArgs(
            node_groups=["nvl72-2", "nvl72-1"],
            node_devices=NodeDevices(
                "p6e-gb200.36xlarge",
                4,
                (2, 2, 2, 2),
            ),
            min_bus_bandwidth_gbps=800,
        )
    )
    assert rc.job_node_groups(efa) == ("nvl72-1", "nvl72-2")
    start = datetime(2026, 12, 8, 11, 30, tzinfo=FIRST.tzinfo)
    # nvl72-1 starts a new block; nvl72-2 is in the middle of a longer one, its nodes Ready since.
    new = Block("nvl72-1", ("cr-0aaaaaaaaaaaaaaa1",), start, start + timedelta(days=7), 90, 18)
    running = Block("nvl72-2", ("cr-0bbbbbbbbbbbbbbb2",), start - timedelta(days=3), start + timedelta(days=4), 90, 18)
    sim = CheckCluster()
    sim.ready(sim.join("nvl72-2", 18, running.start + timedelta(minutes=6), "managed"))
    sim.now = start - timedelta(days=1)  # the deploy's run, before nvl72-1's block
    sim.post(f"{API}/efa-check/mpijobs", efa)
    joining = sim.join("nvl72-1", 18, start + timedelta(minutes=4), "managed")
    ready = start + timedelta(minutes=11)
    walk(sim, [efa], [new, running], start, start + timedelta(hours=1), {ready: joining})
    assert sim.made[1:] == [(ready, "nccl-efa")]
    (job,) = sim.mpijobs.values()
    assert job["metadata"]["annotations"][rc.CHECKED_BLOCK] == f"{rc.block_key(new)},{rc.block_key(running)}"
    # A node group without a block (no window) never gets one: the job is left to the deploy and verify.
    assert not rc.rechecked(efa, [new]) and rc.due_checks(list(sim.nodes.values()), [], [efa], [new], ready) == []
    assert rc.due_checks(list(sim.nodes.values()), [], [efa], [new, running], ready + MINUTE) != []


@pytest.mark.parametrize("stack", ["gb200-x36", "gb200-x72", "gb200-x72-dra", "gb200-multi", "fleet"])
def test_status_counts_the_checks_the_recheck_makes_again_as_the_script_decides(stack: str) -> None:
    settings = fleet_on_two_blocks() if stack == "fleet" else parse_settings(stack_config(stack), stack=stack)
    manifests = {m["metadata"]["name"]: m for m in check_manifests(settings)}
    blocks = drain_blocks(settings)
    expected = expectation(settings)
    seen = set()
    for group in expected.groups:
        for job in ultraserver_checks(expected, group.name):
            manifest = manifests[job.name]
            assert rc.job_node_groups(manifest) == tuple(sorted(job.spans))
            assert rc.rechecked(manifest, blocks) == (not job.unwindowed)
            seen.add(job.name)
    assert seen == set(manifests)  # every check the stack deploys covers some UltraServer


def test_a_node_that_never_joins_holds_the_checks_back_only_until_the_join_grace() -> None:
    settings = fleet_on_two_blocks()
    _, second = drain_blocks(settings)
    manifests = check_manifests(settings)
    sim = CheckCluster()
    # 35 of the fleet's 36 nodes join and are Ready at +6; the last never comes.
    sim.ready(sim.join("fleet", 35, second.start + timedelta(minutes=6), "self-managed"))
    walk(sim, manifests, [second], second.start, second.start + timedelta(hours=1), {})
    grace = second.start + rc.JOIN_GRACE
    assert sorted(sim.made) == sorted((grace, m["metadata"]["name"]) for m in manifests)
