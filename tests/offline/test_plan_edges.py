"""The offline plan keeps every input and every edge: inputs read from outputs AWS generates, the
required arguments of every provider resource, and the dependency edge of every input declared as an Output."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import replace

import pulumi_aws as aws
import pytest
from helpers.plan_inputs import lost_edges
from helpers.plan_lookup import one
from helpers.stacks import ROOT, STACKS, stack_config
from ultraserver.offline import Plan, record, run_plan, sdk_schema
from ultraserver.offline.completeness import missing_arguments

RULE = "aws:cloudwatch/eventRule:EventRule"
TARGET = "aws:cloudwatch/eventTarget:EventTarget"
# Shipped stacks whose Kubernetes objects live in the kubernetes-layer/ project.
SEPARATE_LAYER_STACKS = [
    s for s in STACKS if (stack_config(s).get("ultraserver-eks:kubernetes") or {}).get("layer") == "separate-stack"
]


@pytest.mark.parametrize("stack", STACKS)
def test_every_event_target_names_its_rule_and_waits_for_it(shipped_plan: Callable[[str], Plan], stack: str) -> None:
    plan = shipped_plan(stack)
    rules = {r.urn: r for r in plan.of_type(RULE)}
    targets = plan.of_type(TARGET)
    assert targets
    for target in targets:
        assert target.inputs.get("rule"), target.name
        (rule,) = [rules[d] for d in target.dependencies if d in rules]
        # Named by name_prefix: the placeholder says what AWS would generate from the prefix.
        expected = rule.inputs.get("name") or f"{rule.inputs['namePrefix']}offline-placeholder"
        assert target.inputs["rule"] == expected


@pytest.mark.parametrize("stack", STACKS)
def test_every_output_valued_input_arrives_with_its_edge(shipped_plan: Callable[[str], Plan], stack: str) -> None:
    """Each input declared as another resource's Output resolved (not None), is a property dependency and a
    dependency of its resource (the edges the order and deadlock checks walk), and an arrow of the report graph."""
    plan = shipped_plan(stack)
    assert sum(len(r.declared_sources) for r in plan.resources) > 50
    assert lost_edges(plan) == []
    assert missing_arguments(plan) == []


@pytest.mark.parametrize("stack", SEPARATE_LAYER_STACKS)
def test_the_separate_kubernetes_layer_keeps_its_inputs_and_edges(stack: str) -> None:
    plan = run_plan(ROOT / "kubernetes-layer", stack)
    assert any(r.declared_sources for r in plan.resources)
    assert lost_edges(plan) == [] and missing_arguments(plan) == []


def test_an_input_that_resolves_to_none_is_seen() -> None:
    """The engine notes a declared Output that Pulumi drops because it resolved to None, with where it came from."""

    def program() -> None:
        vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
        aws.ec2.Subnet("subnet", vpc_id=vpc.id.apply(lambda _: None), cidr_block="10.0.0.0/24")

    plan = record(program)
    subnet, vpc = one(plan, "aws:ec2/subnet:Subnet"), one(plan, "aws:ec2/vpc:Vpc")
    assert "vpcId" not in subnet.inputs and subnet.unresolved_inputs == ["vpcId"]
    assert subnet.declared_sources == {"vpcId": [vpc.urn]}
    assert vpc.urn not in subnet.dependencies
    assert len(lost_edges(plan)) == 2  # the None, and the edge it took with it


def test_a_lost_edge_in_a_shipped_plan_is_caught(shipped_plan: Callable[[str], Plan]) -> None:
    plan = copy.deepcopy(shipped_plan(STACKS[0]))
    target = plan.of_type(TARGET)[0]
    (rule,) = target.declared_sources["rule"]
    # As Pulumi records an input whose Output resolved to None: the value and its dependency are gone.
    del target.inputs["rule"], target.property_dependencies["rule"]
    target.dependencies.remove(rule)
    target.unresolved_inputs.append("rule")
    problems = lost_edges(plan)
    assert any(p.startswith(f"{target.urn}: got input rule of {TARGET} resolved to None") for p in problems)
    assert any(f"input 'rule' came from {rule}" in p for p in problems)


def test_an_edge_missing_from_the_graph_is_caught(shipped_plan: Callable[[str], Plan]) -> None:
    """A node group whose recorded dependencies lost the cluster: its input still names the cluster, the order checks
    and the report graph would not."""
    plan = copy.deepcopy(shipped_plan("gb200-x72"))
    group = one(plan, "aws:eks/nodeGroup:NodeGroup", "system")
    (cluster,) = group.property_dependencies["clusterName"]
    group.dependencies.remove(cluster)
    problems = lost_edges(plan)
    assert any(
        f"{group.urn} (aws:eks/nodeGroup:NodeGroup) input 'clusterName' came from {cluster}" in p for p in problems
    )
    assert f"gb200-x72: the graph has no edge {cluster} -> {group.urn}" in problems


def test_generated_outputs_reach_their_readers_with_their_edges() -> None:
    """Outputs nobody special-cased (the VPC's default security group and route table, a role's unique id, a
    security group's generated name, a node group's disk size) reach the resources that read them, with the edge:
    the placeholders come from the SDK's own list of the type's outputs."""

    def program() -> None:
        vpc = aws.ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
        role = aws.iam.Role("role", assume_role_policy="{}")
        group = aws.ec2.SecurityGroup("sg", vpc_id=vpc.id)
        aws.ec2.Route("route", route_table_id=vpc.default_route_table_id, destination_cidr_block="0.0.0.0/0")
        aws.ec2.Tag("tag", resource_id=vpc.default_security_group_id, key=role.unique_id, value=group.name)

    plan = record(program)
    tag, route = one(plan, "aws:ec2/tag:Tag"), one(plan, "aws:ec2/route:Route")
    urns = {r.type: r.urn for r in plan.resources}
    assert tag.inputs == {
        "resourceId": "vpc-defaultSecurityGroupId-offline-placeholder",
        "key": "role-uniqueId-offline-placeholder",
        "value": "sg-name-offline-placeholder",
    }
    assert tag.property_dependencies == {
        "resourceId": [urns["aws:ec2/vpc:Vpc"]],
        "key": [urns["aws:iam/role:Role"]],
        "value": [urns["aws:ec2/securityGroup:SecurityGroup"]],
    }
    assert route.inputs["routeTableId"] == "vpc-defaultRouteTableId-offline-placeholder"
    assert lost_edges(plan) == []


def test_outputs_that_are_objects_reach_their_readers() -> None:
    """Not only text: the EKS cluster's certificate authority (an object the SDK says is always there) gives its data
    to what reads it, as a kubeconfig would."""

    def program() -> None:
        cluster = aws.eks.Cluster("eks", role_arn="arn:aws:iam::0:role/r", vpc_config={"subnet_ids": ["s"]})
        aws.ec2.Tag("ca", resource_id="vpc-1", key="ca", value=cluster.certificate_authority.data)

    plan = record(program)
    tag, cluster = one(plan, "aws:ec2/tag:Tag"), one(plan, "aws:eks/cluster:Cluster")
    assert tag.inputs["value"] == "eks-certificateAuthority-data-offline-placeholder"
    assert tag.property_dependencies["value"] == [cluster.urn]
    assert lost_edges(plan) == []


@pytest.mark.parametrize("stack", STACKS)
def test_every_provider_resource_has_its_required_arguments(shipped_plan: Callable[[str], Plan], stack: str) -> None:
    plan = shipped_plan(stack)
    checked = {r.type for r in plan.resources if r.custom and sdk_schema.required_arguments(r.type)}
    assert len(checked) > 10
    assert missing_arguments(plan) == []


def test_a_missing_required_argument_is_found(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("gb200-x72")
    group = one(plan, "aws:eks/nodeGroup:NodeGroup", "system")
    inputs = {k: v for k, v in group.inputs.items() if k != "nodeRoleArn"}
    broken = Plan(plan.project, plan.stack, [replace(group, inputs=inputs)], [])
    (problem,) = missing_arguments(broken)
    # The stack is in the URN (urn:pulumi:gb200-x72::...), then the type and the argument.
    assert problem.key == group.urn and group.urn.startswith("urn:pulumi:gb200-x72::")
    assert str(problem).startswith(
        f"{group.urn}: got no 'nodeRoleArn'; allowed: every required argument of aws:eks/nodeGroup:NodeGroup"
    )
