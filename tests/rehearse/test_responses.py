"""`rehearse --break F` for the events the toolkit must handle (reclaim, extend-late, drain-forbidden, no-nodes): it
exits 0 exactly when the in-cluster drain responded as it must, judged from what it left in the API and in AWS, and
non-zero when a copy of the toolkit's behaviour is broken (a drain that does nothing, one that stops at its first
refused call, one that reports nothing) so the injected fault goes unnoticed."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from helpers.cli import run_main
from helpers.stacks import ROOT, stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.incluster import drain, drain_main, drain_watch, drift
from ultraserver.rehearse import run as run_module
from ultraserver.rehearse.report import exit_reason, format_rehearsal
from ultraserver.rehearse.run import Rehearsal, default_moment, rehearse, stack_plan
from ultraserver.verify.expect import expectation

STACK = "gb200-x72"
HANDLED = ("reclaim", "extend-late", "drain-forbidden", "no-nodes")


def run(fault: str, stack: str = STACK) -> Rehearsal:
    settings = parse_settings(stack_config(stack))
    moment = default_moment(expectation(settings))
    return rehearse(ROOT, stack, settings, [fault], moment, stack_plan(ROOT, stack, settings, moment))


def response(rehearsal: Rehearsal, fault: str) -> Any:
    return next(s for s in rehearsal.stages if s.name == f"response to {fault}")


@pytest.mark.parametrize("fault", HANDLED)
def test_a_handled_event_exits_0_and_its_response_passes(fault: str) -> None:
    rehearsal = run(fault)
    text = format_rehearsal(rehearsal)
    assert rehearsal.code == 0, text
    assert response(rehearsal, fault).code == 0, text
    assert f"Fault {fault} on " in text and "handled (its response passed)" in text
    assert not rehearsal.unexplained


def test_the_reclaim_response_is_judged_from_the_api_the_nodes_cut_off_and_the_job_told() -> None:
    rehearsal = run("reclaim")
    drained = next(s for s in rehearsal.stages if s.name == "drain").output
    assert drained.count("cordoned node ") == 18 and "hold queue gb200" in drained
    # EC2's reclaim is 60 minutes before the end the notice carries (the facts, not the drain's copy).
    assert "nvl72: EC2's reclaim at 2026-12-01T13:15:00Z" in response(rehearsal, "reclaim").output


def do_nothing(*args: Any, **kwargs: Any) -> list[dict[str, Any]]:
    return []


def test_a_drain_that_does_nothing_leaves_the_reclaim_unhandled_and_the_rehearsal_exits_1(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(drain_main, "run_once", do_nothing)
    rehearsal = run("reclaim")
    stage = response(rehearsal, "reclaim")
    assert rehearsal.code == 1 and stage.code == 1, format_rehearsal(rehearsal)
    assert "was not cordoned and tainted before EC2's reclaim" in stage.output
    assert "was not told EC2's reclaim" in stage.output and "ClusterQueue gb200 was not held" in stage.output
    assert exit_reason(rehearsal) == "fault reclaim: NOT HANDLED (its response failed)"


def stop_at_the_first_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The drain as it was: its first refused call ends the run (nothing after it is applied)."""
    apply = drain.apply
    refused: list[BaseException] = []

    def first_error_ends_the_run(api: Any, action: dict[str, Any]) -> bool:
        if refused:
            raise RuntimeError("the run ended at its first error") from refused[0]
        try:
            return apply(api, action)
        except Exception as err:
            refused.append(err)
            raise

    monkeypatch.setattr(drain, "apply", first_error_ends_the_run)


