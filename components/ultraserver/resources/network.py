"""The VPC: regional subnets for the control plane and system nodes, zone subnets for GPU nodes, the EFA security group.

P6e-GB200 capacity lives in a Local Zone (e.g. ``us-east-1-dfw-2a``), so GPU subnets sit in that
zone and route out through the regional NAT gateway; the control plane needs two regional zones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws

from ultraserver.config.subnets import SubnetPlan


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


@dataclass
class NetworkArgs:
    """Inputs of the Network component."""

    cluster_name: str
    """EKS cluster name, for subnet tags."""
    subnets: Sequence[SubnetPlan] = ()
    """Subnets of a new VPC, from plan_subnets."""
    vpc_cidr: str = "10.0.0.0/16"
    """Primary CIDR of a new VPC; subnets in other blocks (SubnetPlan.vpc_block) get those blocks associated."""
    single_nat_gateway: bool = True
    """One NAT gateway instead of one per regional zone."""
    vpc_id: str = ""
    """Use this existing VPC instead of creating one."""
    private_subnet_ids: Sequence[str] = ()
    """Existing regional private subnets."""
    public_subnet_ids: Sequence[str] = ()
    """Existing regional public subnets."""
    gpu_subnet_ids: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Existing GPU subnets by zone."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """Tags for every resource."""


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
        if args.vpc_id:
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
            cidr_block=args.vpc_cidr,
            enable_dns_hostnames=True,
            enable_dns_support=True,
            tags={**tags, "Name": name},
            opts=child,
        )
        self.vpc_id = vpc.id
        vpc_child = pulumi.ResourceOptions(parent=vpc)
        block_opts = self._secondary_blocks(vpc, args, plans)
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
        nat_by_zone = self._public_routes(vpc, igw, regional_zones, subnets, args.single_nat_gateway)
        self._private_routes(vpc, regional_zones, plans, subnets, nat_by_zone)
        self.private_subnet_ids = [subnets[f"private-{z}"].id for z in regional_zones]
        self.public_subnet_ids = [subnets[f"public-{z}"].id for z in regional_zones]
        self.gpu_subnet_ids = {
            z: [subnets[p.name].id for p in plans if p.kind == "gpu" and p.zone == z] for z in gpu_zones
        }

    def _secondary_blocks(
        self, vpc: aws.ec2.Vpc, args: NetworkArgs, plans: list[SubnetPlan]
    ) -> dict[str, pulumi.ResourceOptions]:
        """Options for subnets by VPC block: one in a secondary block waits for the block's association."""
        vpc_child = pulumi.ResourceOptions(parent=vpc)
        block_opts = {args.vpc_cidr: vpc_child}
        for block in dict.fromkeys(p.vpc_block for p in plans if p.vpc_block not in ("", args.vpc_cidr)):
            association = aws.ec2.VpcIpv4CidrBlockAssociation(
                f"{self._name}-{block.replace('/', '-')}", vpc_id=vpc.id, cidr_block=block, opts=vpc_child
            )
            block_opts[block] = pulumi.ResourceOptions(parent=vpc, depends_on=[association])
        return block_opts

    def _public_routes(
        self,
        vpc: aws.ec2.Vpc,
        igw: aws.ec2.InternetGateway,
        regional_zones: list[str],
        subnets: dict[str, aws.ec2.Subnet],
        single_nat_gateway: bool,
    ) -> dict[str, aws.ec2.NatGateway]:
        """The public route table on the internet gateway, and the NAT gateways (one, or one per zone) by zone."""
        name, tags = self._name, self._tags
        vpc_child = pulumi.ResourceOptions(parent=vpc)
        public_rt = aws.ec2.RouteTable(
            f"{name}-public",
            vpc_id=vpc.id,
            routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", gateway_id=igw.id)],
            tags={**tags, "Name": f"{name}-public"},
            opts=vpc_child,
        )
        nat_by_zone: dict[str, aws.ec2.NatGateway] = {}
        for zone in regional_zones:
            public = subnets[f"public-{zone}"]
            aws.ec2.RouteTableAssociation(
                f"{name}-public-{zone}", subnet_id=public.id, route_table_id=public_rt.id, opts=vpc_child
            )
            if not single_nat_gateway or not nat_by_zone:
                eip = aws.ec2.Eip(
                    f"{name}-nat-{zone}", domain="vpc", tags={**tags, "Name": f"{name}-nat-{zone}"}, opts=vpc_child
                )
                nat_by_zone[zone] = aws.ec2.NatGateway(
                    f"{name}-{zone}",
                    allocation_id=eip.id,
                    subnet_id=public.id,
                    tags={**tags, "Name": f"{name}-{zone}"},
                    opts=pulumi.ResourceOptions(parent=vpc, depends_on=[igw]),
                )
        return nat_by_zone

    def _private_routes(
        self,
        vpc: aws.ec2.Vpc,
        regional_zones: list[str],
        plans: list[SubnetPlan],
        subnets: dict[str, aws.ec2.Subnet],
        nat_by_zone: dict[str, aws.ec2.NatGateway],
    ) -> None:
        """A private route table per zone through its NAT gateway (else the first); GPU subnets use the first's."""
        name, tags = self._name, self._tags
        vpc_child = pulumi.ResourceOptions(parent=vpc)
        first_nat = next(iter(nat_by_zone.values()))
        private_rts: dict[str, aws.ec2.RouteTable] = {}
        for zone in regional_zones:
            nat = nat_by_zone.get(zone, first_nat)
            private_rts[zone] = aws.ec2.RouteTable(
                f"{name}-private-{zone}",
                vpc_id=vpc.id,
                routes=[aws.ec2.RouteTableRouteArgs(cidr_block="0.0.0.0/0", nat_gateway_id=nat.id)],
                tags={**tags, "Name": f"{name}-private-{zone}"},
                opts=vpc_child,
            )
            aws.ec2.RouteTableAssociation(
                f"{name}-private-{zone}",
                subnet_id=subnets[f"private-{zone}"].id,
                route_table_id=private_rts[zone].id,
                opts=vpc_child,
            )
        # Local Zones have no NAT gateway of their own: GPU subnets route out through the parent region's.
        gpu_rt = private_rts[regional_zones[0]]
        for plan in (p for p in plans if p.kind == "gpu"):
            aws.ec2.RouteTableAssociation(
                f"{name}-{plan.name}", subnet_id=subnets[plan.name].id, route_table_id=gpu_rt.id, opts=vpc_child
            )

    def _use_existing(self, args: NetworkArgs) -> None:
        child = pulumi.ResourceOptions(parent=self)
        self.vpc_id = pulumi.Output.from_input(args.vpc_id)
        kinds = [("private", s) for s in args.private_subnet_ids] + [("public", s) for s in args.public_subnet_ids]
        kinds += [("gpu", s) for ids in args.gpu_subnet_ids.values() for s in ids]
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
        self.private_subnet_ids = [pulumi.Output.from_input(s) for s in args.private_subnet_ids]
        self.public_subnet_ids = [pulumi.Output.from_input(s) for s in args.public_subnet_ids]
        self.gpu_subnet_ids = {z: [pulumi.Output.from_input(s) for s in ids] for z, ids in args.gpu_subnet_ids.items()}
