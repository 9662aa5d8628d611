"""Rehearsals on a real kube-apiserver and etcd (``--api real``): what the emulator accepts and a real API server
refuses fails the rehearsal.

Each fault below is injected into a copy of the toolkit (monkeypatch), the plan made again with it, and the
rehearsal run on its own control plane. Skipped without the binaries (``python -m ultraserver.rehearse.binaries``
builds them), failed instead under .ci/run (ULTRASERVER_REQUIRE_CONTROL_PLANE=1).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.control_plane import require_control_plane, require_programs
from helpers.render import helm_and_charts
from helpers.stacks import ROOT, stack_config
from ultraserver.builders import reclaim_drain
from ultraserver.cli import main
from ultraserver.config.settings import parse_settings
from ultraserver.incluster import drain as drain_script
from ultraserver.rehearse.binaries import scheduling_programs
from ultraserver.rehearse.charts import chart_objects
from ultraserver.rehearse.pinned_files import manifest_crds
from ultraserver.rehearse.report import format_rehearsal
from ultraserver.rehearse.run import RESPONSES, Rehearsal, default_moment, rehearse, stack_plan
from ultraserver.verify.expect import expectation
from ultraserver.verify.verdict import EFA, NODE_FACTS, NVLINK, RESOURCE_SLICES

from tests.rehearse.test_rehearsals import failed

STACK = "gb200-x72"


@pytest.fixture(autouse=True)
def _binaries() -> None:
    require_control_plane()


def real(stack: str, *faults: str, extra: list[dict[str, Any]] | None = None) -> Rehearsal:
    """A rehearsal on a real API server with what the charts install (the CRDs among it), planned now (so a
    monkeypatched toolkit is planned with its fault)."""
    settings = parse_settings(stack_config(stack))
    moment = default_moment(expectation(settings))
    plan = stack_plan(ROOT, stack, settings, moment)
    charted = chart_objects(plan, settings.cluster.kubernetes_version, helm_and_charts()[1])
    objects = manifest_crds(plan.manifests, charted) + charted
    objects += extra or []
    # Real scheduling and admission have their own tests (test_real_api_scheduling.py).
    return rehearse(ROOT, stack, settings, list(faults), moment, plan, api="real", extra=objects, admission=False)


def stage(rehearsal: Rehearsal, name: str) -> Any:
    return next(s for s in rehearsal.stages if s.name == name)


def test_a_healthy_stack_passes_on_a_real_api_server_and_json_records_its_version(tmp_path: Path) -> None:
    require_programs(scheduling_programs())  # the command runs real scheduling and admission too
    helm_and_charts()
    out = tmp_path / "rehearsal.json"
    charts = str(helm_and_charts()[1])
    code = main(["rehearse", "--stack", STACK, "--api", "real", "--charts", charts, "--json", str(out)])
    document = json.loads(out.read_text())
    assert code == 0, document
    assert document["api"]["kind"] == "real"
    assert document["api"]["version"]["gitVersion"] == "v1.35.4"
    assert document["api"]["refused"] == []
    assert [s["name"] for s in document["stages"]][:2] == ["verify", "drift check"]


def test_a_drain_cluster_role_missing_one_verb_is_forbidden(monkeypatch: pytest.MonkeyPatch) -> None:
    rules = reclaim_drain._rules

    def without_patch_on_queues(kueue: bool) -> list[dict[str, Any]]:
        found = rules(kueue)
        for rule in found:
            if rule["resources"] == ["clusterqueues"]:
                rule["verbs"] = [v for v in rule["verbs"] if v != "patch"]
        return found

    monkeypatch.setattr(reclaim_drain, "_rules", without_patch_on_queues)
    rehearsal = real(STACK, "reclaim")
    drain = stage(rehearsal, "drain")
    assert rehearsal.code == 1
    assert drain.code == 1 and "drain call hold-queue failed (403)" in drain.output, drain.output
    assert "give the drain's account" in drain.output and "RBAC verb" in drain.output


def test_a_drain_with_an_invalid_taint_effect_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    actions = drain_script._node_actions

    def misspelled(nodes: list[dict[str, Any]], ending: dict[str, Any]) -> list[dict[str, Any]]:
        found = actions(nodes, ending)
        for action in found:
            for taint in action["taints"]:
                if taint["key"] == drain_script.RECLAIM_TAINT:
                    taint["effect"] = "NoSchedul"
        return found

    monkeypatch.setattr(drain_script, "_node_actions", misspelled)
    rehearsal = real(STACK, "reclaim")
    drain = stage(rehearsal, "drain")
    assert drain.code == 1 and "drain call cordon failed (422)" in drain.output, drain.output
    assert "the reclaim drain's call 'cordon' failed (422) for ip-" in drain.output


def budget_at_zero(pods: int) -> dict[str, Any]:
    """A PodDisruptionBudget over the reclaim fault's job that allows no disruption, with the status the disruption
    controller gives it."""
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "train", "namespace": "default"},
        "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"job-name": "train"}}},
        "status": {
            "observedGeneration": 1,
            "disruptionsAllowed": 0,
            "currentHealthy": pods,
            "desiredHealthy": pods,
            "expectedPods": pods,
        },
    }


def test_an_eviction_under_a_budget_at_zero_is_refused_and_retried(monkeypatch: pytest.MonkeyPatch) -> None:
    # A drain that does not read the budgets evicts anyway: the real API server answers 429, the pods stay (the
    # emulator deleted them at once), and the drain leaves the eviction for its next run, until the deadline.
    monkeypatch.setattr(drain_script, "evictable", lambda pod, budgets: True)
    rehearsal = real(STACK, "reclaim", extra=[budget_at_zero(4)])
    drain = stage(rehearsal, "drain")
    assert "evict pod" not in drain.output and "was evicted" not in drain.output, drain.output
    assert "cordoned node" in drain.output
    # The refused evictions are left for the next run (not counted as done); the reclaim fault itself is named by
    # the notice every pod gets (evict-at), which the budget does not block.
    assert "Fault reclaim" in format_rehearsal(rehearsal)


def test_a_pruned_toleration_field_in_the_gpu_operator_values_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from ultraserver.resources import helm_release

    values = helm_release.gpu_operator_values

    def misspelled(*args: Any) -> dict[str, Any]:
        found = values(*args)
        found["daemonsets"]["tolerations"] = [
            {("operater" if k == "operator" else k): v for k, v in t.items()}
            for t in found["daemonsets"]["tolerations"]
        ]
        return found

    monkeypatch.setattr(helm_release, "gpu_operator_values", misspelled)
    rehearsal = real(STACK)
    refused = stage(rehearsal, "apply (real API)")
    assert rehearsal.code == 1
    assert "ClusterPolicy" in refused.output and "operater" in refused.output, refused.output


CATALOGUE_ON_REAL = [
    ("gb200-x72", "notready", NODE_FACTS),
    ("gb200-x72", "efa", NODE_FACTS),
    ("gb200-x72-dra", "efa", RESOURCE_SLICES),
    ("gb200-x72", "clique", NODE_FACTS),
    ("gb200-x72", "imex", NVLINK),
    ("gb200-multi", "socket", EFA),
    ("gb200-x72", "missing-node", NODE_FACTS),
    ("gb200-x72", "reclaim", "drain"),
]
"""Each fault of the catalogue on a stack that can show it, with the check that names it (as on the emulator)."""


@pytest.mark.parametrize(("stack", "fault", "check"), CATALOGUE_ON_REAL)
def test_each_fault_gives_its_documented_verdict_on_a_real_api_server(stack: str, fault: str, check: str) -> None:
    rehearsal = real(stack, fault)
    (injected,) = rehearsal.injected
    text = format_rehearsal(rehearsal)
    # Exit 0: the toolkit responded as it must (run.Rehearsal.code), as on the emulator.
    assert rehearsal.code == 0 and rehearsal.detected(injected) and not rehearsal.unexplained, text
    assert not rehearsal.api or not rehearsal.api.refusals(), text
    if fault in RESPONSES:
        assert stage(rehearsal, f"response to {fault}").code == 0, text
        assert f"Fault {fault} on {injected.subject}: handled (its response passed)" in text
        return
    assert check in failed(rehearsal), text
    assert f"Fault {fault} on {injected.subject}: named by the checks above" in text


def test_drain_forbidden_on_a_real_api_server_is_refused_by_rbac_alerted_and_the_other_steps_done() -> None:
    # The fault takes patch on clusterqueues out of the drain's ClusterRole: kube-apiserver's RBAC answers 403.
    rehearsal = real(STACK, "drain-forbidden")
    assert rehearsal.code == 0, format_rehearsal(rehearsal)
    assert "drain call hold-queue failed (403)" in stage(rehearsal, "drain").output
    assert stage(rehearsal, "response to drain-forbidden").code == 0