def page_while_regrowing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The drain as it was: a block's join grace counted from its start only, not again from its group's regrowth."""
    findings = drain_watch.empty_block_findings
    monkeypatch.setattr(drain_watch, "empty_block_findings", lambda *a: findings(*a[:4], {}))


BROKEN: dict[str, Callable[[pytest.MonkeyPatch], None]] = {
    "extend-late: no regrowth": lambda mp: mp.setattr(drain_watch, "regrow", lambda *a: []),
    "extend-late: a page while the group regrows": page_while_regrowing,
    "extend-late: no release": lambda mp: mp.setattr(drain, "_release_actions", lambda *a: []),
    "drain-forbidden: nothing reported": lambda mp: mp.setattr(drain_watch, "call_findings", lambda *a: []),
    "drain-forbidden: the run stops at the 403": stop_at_the_first_refusal,
    "no-nodes: no alert": lambda mp: mp.setattr(drain_watch, "empty_block_findings", lambda *a: []),
}


@pytest.mark.parametrize("broken", BROKEN)
def test_a_broken_copy_of_the_toolkit_leaves_the_fault_unnoticed_and_the_rehearsal_exits_1(
    broken: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fault = broken.split(":")[0]
    BROKEN[broken](monkeypatch)
    rehearsal = run(fault)
    stage = response(rehearsal, fault)
    assert rehearsal.code == 1 and stage.code == 1, format_rehearsal(rehearsal)
    assert "FAILED " in stage.output
    assert f"Fault {fault} on " in format_rehearsal(rehearsal) and "NOT HANDLED" in format_rehearsal(rehearsal)


def test_a_failure_that_names_no_injected_fault_fails_the_rehearsal(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fault handled, but another stage failing on something else: that is not the toolkit responding."""

    def drift_elsewhere(groups: Any, at: Any, list_nodes: Any) -> int:
        print("DRIFT group elsewhere: 0 nodes, expected 9")
        return 1

    monkeypatch.setattr(drift, "check", drift_elsewhere)
    rehearsal = run("no-nodes")
    assert response(rehearsal, "no-nodes").code == 0
    assert rehearsal.code == 1 and [s.name for s in rehearsal.unexplained] == ["drift check"]
    assert exit_reason(rehearsal) == "drift check failed, naming no injected fault"


def test_the_extension_walk_scales_the_group_back_up_and_moves_its_scale_down() -> None:
    rehearsal = run("extend-late")
    walk = response(rehearsal, "extend-late").output
    # The plan's scale-down ran (end - 65), then EC2 confirmed the extension 35 minutes before the old end.
    assert "2026-12-15T10:25:00Z Auto Scaling ran capacity-block-end" in walk
    assert "2026-12-15T10:55:00Z EC2 confirmed the extension: the block now ends 2026-12-16T11:30:00Z" in walk
    assert "2026-12-15T10:55:00Z the drain did: put-scale-down, scale-up" in walk
    assert "dates differ from EC2" in walk


def test_drain_forbidden_on_a_stack_with_a_fleet_block_without_reservations_refuses_the_workload_patch() -> None:
    rehearsal = run("drain-forbidden", "gb200-multi")
    assert rehearsal.code == 0, format_rehearsal(rehearsal)
    assert "patch of Workload default/job-train refused (403)" in response(rehearsal, "drain-forbidden").output


def test_the_cli_exits_0_for_a_handled_event_and_1_when_the_drain_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # The CI loop's command (.ci/run); every shipped stack and event is walked by test_rehearsals.py.
    handled = run_main("rehearse", "--stack", STACK, "--project-dir", str(ROOT), "--break", "no-nodes")
    assert handled.code == 0, handled.stdout + handled.stderr
    assert "Fault no-nodes on nvl72: handled (its response passed)" in handled.stdout
    monkeypatch.setattr(drain_watch, "empty_block_findings", lambda *a: [])
    missed = run_main("rehearse", "--stack", STACK, "--project-dir", str(ROOT), "--break", "no-nodes")
    assert missed.code == 1
    assert "exit 1: fault no-nodes: NOT HANDLED (its response failed)" in missed.stderr


def test_ci_rehearses_every_handled_event_on_every_shipped_stack() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    loop = script[script.index("for fault in ") :].splitlines()[0]
    assert set(HANDLED) <= set(loop.removeprefix("for fault in ").removesuffix("; do").split())
    assert script.index("for fault in ") > script.index('ultraserver rehearse --stack "$stack" >')


def test_a_fault_the_checks_miss_exits_1(monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of verify and the drift check that pass whatever they read: the NotReady node goes unnamed."""
    monkeypatch.setattr(run_module, "exit_code", lambda verdicts: 0)
    monkeypatch.setattr(drift, "check", lambda groups, at, list_nodes: 0)
    rehearsal = run("notready")
    (injected,) = rehearsal.injected
    assert not rehearsal.detected(injected) and rehearsal.code == 1
    assert f"Fault notready on {injected.subject}: NOT DETECTED by the day-2 checks" in format_rehearsal(rehearsal)
