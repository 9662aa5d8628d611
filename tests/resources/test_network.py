"""Subnet planning and the Network component in both modes."""

from __future__ import annotations

import ipaddress

import pytest
from helpers.stacks import stack_config
from ultraserver.config.network_model import NetworkSettings
from ultraserver.config.subnets import ips_needed, plan_subnets
from ultraserver.offline import record
from ultraserver.problems import ConfigError
from ultraserver.resources.network import Network, NetworkArgs, subnet_tags

GROUPS, NETWORK = "ultraserver-eks:gpuNodeGroups", "ultraserver-eks:network"


def test_subnets_fit_the_vpc_without_overlap_and_gpu_subnets_sit_in_the_gpu_zone() -> None:
    needs = {"us-east-1-dfw-2a": ips_needed(18, 32, 1)}
    plans = plan_subnets("10.0.0.0/16", ["us-east-1a", "us-east-1b"], needs, system_nodes=4, pods_per_node=110)
    vpc = ipaddress.ip_network("10.0.0.0/16")
    nets = [ipaddress.ip_network(p.cidr) for p in plans]
    assert all(n.subnet_of(vpc) for n in nets)
    assert not any(a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1 :])
    gpu = [p for p in plans if p.kind == "gpu"]
    assert [p.zone for p in gpu] == ["us-east-1-dfw-2a"]
    assert ipaddress.ip_network(gpu[0].cidr).num_addresses >= needs["us-east-1-dfw-2a"]
    assert sorted(p.zone for p in plans if p.kind == "private") == ["us-east-1a", "us-east-1b"]
    assert sorted(p.zone for p in plans if p.kind == "public") == ["us-east-1a", "us-east-1b"]


def test_gpu_subnet_grows_with_the_fleet() -> None:
    small = plan_subnets("10.0.0.0/16", ["a1", "a2"], {"lz": ips_needed(9, 32, 1)}, 4, 110)
    large = plan_subnets("10.0.0.0/16", ["a1", "a2"], {"lz": ips_needed(144, 32, 1)}, 4, 110)
    size = lambda plans: next(ipaddress.ip_network(p.cidr).num_addresses for p in plans if p.kind == "gpu")  # noqa: E731
    assert size(large) > size(small)


def test_a_vpc_too_small_is_a_clear_error() -> None:
    with pytest.raises(ConfigError) as info:
        plan_subnets("10.0.0.0/24", ["a1", "a2"], {"lz": ips_needed(18, 32, 1)}, 4, 110)
    assert "network.vpcCidr" in str(info.value) and "10.0.0.0/24" in str(info.value)


def test_subnet_tags_mark_load_balancer_roles() -> None:
    assert subnet_tags("c", "public") == {"kubernetes.io/cluster/c": "shared", "kubernetes.io/role/elb": "1"}
    assert subnet_tags("c", "private")["kubernetes.io/role/internal-elb"] == "1"
    assert subnet_tags("c", "gpu") == {"kubernetes.io/cluster/c": "shared"}


