"""The Kubernetes providers' kubeconfig runs `aws eks get-token` as the stack's aws:profile / aws:assumeRoles."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.stacks import ROOT
from ultraserver.offline import engine, run_plan

ROLE = "arn:aws:iam::123456789012:role/Deployer"


def provider_kubeconfigs(monkeypatch: pytest.MonkeyPatch, project: Any, stack: str, overrides: dict) -> list[dict]:
    """Plan ``stack`` and return the kubeconfig every Kubernetes provider received (the engine's inputs; the plan
    itself shows them as [secret])."""
    received: list[dict] = []
    answer = engine.OfflineMocks.new_resource

    def spy(self: engine.OfflineMocks, args: Any) -> Any:
        if args.typ == "pulumi:providers:kubernetes":
            value = args.inputs["kubeconfig"]
            received.append(json.loads(value["value"] if isinstance(value, dict) else value))
        return answer(self, args)

    monkeypatch.setattr(engine.OfflineMocks, "new_resource", spy)
    run_plan(project, stack, overrides)
    assert received, "the plan declared no Kubernetes provider"
    return received


def token_args(kubeconfig: dict) -> list[str]:
    (user,) = kubeconfig["users"]
    exec_config = user["user"]["exec"]
    assert exec_config["command"] == "aws"
    return list(exec_config["args"])


def test_the_platform_providers_kubeconfig_carries_the_stacks_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    (kubeconfig,) = provider_kubeconfigs(monkeypatch, ROOT, "gb200-x72", {"aws:profile": "gb200-prod"})
    args = token_args(kubeconfig)
    assert args[args.index("--profile") + 1] == "gb200-prod"
    assert args[args.index("--cluster-name") + 1] == "gb200-x72"
    assert "--role" not in args


def test_the_platform_providers_kubeconfig_assumes_the_stacks_role(monkeypatch: pytest.MonkeyPatch) -> None:
    overrides = {"aws:assumeRoles": [{"roleArn": ROLE, "sessionName": "ci"}]}
    (kubeconfig,) = provider_kubeconfigs(monkeypatch, ROOT, "gb200-x72", overrides)
    args = token_args(kubeconfig)
    assert args[args.index("--role") + 1] == ROLE
    assert "--profile" not in args


def test_the_kubernetes_layer_project_runs_as_the_same_identity(monkeypatch: pytest.MonkeyPatch) -> None:
    overrides = {"aws:profile": "gb200-prod", "aws:assumeRoles": [{"roleArn": ROLE}]}
    (kubeconfig,) = provider_kubeconfigs(monkeypatch, ROOT / "kubernetes-layer", "gb200-multi", overrides)
    args = token_args(kubeconfig)
    assert args[args.index("--profile") + 1] == "gb200-prod"
    assert args[args.index("--role") + 1] == ROLE


def test_without_either_the_environment_decides(monkeypatch: pytest.MonkeyPatch) -> None:
    (kubeconfig,) = provider_kubeconfigs(monkeypatch, ROOT, "gb200-x72", {})
    args = token_args(kubeconfig)
    assert "--profile" not in args and "--role" not in args


def test_the_plan_lists_the_kubeconfig_call_with_what_it_asked_for_in_one_line() -> None:
    plan = run_plan(ROOT, "gb200-x72", {"aws:profile": "gb200-prod"})
    (line,) = [p for p in plan.placeholders if "getKubeconfig" in p]
    assert line.startswith("eks:index:Cluster/getKubeconfig(profileName=gb200-prod) -> ")
    assert line.endswith("...") and len(line) < 250
