"""The VPC: regional subnets for the control plane and system nodes, zone subnets for GPU nodes, the EFA security group.

P6e-GB200 capacity lives in a Local Zone (e.g. ``us-east-1-dfw-2a``), so GPU subnets sit in that zone and route out
through a regional NAT gateway, or the zone's own (builders.egress; docs/deploy.md, "GPU subnets' egress"); the
control plane needs two regional zones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ultraserver.arguments import checked, checked_component, moved_into
from ultraserver.builders.egress import EgressPlan, egress_plan
from ultraserver.config.argument_rules import cluster_name_problems, tag_problems
from ultraserver.config.network_model import NetworkSettings
from ultraserver.config.network_rules import network_problems
from ultraserver.config.subnets import SubnetPlan
from ultraserver.problems import ERROR, Problem


def subnet_tags(cluster_name: str, kind: str) -> dict[str, str]:
    """Tags EKS and the AWS Load Balancer Controller look for on a subnet."""
    tags = {f"kubernetes.io/cluster/{cluster_name}": "shared"}
    if kind == "public":
        tags["kubernetes.io/role/elb"] = "1"
    elif kind == "private":
        tags["kubernetes.io/role/internal-elb"] = "1"
    return tags


def _all_traffic(
    rule: type[aws.vpc.SecurityGroupIngressRule] | type[aws.vpc.SecurityGroupEgressRule],
    name: str,
    security_group_id: pulumi.Input[str],
    description: str,
    opts: pulumi.ResourceOptions,
    referenced_security_group_id: pulumi.Input[str] | None = None,
    cidr_ipv4: str | None = None,
) -> pulumi.Resource:
    """One rule of a security group admitting all protocols and ports from or to a peer group or a CIDR."""
    return rule(
        name,
        security_group_id=security_group_id,
        referenced_security_group_id=referenced_security_group_id,
        cidr_ipv4=cidr_ipv4,
        ip_protocol="-1",
        description=description,
        opts=opts,
    )


@checked(
    moved_into(
        "NetworkSettings",
        "vpc_cidr",
        "nat_gateways",
        "vpc_id",
        "private_subnet_ids",
        "public_subnet_ids",
        "gpu_subnet_ids",
    )
)
@dataclass
class NetworkArgs:
    """Inputs of the Network component: the network settings, and the subnet plan and tags."""

    cluster_name: str
    """EKS cluster name, for subnet tags."""
    settings: NetworkSettings = field(default_factory=NetworkSettings)
    """The stack's network section as a model (``NetworkSettings(vpc_cidr=..., nat_gateways=...)``, or an existing VPC
    with ``vpc_id`` and its subnets); NAT gateways: single (in the first regional zone) or per-zone, and a Local Zone
    gets its own only with a ``nat`` subnet in ``subnets`` (plan_subnets' nat_zones; builders.egress)."""
    subnets: Sequence[SubnetPlan] = ()
    """Subnets of a new VPC, from plan_subnets (subnets in blocks other than the VPC's CIDR get those blocks
    associated)."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """Tags for every resource."""

    def problems(self) -> list[Problem]:
        """The network's own rules, the stack file's, keyed under ``NetworkArgs.settings``; errors only, since a
        ConfigError stops the program and a warning must not. Rules that need the stack's region or GPU groups stay
        with the stack file's rules."""
        found = [p for p in network_problems(self.settings, "NetworkArgs.settings") if p.level == ERROR]
        return (
            found
            + cluster_name_problems(self.cluster_name, "NetworkArgs.cluster_name")
            + tag_problems(self.tags, "NetworkArgs.tags")
        )


@checked_component
class Network(pulumi.ComponentResource):
    """A new or existing VPC with EKS-tagged subnets and the EFA security group."""

    vpc_id: pulumi.Output[str]
    private_subnet_ids: list[pulumi.Output[str]]
    public_subnet_ids: list[pulumi.Output[str]]
    gpu_subnet_ids: dict[str, list[pulumi.Output[str]]]
    efa_security_group: aws.ec2.SecurityGroup

    def __init__(self, name: str, args: NetworkArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:Network", name, None, opts)
        self._name = name
        self._tags = dict(args.tags)
        if args.settings.vpc_id:
            self._use_existing(args)
        else:
            self._create(args)
        self.efa_security_group = aws.ec2.SecurityGroup(
            f"{name}-efa",
            vpc_id=self.vpc_id,
            description="EFA: all traffic between GB200 nodes; control-plane rules added by the cluster",
            tags={**self._tags, "Name": f"{args.cluster_name}-efa"},
            opts=pulumi.ResourceOptions(parent=self),
        )
        sg_id = self.efa_security_group.id
        rule_opts = pulumi.ResourceOptions(parent=self.efa_security_group)
        # EFA's OS-bypass traffic is dropped unless the group admits all traffic from and to itself.
        _all_traffic(
            aws.vpc.SecurityGroupIngressRule,
            f"{name}-efa-self-in",
            sg_id,
            "EFA: all traffic from itself",
            rule_opts,
            referenced_security_group_id=sg_id,
        )
        _all_traffic(
            aws.vpc.SecurityGroupEgressRule,
            f"{name}-efa-self-out",
            sg_id,
            "EFA: all traffic to itself",
            rule_opts,
            referenced_security_group_id=sg_id,
        )
        _all_traffic(
            aws.vpc.SecurityGroupEgressRule,
            f"{name}-efa-egress",
            sg_id,
            "Nodes reach ECR, EKS and S3 through the NAT gateway",
            rule_opts,
            cidr_ipv4="0.0.0.0/0",
        )
        self.register_outputs({"vpcId": self.vpc_id, "efaSecurityGroupId": sg_id})

    def allow_cluster(self, cluster_security_group_id: pulumi.Input[str]) -> list[pulumi.Resource]:
        """Let the control plane and system nodes talk to GPU nodes and back.

        A launch template with its own security groups replaces the cluster security group on those
        nodes, so the EFA group must admit the cluster group and the cluster group must admit it.
        """
        sg_id = self.efa_security_group.id
        rule_opts = pulumi.ResourceOptions(parent=self.efa_security_group)
        return [
            _all_traffic(
                aws.vpc.SecurityGroupIngressRule,
                f"{self._name}-efa-from-cluster",
                sg_id,
                "Control plane and system nodes to GPU nodes",
                rule_opts,
                referenced_security_group_id=cluster_security_group_id,
            ),
            _all_traffic(
                aws.vpc.SecurityGroupIngressRule,
                f"{self._name}-cluster-from-efa",
                cluster_security_group_id,
                "GPU nodes to control plane and system nodes",
                rule_opts,
                referenced_security_group_id=sg_id,
            ),
        ]

    def _create(self, args: NetworkArgs) -> None:
        name, tags = self._name, self._tags
        child = pulumi.ResourceOptions(parent=self)
        plans = list(args.subnets)
        regional_zones = [p.zone for p in plans if p.kind == "private"]
        gpu_zones = list(dict.fromkeys(p.zone for p in plans if p.kind == "gpu"))
        vpc = aws.ec2.Vpc(
            name,
            cidr_block=args.settings.vpc_cidr,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={**tags, "Name": name},
            opts=child,
        )
        self.vpc_id = vpc.id
        vpc_child = pulumi.ResourceOptions(parent=vpc)
        block_opts = self._secondary_blocks(vpc, args.settings.vpc_cidr, plans)
        igw = aws.ec2.InternetGateway(name, vpc_id=vpc.id, tags={**tags, "Name": name}, opts=vpc_child)
        subnets: dict[str, aws.ec2.Subnet] = {}
        for plan in plans:
            subnets[plan.name] = aws.ec2.Subnet(
                f"{name}-{plan.name}",
                vpc_id=vpc.id,
                cidr_block=plan.cidr,
                availability_zone=plan.zone,
                map_public_ip_on_launch=False,
                tags={**tags, **subnet_tags(args.cluster_name, plan.kind), "Name": f"{name}-{plan.name}"},
                opts=block_opts.get(plan.vpc_block, vpc_child),
            )
        public_rt = aws.ec2.RouteTable(
            f"{name}-public",
            vpc_id=vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)],
            tags={**tags, "Name": f"{name}-public"},
            opts=vpc_child,
        )
        egress = egress_plan(plans, args.settings.nat_gateways)
        nat_by_zone = self._nat_gateways(vpc, igw, egress, subnets, public_rt)
        self._route_tables(vpc, egress, subnets, nat_by_zone)
        self.private_subnet_ids = [subnets[f"private-{z}"].id for z in regional_zones]
        self.public_subnet_ids = [subnets[f"public-{z}"].id for z in regional_zones]
        self.gpu_subnet_ids = {
            z: [subnets[p.name].id for p in plans if p.kind == "gpu" and p.zone == z] for z in gpu_zones
        }

    def _secondary_blocks(
        self, vpc: aws.ec2.Vpc, primary: str, plans: list[SubnetPlan]
    ) -> dict[str, pulumi.ResourceOptions]:
        """Subnet options by VPC block: a subnet in a secondary block waits for the block's association."""
        vpc_child = pulumi.ResourceOptions(parent=vpc)
        block_opts = {primary: vpc_child}
        for block in dict.fromkeys(p.vpc_block for p in plans if p.vpc_block not in ("", primary)):
            association = aws.ec2.VpcIpv4CidrBlockAssociation(
                f"{self._name}-{block.replace('/', '-')}", vpc_id=vpc.id, cidr_block=block, opts=vpc_child
            )
            block_opts[block] = pulumi.ResourceOptions(parent=vpc, depends_on=[association])
        return block_opts

    def _nat_gateways(
        self,
        vpc: aws.ec2.Vpc,
        igw: aws.ec2.InternetGateway,
        egress: EgressPlan,
        subnets: dict[str, aws.ec2.Subnet],
        public_rt: aws.ec2.RouteTable,
    ) -> dict[str, aws.ec2.NatGateway]:
        """The public subnets on the public route table, and the NAT gateways the egress plan places, by zone."""
        name, tags = self._name, self._tags
        vpc_child = pulumi.ResourceOptions(parent=vpc)
        gateways = {g.subnet: g for g in egress.nat_gateways}
        nat_by_zone: dict[str, aws.ec2.NatGateway] = {}
        for public_name in egress.public_subnets:
            public = subnets[public_name]
            aws.ec2.RouteTableAssociation(
                f"{name}-{public_name}", subnet_id=public.id, route_table_id=public_rt.id, opts=vpc_child
            )
            gateway = gateways.get(public_name)
            if gateway is None:
                continue
            zone = gateway.zone
            # A Local Zone's NAT gateway fails to launch unless its Elastic IP is of the zone's border group.
            eip = aws.ec2.Eip(
                f"{name}-nat-{zone}",
                domain="vpc",
                network_border_group=gateway.border_group or None,
                tags={**tags, "Name": f"{name}-nat-{zone}"},
                opts=vpc_child,
            )
            nat_by_zone[zone] = aws.ec2.NatGateway(
                f"{name}-{zone}",
                allocation_id=eip.id,
                subnet_id=public.id,
                tags={**tags, "Name": f"{name}-{zone}"},
                opts=pulumi.ResourceOptions(parent=vpc, depends_on=[igw]),
            )
        return nat_by_zone

    def _route_tables(
        self,
        vpc: aws.ec2.Vpc,
        egress: EgressPlan,
        subnets: dict[str, aws.ec2.Subnet],
        nat_by_zone: dict[str, aws.ec2.NatGateway],
    ) -> None:
        """The private route tables through their NAT gateways, each with the subnets the egress plan gives it."""
        name, tags = self._name, self._tags
        vpc_child = pulumi.ResourceOptions(parent=vpc)
        tables: dict[str, aws.ec2.RouteTable] = {}
        for table in egress.route_tables:
            nat = nat_by_zone[table.nat_zone]
            tables[table.name] = aws.ec2.RouteTable(
                f"{name}-{table.name}",
                vpc_id=vpc.id,
                routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
                tags={**tags, "Name": f"{name}-{table.name}"},
                opts=vpc_child,
            )
            if table.name in table.subnets:  # a regional table first takes its own private subnet
                self._associate(f"{name}-{table.name}", subnets[table.name], tables[table.name], vpc_child)
        for table in egress.route_tables:
            for subnet_name in (n for n in table.subnets if n != table.name):
                self._associate(f"{name}-{subnet_name}", subnets[subnet_name], tables[table.name], vpc_child)

    @staticmethod
    def _associate(
        name: str, subnet: aws.ec2.Subnet, table: aws.ec2.RouteTable, opts: pulumi.ResourceOptions
    ) -> aws.ec2.RouteTableAssociation:
        return aws.ec2.RouteTableAssociation(name, subnet_id=subnet.id, route_table_id=table.id, opts=opts)

    def _use_existing(self, args: NetworkArgs) -> None:
        child = pulumi.ResourceOptions(parent=self)
        net = args.settings
        self.vpc_id = pulumi.Output.from_input(net.vpc_id)
        kinds = [("private", s) for s in net.private_subnet_ids] + [("public", s) for s in net.public_subnet_ids]
        kinds += [("gpu", s) for ids in net.gpu_subnet_ids.values() for s in ids]
        # Existing subnets are shared with other owners: add the tags EKS needs, never replace theirs.
        for kind, subnet_id in kinds:
            for key, value in subnet_tags(args.cluster_name, kind).items():
                aws.ec2.Tag(
                    f"{self._name}-{subnet_id}-{key.rsplit('/', 1)[-1]}",
                    resource_id=subnet_id,
                    key=key,
                    value=value,
                    opts=child,
                )
        self.private_subnet_ids = [pulumi.Output.from_input(s) for s in net.private_subnet_ids]
        self.public_subnet_ids = [pulumi.Output.from_input(s) for s in net.public_subnet_ids]
        self.gpu_subnet_ids = {z: [pulumi.Output.from_input(s) for s in ids] for z, ids in net.gpu_subnet_ids.items()}
