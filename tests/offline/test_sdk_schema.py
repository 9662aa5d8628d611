"""The provider SDKs' own view of a resource type: its class, string outputs and required arguments."""

from __future__ import annotations

import pulumi_aws as aws
import pulumi_kubernetes as k8s
from ultraserver.offline import sdk_schema


def test_a_type_token_finds_its_sdk_class() -> None:
    assert sdk_schema.resource_class("aws:eks/nodeGroup:NodeGroup") is aws.eks.NodeGroup
    assert sdk_schema.resource_class("kubernetes:helm.sh/v3:Release") is k8s.helm.v3.Release
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


def test_text_outputs_are_the_string_getters() -> None:
    outputs = sdk_schema.text_outputs("aws:cloudwatch/eventRule:EventRule")
    assert {"arn", "name", "namePrefix"} <= set(outputs)
    # Not strings: tags (a map) and state fields of other types are left to the specific placeholders.
    assert "tags" not in outputs and "tagsAll" not in outputs
