"""config.views.installed_releases (what the settings rules check, e.g. each chart's kubeVersion) names exactly the
Helm releases the program declares (or the kubernetes-layer/ project, for a separate-stack layer), on every shipped
stack and with the optional Prometheus stack on."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.stacks import ROOT, STACKS, stack_config
from ultraserver.config.kubernetes_model import RELEASE_KEYS
from ultraserver.config.settings import parse_settings
from ultraserver.config.views import installed_releases
from ultraserver.offline import run_plan

CASES: list[tuple[str, dict[str, Any]]] = [
    *((stack, {}) for stack in STACKS),
    ("gb200-x72", {"ultraserver-eks:kubernetes": {"prometheusStack": {"enabled": True}}}),
]


@pytest.mark.parametrize(("stack", "overrides"), CASES, ids=[f"{s}{'+prometheus' if o else ''}" for s, o in CASES])
def test_installed_releases_are_the_planned_helm_releases(stack: str, overrides: dict[str, Any]) -> None:
    settings = parse_settings(stack_config(stack) | overrides, stack=stack)
    # kubernetes.layer separate-stack: the kubernetes-layer/ project declares the releases from the same stack file.
    project = ROOT / "kubernetes-layer" if settings.kubernetes.layer == "separate-stack" else ROOT
    plan = run_plan(project, stack, overrides)
    planned = {
        r.inputs["chart"].rsplit("/", 1)[-1] for r in plan.resources if r.type == "kubernetes:helm.sh/v3:Release"
    }
    assert {RELEASE_KEYS[field] for field in installed_releases(settings)} == planned
