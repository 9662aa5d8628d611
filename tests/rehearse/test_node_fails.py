"""`rehearse --break node-fails` on a stack with spares: the job's pod lands on a spare of its own UltraServer."""

from __future__ import annotations

from pathlib import Path

from helpers.stacks import project_config, spares_project
from ultraserver.config.settings import parse_settings
from ultraserver.rehearse.report import format_rehearsal
from ultraserver.rehearse.run import default_moment, rehearse
from ultraserver.verify.expect import expectation


def test_a_failed_node_of_a_running_job_is_replaced_by_a_spare_and_the_rehearsal_exits_0(tmp_path: Path) -> None:
    project = spares_project(tmp_path)
    settings = parse_settings(project_config(project, "x72-spares"))
    moment = default_moment(expectation(settings))
    rehearsal = rehearse(project, "x72-spares", settings, ["node-fails"], moment)
    stage = next(s for s in rehearsal.stages if s.name == "node failure")
    assert rehearsal.code == 0 and stage.code == 0, format_rehearsal(rehearsal)
    assert "job train runs on 16 active node(s) of nvl72 (2 spare(s) held back)" in stage.output
    assert "Kueue replaced " in stage.output and "pods placed outside nvl72: 0" in stage.output
    assert "alert to the stack's topic: x72-spares: spare " in stage.output
    assert "Kueue evicted" not in stage.output
