"""Deployment order: no node group waits for anything that needs running nodes (CoreDNS, waiting Helm releases)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.stacks import STACKS
from ultraserver.offline import Plan, PlanResource
from ultraserver.offline.order import deadlocks, needs_nodes

PREFIX = "urn:pulumi:s::p::"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ASG = "aws:autoscaling/group:Group"


def res(name: str, type_: str, *deps: str, parent: str = "", custom: bool = True, **inputs: object) -> PlanResource:
    """A recorded resource whose URN is PREFIX + name."""
    return PlanResource(
        PREFIX + name, type_, name, PREFIX + parent if parent else "", dict(inputs), [PREFIX + d for d in deps], custom
    )


@pytest.mark.parametrize("stack", STACKS)
def test_no_node_group_waits_for_what_needs_nodes(shipped_plan: Callable[[str], Plan], stack: str) -> None:
    plan = shipped_plan(stack)
    groups = [r for r in plan.resources if r.type in (NODE_GROUP, ASG)]
    assert groups, "the stack declares node groups"
    assert [d.message() for d in deadlocks(plan.resources)] == []
    # The graph does hold what needs nodes, downstream of the node groups: the check has something to find.
    assert any(needs_nodes(r) for r in plan.resources)


def test_the_old_cluster_wiring_deadlocks() -> None:
    """pulumi-eks's CoreDNS (enabled with no default node group) and a node group that waits for the cluster."""
    resources = [
        res("cluster", "ultraserver:index:Cluster", custom=False),
        res(
            "eks",
            "eks:index:Cluster",
            parent="cluster",
            custom=False,
            skipDefaultNodeGroup=True,
            corednsAddonOptions={"enabled": True},
        ),
        res("system", NODE_GROUP, "eks", parent="cluster"),
    ]
    found = deadlocks(resources)
    assert [(d.node_group, d.blocker) for d in found] == [(PREFIX + "system", PREFIX + "eks")]
    assert "CoreDNS" in found[0].message()


def test_pulumi_eks_without_coredns_is_no_blocker() -> None:
    resources = [
        res(
            "eks", "eks:index:Cluster", custom=False, skipDefaultNodeGroup=True, corednsAddonOptions={"enabled": False}
        ),
        res("system", NODE_GROUP, "eks"),
        res("coredns", "aws:eks/addon:Addon", "system", addonName="coredns"),
    ]
    assert deadlocks(resources) == []


def test_waiting_through_a_component_waits_for_its_children() -> None:
    resources = [
        res("k8s", "ultraserver:index:KubernetesLayer", custom=False),
        res("inner", "ultraserver:index:Thing", parent="k8s", custom=False),
        res("release", "kubernetes:helm.sh/v3:Release", parent="inner"),
        res("gpu", ASG, "k8s"),
    ]
    found = deadlocks(resources)
    assert [d.blocker for d in found] == [PREFIX + "release"]
    assert found[0].path == (PREFIX + "gpu", PREFIX + "k8s", PREFIX + "inner", PREFIX + "release")


def test_transitive_waits_are_found() -> None:
    resources = [
        res("coredns", "aws:eks/addon:Addon", addonName="coredns"),
        res("template", "aws:ec2/launchTemplate:LaunchTemplate", "coredns"),
        res("gpu", NODE_GROUP, "template"),
        res("vpc-cni", "aws:eks/addon:Addon", addonName="vpc-cni"),
        res("other", NODE_GROUP, "vpc-cni"),
    ]
    assert [(d.node_group, d.path) for d in deadlocks(resources)] == [
        (PREFIX + "gpu", (PREFIX + "gpu", PREFIX + "template", PREFIX + "coredns"))
    ]


@pytest.mark.parametrize(
    ("type_", "inputs", "needs"),
    [
        ("kubernetes:helm.sh/v3:Release", {}, True),
        ("kubernetes:helm.sh/v3:Release", {"skipAwait": True}, False),
        ("kubernetes:apps/v1:Deployment", {}, True),
        ("kubernetes:apps/v1:Deployment", {"metadata": {"annotations": {"pulumi.com/skipAwait": "true"}}}, False),
        ("kubernetes:resource.nvidia.com/v1beta1:ComputeDomain", {}, True),
        ("kubernetes:core/v1:Namespace", {}, False),
        ("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition", {}, False),
        ("aws:eks/addon:Addon", {"addonName": "kube-proxy"}, False),
    ],
)
def test_what_needs_nodes(type_: str, inputs: dict, needs: bool) -> None:
    assert bool(needs_nodes(res("r", type_, **inputs))) is needs


def test_cluster_adds_coredns_after_the_system_nodes(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("gb200-x72")
    by_urn = plan.by_urn()
    cluster = plan.of_type("eks:index:Cluster")[0].inputs
    assert cluster["corednsAddonOptions"]["enabled"] is False
    coredns = [r for r in plan.of_type("aws:eks/addon:Addon") if r.inputs["addonName"] == "coredns"]
    assert len(coredns) == 1
    assert [by_urn[d].name for d in coredns[0].dependencies if by_urn[d].type == NODE_GROUP] == ["gb200-x72-system"]
    # The Kubernetes layer's releases wait for DNS too.
    assert all(coredns[0].urn in r.dependencies for r in plan.of_type("kubernetes:helm.sh/v3:Release"))


def test_nodes_use_the_eks_created_cluster_security_group(shipped_plan: Callable[[str], Plan]) -> None:
    plan = shipped_plan("gb200-x72")
    cluster = plan.of_type("eks:index:Cluster")[0].inputs
    assert cluster["skipDefaultSecurityGroups"] is True
    # System nodes: a template without security groups, so EKS attaches the cluster security group itself.
    templates = plan.of_type("aws:ec2/launchTemplate:LaunchTemplate")
    system = next(t for t in templates if t.name.endswith("-system")).inputs
    assert "vpcSecurityGroupIds" not in system and "networkInterfaces" not in system
    # GPU nodes carry custom groups, so EKS adds none: the cluster security group is named on every interface.
    gpu = next(t for t in templates if t.name.endswith("-nvl72")).inputs
    for interface in gpu["networkInterfaces"]:
        assert "sg-offline-cluster" in interface["securityGroups"]


def test_pulumi_eks_coredns_child_seen_in_a_real_preview_is_found() -> None:
    """A real preview shows pulumi-eks's Cluster without props but with its CoreDNS add-on child."""
    resources = [
        res("eks", "eks:index:Cluster", custom=False),
        res("coredns", "aws:eks/addon:Addon", parent="eks", addonName="coredns"),
        res("system", NODE_GROUP, "eks"),
    ]
    assert [d.blocker for d in deadlocks(resources)] == [PREFIX + "coredns"]
