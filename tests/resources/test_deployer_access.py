"""The deployer's HTTPS rules on the cluster security group: one per deployer source, before the
Kubernetes provider uses the private endpoint."""

from __future__ import annotations

from collections.abc import Callable

from helpers.plan_lookup import one
from helpers.stacks import stack_config
from ultraserver.offline import Plan

RULE = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
NETWORK = {
    "vpcId": "vpc-0123456789abcdef0",
    "privateSubnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
    "gpuSubnetIds": {"us-east-1-dfw-2a": ["subnet-0123456789abcdef2"]},
}


def test_each_deployer_source_gets_https_on_the_cluster_security_group(plan_with: Callable[..., Plan]) -> None:
    cluster = {
        **stack_config("gb200-x72")["ultraserver-eks:cluster"],
        "endpointPublicAccessCidrs": [],
        "deployerAccess": "in-vpc",
        "deployerCidrs": ["10.9.0.0/24"],
        "deployerSecurityGroupIds": ["sg-0123456789abcdef0"],
    }
    plan = plan_with("gb200-x72", {"cluster": cluster, "network": NETWORK})
    rules = [r for r in plan.of_type(RULE) if "-deployer-https-" in r.name]
    peers = sorted((r.inputs.get("cidrIpv4", ""), r.inputs.get("referencedSecurityGroupId", "")) for r in rules)
    assert peers == [("", "sg-0123456789abcdef0"), ("10.9.0.0/24", "")]
    eks_cluster = one(plan, "eks:index:Cluster")
    for rule in rules:
        assert (rule.inputs["ipProtocol"], rule.inputs["fromPort"], rule.inputs["toPort"]) == ("tcp", 443, 443)
        # The EKS-created cluster security group, read from the cluster (an edge to it, not a literal).
        assert eks_cluster.urn in rule.dependencies
    provider = one(plan, "pulumi:providers:kubernetes")
    assert {r.urn for r in rules} <= set(provider.dependencies)


def test_a_public_endpoint_stack_adds_no_deployer_rule(shipped_plan: Callable[[str], Plan]) -> None:
    assert not [r for r in shipped_plan("gb200-x72").of_type(RULE) if "-deployer-https-" in r.name]
