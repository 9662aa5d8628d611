"""Every shipped stack rehearsed healthy and with every fault of the catalogue: each ends with its verdict and exit.

One plan per stack (at the rehearsal's default moment) is shared by all of its rehearsals; each rehearsal serves
its own emulated API on 127.0.0.1 and runs verify, the drift script and status's cluster side against it.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers.stacks import ROOT, STACKS, stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.problems import ConfigError
from ultraserver.rehearse import jobs
from ultraserver.rehearse.emulator import Emulator
from ultraserver.rehearse.faults import CATALOGUE
from ultraserver.rehearse.report import format_rehearsal
from ultraserver.rehearse.run import RESPONSES, Rehearsal, build, default_moment, rehearse, stack_plan
from ultraserver.status.cluster import read_cluster
from ultraserver.verify.clients import connect
from ultraserver.verify.expect import expectation
from ultraserver.verify.verdict import EFA, NODE_FACTS, NVLINK, RESOURCE_SLICES


@cache
def _stack(stack: str) -> tuple[Any, Any, Any]:
    settings = parse_settings(stack_config(stack))
    moment = default_moment(expectation(settings))
    return settings, moment, stack_plan(ROOT, stack, settings, moment)


def run(stack: str, *faults: str) -> Rehearsal:
    settings, moment, plan = _stack(stack)
    return rehearse(ROOT, stack, settings, list(faults), moment, plan)


def failed(rehearsal: Rehearsal) -> dict[str, list[str]]:
    """Check name -> the text of its failed verdicts' problems; a failed stage without verdicts by its name, with
    its FAILED lines."""
    found: dict[str, list[str]] = {}
    for stage in rehearsal.stages:
        for verdict in stage.verdicts:
            if not verdict.passed:
                found.setdefault(verdict.check, []).extend(str(p) for p in verdict.problems)
        if stage.code and not stage.verdicts:
            found[stage.name] = [line for line in stage.output.splitlines() if line.startswith("FAILED ")]
    return found


@pytest.mark.parametrize("stack", STACKS)
def test_a_healthy_rehearsal_passes_every_check(stack: str) -> None:
    rehearsal = run(stack)
    assert rehearsal.code == 0, format_rehearsal(rehearsal)
    names = [s.name for s in rehearsal.stages]
    assert names[0] == "verify" and "status (cluster side)" in names and "drift check" in names
    verdicts = rehearsal.stages[0].verdicts
    assert verdicts and all(v.passed for v in verdicts)
    assert "Passed (" in format_rehearsal(rehearsal)
    # status's cluster side reads DRA-mode devices from the ResourceSlices: no healthy node is short of EFA.
    status = next(s for s in rehearsal.stages if s.name == "status (cluster side)")
    assert "short of EFA" not in status.output and " 0 GPUs" not in status.output


def expected_check(stack: str, fault: str) -> str | None:
    """The verify check (or the stage) a fault fails on the stack, or the stage that judges the toolkit's response
    to it; None when the stack cannot show the fault."""
    dra = stack == "gb200-x72-dra"
    return {
        "notready": NODE_FACTS,
        "efa": RESOURCE_SLICES if dra else NODE_FACTS,
        "clique": NODE_FACTS,
        "imex": NVLINK,
        "socket": EFA if stack == "gb200-multi" else None,
        "missing-node": NODE_FACTS,
        "node-fails": "node failure",
        # Every shipped stack has block windows (gb200-multi too), so each deploys the drain and its alert topic.
        **{f: f"response to {f}" for f in RESPONSES},
        # Only a self-managed group is the drain's to reboot (gb200-x36 and gb200-multi's fleet have one).
        "gpu-fails": "response to gpu-fails" if stack in ("gb200-x36", "gb200-multi") else None,
    }[fault]


@pytest.mark.parametrize("fault", [f.name for f in CATALOGUE])
@pytest.mark.parametrize("stack", STACKS)
def test_each_fault_ends_with_its_verdict_naming_the_node_and_the_fix(stack: str, fault: str) -> None:
    """`rehearse --break F` exits 0 exactly when the toolkit responded as it must: the fault named by a failing
    check, or the event handled (its response stage passed)."""
    check = expected_check(stack, fault)
    if check is None:
        with pytest.raises(ConfigError) as refused:
            run(stack, fault)
        lacking = {"socket": "the stack runs no EFA check", "gpu-fails": "no self-managed GB200 group"}[fault]
        assert lacking in str(refused.value)
        return
    rehearsal = run(stack, fault)
    (injected,) = rehearsal.injected
    text = format_rehearsal(rehearsal)
    assert rehearsal.code == 0 and rehearsal.detected(injected) and not rehearsal.unexplained, text
    if fault == "node-fails":
        # Without spares, the loss and the alert are reported.
        stage = next(s for s in rehearsal.stages if s.name == check)
        assert stage.code == 0 and "has no spare left" in stage.output and "GPU-hours lost" in stage.output
        return
    if fault in RESPONSES:
        assert next(s for s in rehearsal.stages if s.name == check).code == 0, text
        assert f"Fault {fault} on {injected.subject}: handled (its response passed)" in text
        return
    problems = failed(rehearsal)
    assert check in problems, text
    assert all("fix:" in text for text in problems[check])
    if fault in ("notready", "efa"):
        assert any(injected.subject in text for text in problems[check])
    assert f"Fault {fault} on {injected.subject}: named by the checks above" in text


def test_at_the_drains_cutoff_the_block_is_cordoned_and_no_daemonset_pod_is_evicted() -> None:
    settings = parse_settings(stack_config("gb200-x72"))
    cutoff = datetime(2026, 12, 15, 10, 11, tzinfo=timezone.utc)  # end 11:30, scale-down 65 minutes before, notice 15
    rehearsal = rehearse(ROOT, "gb200-x72", settings, [], cutoff)
    drain = next(s for s in rehearsal.stages if s.name == "drain")
    assert drain.code == 0 and rehearsal.code == 0, drain.output
    assert drain.output.count("cordoned node ") == 18
    assert "evict" not in drain.output and "hold queue gb200" in drain.output
    # The drift check and the drain connected as in their pods: HTTPS, the CA and token of a service account.
    assert ("GET", "/api/v1/nodes", True) in rehearsal.in_cluster
    # Each node patched once to cut it off, and once by the spares controller for its role label (this cluster's
    # first run of the drain).
    labelled = drain.output.count("labelled node ")
    assert (
        sum(1 for method, path, _ in rehearsal.in_cluster if method == "PATCH" and "/nodes/" in path) == 18 + labelled
    )
    assert all(authorized for *_, authorized in rehearsal.in_cluster)
    assert rehearsal.in_cluster_url.startswith("https://127.0.0.1:")
    assert f"{len(rehearsal.in_cluster)} request(s) to {rehearsal.in_cluster_url}" in format_rehearsal(rehearsal)


def test_a_healthy_rehearsal_has_nothing_to_drain_and_says_when_it_starts() -> None:
    drain = next(s for s in run("gb200-x72").stages if s.name == "drain")
    idle, *kept = drain.output.splitlines()
    assert drain.code == 0
    assert idle == "nothing to drain at 2026-12-01T13:00:00Z (the drain starts: nvl72 at 2026-12-15T10:10:00Z)"
    # The run's only other act: the spares controller's role label on each of the 18 nodes (none held back here).
    assert len(kept) == 18 and all(line.startswith("labelled node ") for line in kept), drain.output


def test_the_drift_script_sees_a_notready_node_through_the_api() -> None:
    rehearsal = run("gb200-x72", "notready")
    drift = next(s for s in rehearsal.stages if s.name == "drift check")
    assert drift.code == 1
    assert f"DRIFT node {rehearsal.injected[0].subject}: NotReady" in drift.output


def test_status_counts_the_nodes_it_reads_through_the_api() -> None:
    rehearsal = run("gb200-x72", "notready")
    status = next(s for s in rehearsal.stages if s.name == "status (cluster side)")
    assert "nvl72: 17/18 nodes Ready, 68 GPUs" in status.output


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 11, 20, tzinfo=timezone.utc),  # before the block
        datetime(2026, 12, 1, 11, 35, tzinfo=timezone.utc),  # the block has started; nodes are still joining
        datetime(2026, 12, 15, 11, 29, tzinfo=timezone.utc),  # the block ends in a minute; the group is scaled down
    ],
)
def test_outside_the_full_size_window_no_gpu_node_runs_and_a_fault_is_refused(moment: datetime) -> None:
    settings = parse_settings(stack_config("gb200-x72"))
    quiet = rehearse(ROOT, "gb200-x72", settings, [], moment)
    # verify judges a running stack (it knows no windows); the drift check skips a group outside its blocks.
    assert quiet.served[0].startswith("0 GPU nodes")
    drift = next(s for s in quiet.stages if s.name == "drift check")
    assert drift.code == 0 and "no block is active" in drift.output
    with pytest.raises(ConfigError, match="no GPU node runs at this moment"):
        rehearse(ROOT, "gb200-x72", settings, ["notready"], moment)


def test_status_reads_each_nodes_instance_id_from_its_provider_id(tmp_path: Path) -> None:
    settings, moment, plan = _stack("gb200-x72")
    cluster, _ = build(settings, plan, moment, [])
    with Emulator() as emulator:
        emulator.put([n.to_api() for n in cluster.gpu_nodes])
        sides, _ = read_cluster(connect(str(emulator.kubeconfig(tmp_path))), cluster.expected.groups)
    assert sides is not None
    assert sorted(sides["nvl72"].instance_ids) == sorted(n.instance_id for n in cluster.gpu_nodes)
    assert all(i.startswith("i-") and len(i) == 19 for i in sides["nvl72"].instance_ids)


def test_just_after_a_block_start_the_acceptance_shows_time_to_ready_and_checks_passed() -> None:
    settings, moment, plan = _stack("gb200-x72")
    # 31 minutes after the block start: the window opened a minute ago, the nodes joined at +10, the checks ran.
    rehearsal = rehearse(ROOT, "gb200-x72", settings, [], moment - timedelta(minutes=59), plan)
    [stage] = [s for s in rehearsal.stages if s.name == "acceptance (cluster side)"]
    [verdict] = stage.verdicts
    assert stage.code == 0 and verdict.passed and verdict.check == "acceptance"
    assert "all 18 nodes Ready at +10.0 min; checks passed at +16.0 min" in verdict.evidence
    text = format_rehearsal(rehearsal)
    assert "nvl72 acceptance" in next(line for line in text.splitlines() if line.startswith("Passed ("))


def test_a_missing_node_fails_the_acceptance_naming_the_ultraserver_and_the_count() -> None:
    rehearsal = run("gb200-x72", "missing-node")
    assert any("1 node(s) missing, 17 of 18 joined" in p for p in failed(rehearsal)["acceptance"])
    assert "FAILED nvl72 acceptance: UltraServer nvl72" in format_rehearsal(rehearsal)


def test_runs_held_up_by_imex_keep_the_acceptance_waiting_and_verify_shows_it_from_the_stacks_window() -> None:
    # The IMEX fault holds up every job with a worker on that node (nvbandwidth and the UltraServer's NCCL run): their
    # workers never start and no launcher exists, so the block's checks have not run; nvlink and nccl name the cause.
    rehearsal = run("gb200-x72-dra", "imex")
    verify = next(s for s in rehearsal.stages if s.name == "verify")
    assert "block start from the stack's window" in verify.output
    assert (
        "nvl72: block start 2026-12-01 11:30 UTC; all 18 nodes Ready at +10.0 min; checks not yet (waiting for "
        "nvbandwidth-nvl72, nccl-nvl72)"
    ) in verify.output


def test_inside_the_join_grace_the_acceptance_is_not_judged_yet() -> None:
    """29 minutes after the block start the nodes may still be joining (the grace is 30; the rehearsal has none yet):
    no acceptance verdict, so none can pass or fail a block that is still coming up."""
    settings, moment, plan = _stack("gb200-x72")
    early = rehearse(ROOT, "gb200-x72", settings, [], moment - timedelta(minutes=61), plan)
    assert "acceptance (cluster side)" not in [s.name for s in early.stages]
    assert early.code == 0, format_rehearsal(early)


def test_a_node_that_joined_notready_fails_the_acceptance() -> None:
    """Every reserved node joined, one of them NotReady: joined is not Ready, so the block is not accepted."""
    [problem] = failed(run("gb200-x72", "notready"))["acceptance"]
    assert problem.startswith("UltraServer nvl72") and "17/18 Ready" in problem


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2026, 11, 29, 13, 0, tzinfo=timezone.utc),  # two days before the block
        datetime(2026, 12, 15, 11, 20, tzinfo=timezone.utc),  # after the scale-down, before the end (11:30)
        datetime(2026, 12, 18, 5, 0, tzinfo=timezone.utc),  # after the block
    ],
)
def test_outside_a_window_verify_the_drift_check_and_status_agree_nothing_should_run(moment: datetime) -> None:
    """One expectation of what runs now: verify passes with its GPU checks not judged, as the drift check skips the
    group; the drain names no past cut-off as a coming start."""
    settings, _, plan = _stack("gb200-x72")
    block = settings.gpu_node_groups[0].blocks[0].window
    assert not block.start <= moment < block.scale_down_at  # the moments are outside the full-size window
    rehearsal = rehearse(ROOT, "gb200-x72", settings, [], moment, plan)
    assert rehearsal.code == 0, format_rehearsal(rehearsal)
    verify = next(s for s in rehearsal.stages if s.name == "verify")
    gpu = [v for v in verify.verdicts if v.ultraserver == "nvl72"]
    assert gpu and all(v.passed and "need not run now" in v.evidence for v in gpu)
    drift = next(s for s in rehearsal.stages if s.name == "drift check")
    assert "skipped group nvl72: no block is active" in drift.output
    drain = next(s for s in rehearsal.stages if s.name == "drain").output
    cutoff = "2026-12-15T10:10:00Z"
    assert (f"the drain starts: nvl72 at {cutoff}" in drain) == (moment < block.scale_down_at), drain


def test_imex_leaves_the_workers_in_container_creating_and_verify_points_at_the_compute_domain() -> None:
    settings, moment, plan = _stack("gb200-x72")
    cluster, (injected,) = build(settings, plan, moment, ["imex"])
    mpijobs = [o for o in cluster.objects if o["kind"] == "MPIJob"]
    (hit,) = [r for r in jobs.runs(cluster, mpijobs, {}, injected.runs) if injected.subject in r.nodes]
    # No launcher ever exists; every worker is bound and waits in ContainerCreating.
    assert hit.launcher is None and len(hit.stuck_workers) == len(hit.nodes)
    for worker in hit.stuck_workers:
        assert worker["status"]["phase"] == "Pending"
        assert worker["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating"
    rehearsal = run("gb200-x72", "imex")
    # Named by the verdict and nothing else failing: the rehearsal passes (run.Rehearsal.code).
    assert rehearsal.code == 0 and rehearsal.detected(injected), format_rehearsal(rehearsal)
    (nvlink,) = [v for v in rehearsal.stages[0].verdicts if v.check == NVLINK]
    (problem,) = nvlink.problems
    assert problem.key == "ComputeDomain imex-check/nvbandwidth-nvl72-compute-domain"
    assert "ContainerCreating" in str(problem.value) and injected.subject in str(problem.value)
    assert "IMEX daemon" in problem.fix and "pulumi up" not in str(problem)


def test_imex_in_dra_mode_points_the_nccl_verdict_at_its_compute_domain_too() -> None:
    rehearsal = run("gb200-x72-dra", "imex")
    failed_verdicts = [v for v in rehearsal.stages[0].verdicts if not v.passed]
    keys = {p.key for v in failed_verdicts for p in v.problems}
    assert keys == {
        "ComputeDomain imex-check/nvbandwidth-nvl72-compute-domain",
        "ComputeDomain nccl-check/nccl-nvl72-compute-domain",
    }, format_rehearsal(rehearsal)
    assert "pulumi up" not in format_rehearsal(rehearsal)