def test_new_vpc_routes_gpu_subnet_through_a_regional_nat(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x72")
    by_urn = plan.by_urn()
    gpu_subnet = next(
        r for r in plan.of_type("aws:ec2/subnet:Subnet") if r.inputs["availabilityZone"] == "us-east-1-dfw-2a"
    )
    assoc = next(
        r
        for r in plan.of_type("aws:ec2/routeTableAssociation:RouteTableAssociation")
        if gpu_subnet.urn in r.dependencies
    )
    table = next(by_urn[d] for d in assoc.dependencies if by_urn[d].type == "aws:ec2/routeTable:RouteTable")
    assert table.inputs["routes"][0]["natGatewayId"].endswith("-offline-id")
    assert gpu_subnet.inputs["tags"]["kubernetes.io/cluster/gb200-x72"] == "shared"
    assert gpu_subnet.inputs["mapPublicIpOnLaunch"] is False


def test_existing_vpc_creates_no_vpc_and_tags_its_subnets(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x36")
    assert not plan.of_type("aws:ec2/vpc:Vpc") and not plan.of_type("aws:ec2/subnet:Subnet")
    tags = {(r.inputs["resourceId"], r.inputs["key"]) for r in plan.of_type("aws:ec2/tag:Tag")}
    assert ("subnet-0ccccccccccccccc1", "kubernetes.io/cluster/gb200-x36") in tags
    assert ("subnet-0bbbbbbbbbbbbbbb1", "kubernetes.io/role/elb") in tags
    assert ("subnet-0aaaaaaaaaaaaaaa2", "kubernetes.io/role/internal-elb") in tags


@pytest.mark.parametrize("stack", ["gb200-x72", "gb200-x36"])
def test_efa_security_group_admits_itself_and_the_cluster(shipped_plan, stack: str) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan(stack)
    sg = next(r for r in plan.of_type("aws:ec2/securityGroup:SecurityGroup") if r.name.endswith("-efa"))
    rules = [r for r in plan.resources if r.type.startswith("aws:vpc/securityGroup") and sg.urn in r.dependencies]
    sg_id = f"{sg.name}-offline-id"
    self_in = [
        r
        for r in rules
        if r.type.endswith("IngressRule")
        and r.inputs["securityGroupId"] == sg_id
        and r.inputs.get("referencedSecurityGroupId") == sg_id
    ]
    self_out = [
        r
        for r in rules
        if r.type.endswith("EgressRule")
        and r.inputs["securityGroupId"] == sg_id
        and r.inputs.get("referencedSecurityGroupId") == sg_id
    ]
    assert self_in and self_out and all(r.inputs["ipProtocol"] == "-1" for r in self_in + self_out)
    from_cluster = [
        r
        for r in rules
        if r.type.endswith("IngressRule") and r.inputs.get("referencedSecurityGroupId") == "sg-offline-cluster"
    ]
    to_cluster = [
        r for r in rules if r.type.endswith("IngressRule") and r.inputs["securityGroupId"] == "sg-offline-cluster"
    ]
    assert from_cluster and to_cluster


def _fix_blocks(message: str) -> list[str]:
    """The blocks a planner error tells the user to add."""
    listed = message.split("add network.secondaryVpcCidrs: [", 1)[1].split("]", 1)[0]
    return [b.strip() for b in listed.split(",")]


@pytest.mark.parametrize("ultraservers", [40, 100])
def test_a_full_16_is_not_told_to_use_a_16_and_the_fix_it_gets_plans(ultraservers: int) -> None:
    needs = {"us-east-1-dfw-2a": ips_needed(ultraservers * 18, 32, 1)}
    with pytest.raises(ConfigError) as info:
        plan_subnets("10.0.0.0/16", ["a1", "a2"], needs, 4, 110)
    message = str(info.value)
    assert "use a /16" not in message and "(or a /16 vpcCidr)" not in message
    blocks = _fix_blocks(message)
    plans = plan_subnets("10.0.0.0/16", ["a1", "a2"], needs, 4, 110, blocks)
    assert {p.vpc_block for p in plans} <= {"10.0.0.0/16", *blocks}
    for p in plans:
        assert ipaddress.ip_network(p.cidr).subnet_of(ipaddress.ip_network(p.vpc_block))  # type: ignore[arg-type]


def test_a_thousand_ultraservers_get_gpu_subnets_over_secondary_blocks_without_overlap() -> None:
    needs = {"us-east-1-dfw-2a": ips_needed(18_000, 32, 1)}
    with pytest.raises(ConfigError) as info:
        plan_subnets("10.0.0.0/16", ["a1", "a2"], needs, 4, 110)
    blocks = _fix_blocks(str(info.value))
    plans = plan_subnets("10.0.0.0/16", ["a1", "a2"], needs, 4, 110, blocks)
    gpu = [p for p in plans if p.kind == "gpu"]
    nets = [ipaddress.ip_network(p.cidr) for p in plans]
    assert not any(a.overlaps(b) for i, a in enumerate(nets) for b in nets[i + 1 :])
    usable = sum(ipaddress.ip_network(p.cidr).num_addresses - 5 for p in gpu)
    assert usable >= needs["us-east-1-dfw-2a"] - 5
    assert all(ipaddress.ip_network(p.cidr).prefixlen >= 16 for p in gpu)
    assert gpu[0].name == "gpu-us-east-1-dfw-2a" and gpu[1].name == "gpu-us-east-1-dfw-2a-2"
    assert all(b.startswith("100.") for b in blocks)


def test_a_vpc_smaller_than_a_16_may_grow_or_add_blocks() -> None:
    with pytest.raises(ConfigError) as info:
        plan_subnets("10.0.0.0/20", ["a1", "a2"], {"lz": ips_needed(180, 32, 1)}, 4, 110)
    assert "(or a /16 vpcCidr)" in str(info.value)
    plan_subnets("10.0.0.0/20", ["a1", "a2"], {"lz": ips_needed(180, 32, 1)}, 4, 110, _fix_blocks(str(info.value)))


def test_a_fleet_beyond_one_16_plans_with_its_secondary_block(plan_with) -> None:  # type: ignore[no-untyped-def]
    fleet = {
        "name": "fleet",
        "mode": "self-managed",
        "availabilityZone": "us-east-1-dfw-2a",
        "capacityReservationResourceGroupArn": "arn:aws:resource-groups:us-east-1:111122223333:group/fleet",
        "ultraserverCount": 40,
    }
    network = {"availabilityZones": ["us-east-1a", "us-east-1b"], "vpcCidr": "10.72.0.0/16"}
    plan = plan_with(
        "gb200-x72", {"gpuNodeGroups": [fleet], "network": {**network, "secondaryVpcCidrs": ["100.64.0.0/16"]}}
    )
    [block] = plan.of_type("aws:ec2/vpcIpv4CidrBlockAssociation:VpcIpv4CidrBlockAssociation")
    assert block.inputs["cidrBlock"] == "100.64.0.0/16"
    subnets = plan.of_type("aws:ec2/subnet:Subnet")
    in_block = [s for s in subnets if s.inputs["cidrBlock"].startswith("100.64.")]
    assert in_block and all(block.urn in s.dependencies for s in in_block)
    assert all(block.urn not in s.dependencies for s in subnets if s not in in_block)


def test_the_multi_stack_with_a_fleet_of_25_gets_a_fix_that_plans(plan_with) -> None:  # type: ignore[no-untyped-def]
    config = stack_config("gb200-multi")
    groups = [{**g, "ultraserverCount": 25} if g.get("ultraserverCount") else g for g in config[GROUPS]]
    with pytest.raises(ConfigError) as info:
        plan_with("gb200-multi", {"gpuNodeGroups": groups})
    message = str(info.value)
    assert "got '10.80.0.0/16'" in message and "use a /16" not in message
    network = {**config[NETWORK], "secondaryVpcCidrs": _fix_blocks(message)}
    plan = plan_with("gb200-multi", {"gpuNodeGroups": groups, "network": network})
    assert plan.of_type("aws:ec2/vpcIpv4CidrBlockAssociation:VpcIpv4CidrBlockAssociation")


_EXISTING = stack_config("gb200-x36")[NETWORK]
_NEW = stack_config("gb200-x72")[NETWORK]


@pytest.mark.parametrize(
    ("stack", "network", "at"),
    [
        (
            "gb200-x36",
            {**_EXISTING, "publicSubnetIds": [*_EXISTING["publicSubnetIds"], _EXISTING["privateSubnetIds"][0]]},
            "publicSubnetIds[2]",
        ),
        ("gb200-x36", {**_EXISTING, "privateSubnetIds": _EXISTING["privateSubnetIds"][:1]}, "privateSubnetIds"),
        ("gb200-x72", {**_NEW, "secondaryVpcCidrs": ["10.72.128.0/17"]}, "secondaryVpcCidrs[0]"),
        ("gb200-x72", {**_NEW, "vpcCidr": "10.72.0.0/29"}, "vpcCidr"),
        ("gb200-x72", {**_NEW, "publicSubnetIds": ["subnet-0bbbbbbbbbbbbbbb1"]}, "publicSubnetIds"),
        ("gb200-x72", {**_NEW, "availabilityZones": ["us-east-1a", "us-east-1a"]}, "availabilityZones[1]"),
        ("gb200-x72", {**_NEW, "availabilityZones": ["us-east-1a", "us-east-1-dfw-2a"]}, "availabilityZones[1]"),
    ],
)
def test_a_programs_network_gets_the_stack_files_finding(plan_with, stack: str, network: dict, at: str) -> None:  # type: ignore[no-untyped-def]
    """A network a stack file is refused for is refused from a program too, with the same finding keyed under the
    argument (NetworkArgs.settings.<key>)."""
    with pytest.raises(ConfigError) as from_stack:
        plan_with(stack, {"network": network})
    expected = {p.key: p.finding() for p in from_stack.value.items}[f"{NETWORK}.{at}"]
    settings = NetworkSettings.model_validate(network)
    with pytest.raises(ConfigError) as from_program:
        record(lambda: Network("net", NetworkArgs(cluster_name="gb200", settings=settings)))
    assert {p.key: p.finding() for p in from_program.value.items} == {f"NetworkArgs.settings.{at}": expected}
