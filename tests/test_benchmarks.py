"""The benchmark's generated stacks stay valid settings, so `benchmarks/plan_scale.py` keeps running."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest
from helpers.modules import load_file
from helpers.stacks import ROOT
from ultraserver.config.settings import parse_settings
from ultraserver.config.subnets import plan_subnets
from ultraserver.config.views import gpu_ip_needs
from ultraserver.offline import Plan, record
from ultraserver.offline.resource import STACK_TYPE

sys.path.insert(0, str(ROOT / "benchmarks"))  # plan_scale imports sdk_replay as its sibling, as when run
try:
    plan_scale = load_file(ROOT / "benchmarks" / "plan_scale.py", "plan_scale")
finally:
    sys.path.remove(str(ROOT / "benchmarks"))


@pytest.mark.parametrize("grouped", [False, True])
@pytest.mark.parametrize("ultraservers", [1, 26, 1000])
def test_generated_stacks_are_valid(ultraservers: int, grouped: bool) -> None:
    settings = parse_settings(plan_scale.stack_config(ultraservers, grouped)["config"], today=date(2026, 11, 23))
    assert sum(g.ultraservers for g in settings.gpu_node_groups) == ultraservers


def test_a_thousand_ultraservers_get_the_vpc_blocks_their_subnets_need() -> None:
    settings = parse_settings(plan_scale.stack_config(1000, True)["config"], today=date(2026, 11, 23))
    net = settings.network
    plans = plan_subnets(
        net.vpc_cidr, net.availability_zones, gpu_ip_needs(settings), 4, net.pods_per_node, net.secondary_vpc_cidrs
    )
    assert {p.vpc_block for p in plans} == {net.vpc_cidr, *net.secondary_vpc_cidrs}
    assert len([p for p in plans if p.kind == "gpu"]) > 1


def test_a_small_plan_runs_and_reports_memory(capsys: pytest.CaptureFixture[str]) -> None:
    plan_scale.main(["--sizes", "1", "--no-floor"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("bare offline engine: ") and lines[0].endswith(" ms per resource")
    assert len(lines) == 4 and all("MiB" in line and "x bare; " in line and "x replay)" in line for line in lines[2:])


def test_the_replay_declares_the_plan_graph_again(shipped_plan: Callable[[str], Plan]) -> None:
    # The baseline is only fair if it declares what the plan declares: the same resources with the same parents,
    # inputs and dependencies (providers are left to the SDK's defaults; inputs arrive resolved, so the per-input
    # dependency map is the one thing that may differ). Aliases are left out: they are no part of the graph, and the
    # SDK's Kubernetes classes the replay calls add API-version aliases the toolkit's own declarations may not.
    def graph(of: Plan) -> dict[str, tuple]:
        return {
            r.urn: ({k: v for k, v in r.to_json().items() if k != "aliases"}, r.custom, r.remote)
            for r in of.resources
            if not r.provider
        }

    declared = []
    for stack in ("gb200-x72", "gb200-x72-dra", "gb200-multi"):
        plan = shipped_plan(stack)
        replay = record(plan_scale.replay_program(plan), project=plan.project, stack=plan.stack)
        assert graph(replay) == graph(plan), stack
        declared += plan.resources
    # Every kind of declaration is exercised: SDK classes, custom resources without one, local and remote components.
    assert "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue" in {r.type for r in declared}
    assert {(r.custom, r.remote) for r in declared} >= {(True, False), (False, False), (False, True)}


def test_the_cheapest_program_declares_the_graph_with_nothing_of_the_toolkit_loaded(
    shipped_plan: Callable[[str], Plan], tmp_path: Path
) -> None:
    # Its ratio is the least any program producing the plan's graph reaches: only fair if none of our modules loads and
    # every SDK class the plan registers is imported and used there.
    python, flag, code, graph = plan_scale.sdk_alone_command(tmp_path)
    ours = "import sys\nprint('ours', *sorted(m for m in sys.modules if m.startswith('ultraserver')))\n"
    done = subprocess.run(
        [python, flag, code + ours, graph, "--modules"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    *_, modules, loaded_of_ours = done.stdout.splitlines()
    assert loaded_of_ours == "ours"
    steps = json.loads(Path(graph).read_text())["steps"]
    assert len(steps) == len(
        [r for r in shipped_plan("gb200-x72").resources if r.type != STACK_TYPE and not r.provider]
    )
    assert {s["module"] for s in steps if s["declare"] == "sdk"} <= set(modules.split())
    assert {s["declare"] for s in steps} == {"sdk", "component", "kubernetes", "plain"}


def test_the_registration_figure_replays_the_whole_plan(shipped_plan: Callable[[str], Plan]) -> None:
    # The figure the floor comparison ends with: the SDK declaring the gb200-x72 plan's graph again, after a plan.
    command = [sys.executable, "-c", plan_scale.SDK_REGISTRATION]
    done = subprocess.run(command, cwd=ROOT, env=plan_scale.SUBPROCESS_ENV, check=True, capture_output=True, text=True)
    count, seconds = done.stdout.split()[-2:]
    assert int(count) == len(shipped_plan("gb200-x72").resources)
    assert 0 < float(seconds) < 60


@pytest.mark.parametrize("size", ["0", "-3"])
def test_sizes_below_one_are_a_usage_error_not_a_traceback(size: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        plan_scale.main(["--sizes", "2", size])
    assert done.value.code == 2
    assert f"got {size!r}; allowed: a whole number of UltraServers, 1 or more" in capsys.readouterr().err


def test_the_cli_start_benchmark_counts_the_modules_a_help_imports() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))  # cli_start imports plan_scale as its sibling, as when run
    try:
        cli_start = load_file(ROOT / "benchmarks" / "cli_start.py", "cli_start")
    finally:
        sys.path.remove(str(ROOT / "benchmarks"))
    ours, total = cli_start.modules("versions")
    assert 0 < ours < total
