"""`rehearse --api real --break node-fails` (issue 46 §2) on the real programs: the pinned Kueue (TAS) admits a
whole-UltraServer Job onto kwok's nodes, kwok turns one of them NotReady, the toolkit's spares controller (as the
drain's ServiceAccount) frees a spare and taints the failed node, kube-controller-manager's taint-eviction controller
deletes the pod there, and the real Kueue moves it onto the spare of the same UltraServer. Without spares the loss and
the alert are reported.

Skipped without the binaries (``python -m ultraserver.rehearse.binaries`` builds them), failed instead under .ci/run
(ULTRASERVER_REQUIRE_CONTROL_PLANE=1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from helpers.control_plane import FAILING_SETTLE, require_control_plane, require_programs
from helpers.render import helm_and_charts
from helpers.stacks import SPARES_STACK, project_config, spares_project
from ultraserver.config.settings import parse_settings
from ultraserver.incluster import spares
from ultraserver.rehearse import kueue_reads
from ultraserver.rehearse.binaries import scheduling_programs
from ultraserver.rehearse.charts import chart_objects
from ultraserver.rehearse.pinned_files import manifest_crds
from ultraserver.rehearse.real_replacement import STAGE
from ultraserver.rehearse.report import format_rehearsal
from ultraserver.rehearse.run import Rehearsal, default_moment, rehearse, stack_plan
from ultraserver.verify.expect import expectation


@pytest.fixture(autouse=True)
def _binaries() -> None:
    require_control_plane()
    require_programs(scheduling_programs())


def real_node_fails(project: Path, stack: str) -> Rehearsal:
    """``rehearse --api real --charts ... --break node-fails`` of a stack of the project copy."""
    settings = parse_settings(project_config(project, stack))
    moment = default_moment(expectation(settings))
    plan = stack_plan(project, stack, settings, moment)
    charted = chart_objects(plan, settings.cluster.kubernetes_version, helm_and_charts()[1])
    extra = manifest_crds(plan.manifests, charted) + charted
    return rehearse(project, stack, settings, ["node-fails"], moment, plan, api="real", extra=extra)


def real_stage(rehearsal: Rehearsal) -> Any:
    return next(s for s in rehearsal.stages if s.name == STAGE)


def test_the_real_kueue_moves_the_failed_nodes_pod_onto_a_spare_of_the_same_ultraserver(tmp_path: Path) -> None:
    rehearsal = real_node_fails(spares_project(tmp_path), SPARES_STACK)
    stage = real_stage(rehearsal)
    assert rehearsal.code == 0 and stage.code == 0, format_rehearsal(rehearsal)
    assert "Kueue admitted Job rehearse-node-fails (16 whole-node pods)" in stage.output
    assert "real Kueue replaced " in stage.output and " with spare " in stage.output
    assert "pods placed outside nvl72: 0" in stage.output
    assert "the Workload kept its admission (no eviction)" in stage.output
    # The pod was deleted by the real taint-eviction controller, not by the rehearsal.
    assert "taint-eviction-controller" in stage.output and "Deleting pod" in stage.output


def test_a_controller_that_never_frees_a_spare_fails_the_real_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    replace = spares._replace
    monkeypatch.setattr(spares, "_replace", lambda failed, why, standby, moved: replace(failed, why, [], moved))
    monkeypatch.setattr(kueue_reads, "SETTLE_WITHIN", FAILING_SETTLE)
    rehearsal = real_node_fails(spares_project(tmp_path), SPARES_STACK)
    stage = real_stage(rehearsal)
    assert stage.code == 1 and rehearsal.code == 1, stage.output
    assert "spare freed: none" in stage.output
    assert "FAILED Kueue's replacement of node " in stage.output
    # Failed once the controller has run and no node is free for Kueue, not after the settle time (the backstop).
    assert "assignment: never: no node is free for it" in stage.output and "not within" not in stage.output


def test_without_spares_the_real_stage_reports_the_loss_and_the_alert(tmp_path: Path) -> None:
    rehearsal = real_node_fails(spares_project(tmp_path), "gb200-x72")
    stage = real_stage(rehearsal)
    assert rehearsal.code == 0 and stage.code == 0, format_rehearsal(rehearsal)
    assert "GPU-hours lost" in stage.output
    assert "alert to the stack's topic: gb200-x72: UltraServer nvl72 has no spare left" in stage.output
