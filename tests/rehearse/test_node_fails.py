"""`rehearse --break node-fails` on a stack with spares: the job's pod lands on a spare of its own UltraServer."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml
from helpers.stacks import ROOT
from ultraserver.config.settings import parse_settings
from ultraserver.offline.project import load_project
from ultraserver.offline.project import stack_config as read
from ultraserver.rehearse.report import format_rehearsal
from ultraserver.rehearse.run import default_moment, rehearse
from ultraserver.verify.expect import expectation


def spares_project(tmp_path: Path) -> Path:
    """A copy of the project whose stack x72-spares is gb200-x72 with two spares per UltraServer."""
    for name in ("Pulumi.yaml", "__main__.py"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "stacks").mkdir()
    document = yaml.safe_load((ROOT / "stacks" / "Pulumi.gb200-x72.yaml").read_text())
    document["config"]["ultraserver-eks:gpuNodeGroups"][0]["sparesPerUltraServer"] = 2
    (tmp_path / "stacks" / "Pulumi.x72-spares.yaml").write_text(yaml.safe_dump(document))
    return tmp_path


def test_a_failed_node_of_a_running_job_is_replaced_by_a_spare_and_the_rehearsal_exits_0(tmp_path: Path) -> None:
    project = spares_project(tmp_path)
    config, _ = read(load_project(project), "x72-spares")
    settings = parse_settings({k: yaml.safe_load(v) if v[:1] in "{[" else v for k, v in config.items()})
    moment = default_moment(expectation(settings))
    rehearsal = rehearse(project, "x72-spares", settings, ["node-fails"], moment)
    stage = next(s for s in rehearsal.stages if s.name == "node failure")
    assert rehearsal.code == 0 and stage.code == 0, format_rehearsal(rehearsal)
    assert "job train runs on 16 active node(s) of nvl72 (2 spare(s) held back)" in stage.output
    assert "Kueue replaced " in stage.output and "pods placed outside nvl72: 0" in stage.output
    assert "alert to the stack's topic: x72-spares: spare " in stage.output
    assert "Kueue evicted" not in stage.output
