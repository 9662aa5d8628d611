"""The provider SDKs' own view of a resource type: its class, Args class, required arguments and outputs."""

from __future__ import annotations

import typing

import pulumi_aws as aws
import pulumi_kubernetes as k8s
import pytest
from pulumi import _types as pulumi_types
from ultraserver.offline import sdk_schema


def test_a_type_token_finds_its_sdk_class() -> None:
    assert sdk_schema.resource_class("aws:eks/nodeGroup:NodeGroup") is aws.eks.NodeGroup
    assert sdk_schema.resource_class("kubernetes:helm.sh/v3:Release") is k8s.helm.v3.Release
    # Providers register as packages, not modules.
    assert sdk_schema.resource_class("pulumi:providers:kubernetes") is k8s.Provider
    assert sdk_schema.args_class("pulumi:providers:kubernetes") is k8s.ProviderArgs
    assert sdk_schema.resource_class("pulumi:pulumi:Stack") is None
    # Components and CRD objects have no SDK class.
    assert sdk_schema.resource_class("ultraserver:index:GpuNodeGroup") is None
    assert sdk_schema.resource_class("kubernetes:kubeflow.org/v2beta1:MPIJob") is None


def test_required_arguments_are_the_args_constructors_parameters_without_default_in_pulumi_names() -> None:
    assert sdk_schema.required_arguments("aws:eks/nodeGroup:NodeGroup") == (
        "clusterName",
        "nodeRoleArn",
        "scalingConfig",
        "subnetIds",
    )
    assert sdk_schema.required_arguments("kubernetes:helm.sh/v3:Release") == ("chart",)
    assert sdk_schema.required_arguments("ultraserver:index:GpuNodeGroup") == ()


def test_kubernetes_core_types_find_their_init_args() -> None:
    """pulumi_kubernetes names core Args classes XInitArgs (CronJobInitArgs): found through the typed overload."""
    assert sdk_schema.args_class("kubernetes:batch/v1:CronJob") is k8s.batch.v1.CronJobInitArgs
    assert sdk_schema.required_arguments("kubernetes:batch/v1:CronJob") == ("spec",)
    assert sdk_schema.required_arguments("kubernetes:rbac.authorization.k8s.io/v1:ClusterRoleBinding") == ("roleRef",)


def test_output_properties_carry_engine_names_types_and_optionality() -> None:
    cls = sdk_schema.resource_class("aws:cloudwatch/eventRule:EventRule")
    assert cls is not None
    outputs = {p.name: p for p in sdk_schema.output_properties(cls)}
    assert outputs["name"].type is str and not outputs["name"].optional
    assert outputs["eventBusName"].optional  # Output[Optional[str]], camelCase from pulumi.getter(name=...)
    assert not outputs["tagsAll"].optional and outputs["tagsAll"].type is not str


def test_a_class_type_hints_are_evaluated_once_between_the_sdk_and_the_offline_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The SDK evaluates every getter's return hint when it resolves outputs (pulumi/_types.py _raw_return_hints);
    the offline engine reads the same cached hints rather than paying for them again."""
    cls = aws.sqs.QueuePolicy  # a class no other test of this module reads
    evaluated: list[object] = []
    real = typing.get_type_hints

    def counting(obj: object, *args: object, **kwargs: object) -> dict[str, object]:
        evaluated.append(obj)
        return real(obj, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pulumi_types, "get_type_hints", counting)
    monkeypatch.setattr(typing, "get_type_hints", counting)
    sdk_schema.output_properties.cache_clear()
    pulumi_types._raw_return_hints.cache_clear()
    pulumi_types._types_from_py_properties.cache_clear()
    properties = sdk_schema.output_properties(cls)
    pulumi_types.resource_types(cls)  # what resolve_outputs asks for (pulumi/runtime/rpc.py)
    assert {p.name for p in properties} == {"policy", "queueUrl", "region"}
    assert len(evaluated) == len(properties)
