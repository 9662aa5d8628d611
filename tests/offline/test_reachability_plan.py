"""The split-stack form: the platform declares nothing in Kubernetes; the kubernetes-layer/ project plans offline."""

from __future__ import annotations

import pytest
from helpers.stacks import ROOT
from ultraserver.offline import run_plan
from ultraserver.problems import ConfigError

KUBERNETES_PROJECT = ROOT / "kubernetes-layer"
SPLIT_STACK = "gb200-multi"


def test_separate_stack_platform_declares_no_kubernetes_provider_or_resources(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan(SPLIT_STACK)
    assert [r.type for r in plan.resources if r.type.startswith(("kubernetes:", "pulumi:providers:kubernetes"))] == []
    assert plan.of_type("ultraserver:index:KubernetesLayer") == []
    assert plan.of_type("eks:index:Cluster"), "the platform still declares the cluster"


def test_same_stack_platform_keeps_its_kubernetes_layer(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x72")
    assert len(plan.of_type("pulumi:providers:kubernetes")) == 1
    assert len(plan.of_type("ultraserver:index:KubernetesLayer")) == 1


def test_kubernetes_project_plans_the_layer_through_a_stack_reference() -> None:
    plan = run_plan(KUBERNETES_PROJECT, SPLIT_STACK)
    assert plan.project == "ultraserver-eks-kubernetes"
    (reference,) = plan.of_type("pulumi:pulumi:StackReference")
    assert reference.name == f"organization/ultraserver-eks/{SPLIT_STACK}"
    charts = {r.inputs["chart"].rsplit("/", 1)[-1] for r in plan.of_type("kubernetes:helm.sh/v3:Release")}
    assert {"gpu-operator", "dra-driver-nvidia-gpu", "aws-efa-k8s-device-plugin"} <= charts
    (provider,) = plan.of_type("pulumi:providers:kubernetes")
    assert provider.inputs["kubeconfig"] == "[secret]"
    # Nothing of AWS: the second project only talks to the API server.
    assert [r.type for r in plan.resources if r.type.startswith(("aws:", "eks:"))] == []


def test_kubernetes_project_refuses_a_same_stack_stack() -> None:
    with pytest.raises(ConfigError, match="kubernetes.layer: got 'same-stack'.*separate-stack"):
        run_plan(KUBERNETES_PROJECT, "gb200-x72")


def test_split_platform_and_its_kubernetes_project_both_pass_the_policies(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    from ultraserver.policy import evaluate

    assert evaluate(shipped_plan(SPLIT_STACK).resources) == []
    assert evaluate(run_plan(KUBERNETES_PROJECT, SPLIT_STACK).resources) == []
    # A stack that does install Kubernetes software but drops the EFA plugin is still caught.
    same_stack = [
        r for r in shipped_plan("gb200-x72").resources if r.inputs.get("chart") != "aws-efa-k8s-device-plugin"
    ]
    assert {v.policy for v in evaluate(same_stack)} == {"efa-device-plugin-present"}
