"""The EKS control plane (through pulumi-eks) and the system node group where controllers run."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from ultraserver.components.launch_template import secure_node_args
from ultraserver.components.node_role import NodeRole, NodeRoleArgs
from ultraserver.facts import instances, kubernetes
from ultraserver.facts.scheduling import system_node_labels

CLUSTER_ADMIN_POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"


def access_entries(admin_principal_arns: Sequence[str]) -> dict[str, eks.AccessEntryArgs]:
    """Cluster-admin access entries, one per principal, keyed by a stable short name."""
    entries = {}
    for index, arn in enumerate(admin_principal_arns):
        entries[f"admin-{index}"] = eks.AccessEntryArgs(
            principal_arn=arn,
            access_policies={
                "cluster-admin": eks.AccessPolicyAssociationArgs(
                    policy_arn=CLUSTER_ADMIN_POLICY,
                    access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
                )
            },
        )
    return entries


def system_launch_template_args(disk_size_gib: int, tags: Mapping[str, str]) -> dict:
    """Launch template settings for system nodes: IMDSv2 only, encrypted gp3 root volume.

    No image id, so EKS still merges its own bootstrap into the user data.
    """
    return {
        **secure_node_args(disk_size_gib),
        "tag_specifications": [{"resource_type": kind, "tags": dict(tags)} for kind in ("instance", "volume")],
        "tags": dict(tags),
    }


@dataclass
class ClusterArgs:
    """Inputs of the Cluster component."""

    name: str
    """EKS cluster name."""
    vpc_id: pulumi.Input[str]
    """VPC of the cluster."""
    private_subnet_ids: Sequence[pulumi.Input[str]]
    """Regional private subnets for the control plane and system nodes."""
    public_subnet_ids: Sequence[pulumi.Input[str]] = ()
    """Regional public subnets (for internet-facing load balancers)."""
    kubernetes_version: str = kubernetes.FLOOR_TEXT
    """Kubernetes version (>= 1.33 for DRA)."""
    public_access_cidrs: Sequence[str] = ()
    """CIDRs for a public API endpoint; empty keeps the endpoint private."""
    admin_principal_arns: Sequence[str] = ()
    """IAM principals granted cluster admin."""
    log_types: Sequence[str] = ("api", "audit", "authenticator")
    """Control-plane log types."""
    vpc_cni_version: str = ""
    """vpc-cni add-on version; empty takes the EKS default."""
    coredns_version: str = ""
    """coredns add-on version; empty takes the EKS default."""
    kube_proxy_version: str = ""
    """kube-proxy add-on version; empty takes the EKS default."""
    pod_identity_agent_version: str = ""
    """eks-pod-identity-agent add-on version; empty takes the EKS default."""
    system_instance_type: str = instances.SYSTEM_INSTANCE_TYPE
    """System node instance type."""
    system_ami_type: str = instances.SYSTEM_AMI_TYPE
    """System node AMI type."""
    system_desired_size: int = 2
    """System nodes to run."""
    system_min_size: int = 2
    """Fewest system nodes."""
    system_max_size: int = 4
    """Most system nodes."""
    system_disk_size_gib: int = instances.SYSTEM_ROOT_VOLUME_GIB
    """System node root volume size."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """Tags for every AWS resource."""


class Cluster(pulumi.ComponentResource):
    """An EKS cluster with API access entries, encrypted secrets, OIDC, managed add-ons and a system node group."""

    eks: eks.Cluster
    name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    certificate_authority: pulumi.Output[str]
    service_cidr: pulumi.Output[str]
    security_group_id: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider
    system_node_group: aws.eks.NodeGroup

    def __init__(self, name: str, args: ClusterArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__("ultraserver:index:Cluster", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = dict(args.tags)
        key = aws.kms.Key(
            f"{name}-secrets",
            description=f"EKS secrets encryption for {args.name}",
            enable_key_rotation=True,
            deletion_window_in_days=30,
            tags=tags,
            opts=child,
        )
        public = bool(args.public_access_cidrs)
        self.eks = eks.Cluster(
            name,
            name=args.name,
            version=args.kubernetes_version,
            vpc_id=args.vpc_id,
            private_subnet_ids=list(args.private_subnet_ids),
            public_subnet_ids=list(args.public_subnet_ids) or None,
            endpoint_private_access=True,
            endpoint_public_access=public,
            public_access_cidrs=list(args.public_access_cidrs) if public else None,
            authentication_mode=eks.AuthenticationMode.API,
            access_entries=access_entries(args.admin_principal_arns),
            skip_default_node_group=True,
            create_instance_role=False,
            # DRA, which ComputeDomains need, does not work on Auto Mode nodes.
            auto_mode=eks.AutoModeOptionsArgs(enabled=False),
            enabled_cluster_log_types=list(args.log_types),
            encryption_config_key_arn=key.arn,
            create_oidc_provider=True,
            vpc_cni_options=eks.VpcCniOptionsArgs(addon_version=args.vpc_cni_version or None),
            coredns_addon_options=eks.CoreDnsAddonOptionsArgs(enabled=True, version=args.coredns_version or None),
            kube_proxy_addon_options=eks.KubeProxyAddonOptionsArgs(
                enabled=True, version=args.kube_proxy_version or None
            ),
            tags=tags,
            opts=child,
        )
        aws_cluster = self.eks.eks_cluster
        self.name = aws_cluster.name
        self.endpoint = aws_cluster.endpoint
        self.certificate_authority = aws_cluster.certificate_authority.apply(lambda ca: ca.data)
        self.service_cidr = aws_cluster.kubernetes_network_config.apply(lambda c: c.service_ipv4_cidr)
        # The security group EKS attaches to the control plane and to nodes without custom groups.
        self.security_group_id = aws_cluster.vpc_config.apply(lambda c: c.cluster_security_group_id)
        self.kubeconfig = pulumi.Output.secret(self.eks.kubeconfig_json)
        aws.eks.Addon(
            f"{name}-pod-identity-agent",
            cluster_name=self.name,
            addon_name="eks-pod-identity-agent",
            addon_version=args.pod_identity_agent_version or None,
            resolve_conflicts_on_create="OVERWRITE",
            tags=tags,
            opts=child,
        )
        self.provider = k8s.Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=child)

        role = NodeRole(f"{name}-system", NodeRoleArgs(tags=tags), opts=child)
        lt_args = system_launch_template_args(args.system_disk_size_gib, tags)
        template = aws.ec2.LaunchTemplate(
            f"{name}-system", description="System nodes: IMDSv2, encrypted root", **lt_args, opts=child
        )
        self.system_node_group = aws.eks.NodeGroup(
            f"{name}-system",
            cluster_name=self.name,
            node_group_name_prefix=f"{args.name}-system-",
            node_role_arn=role.role.arn,
            subnet_ids=list(args.private_subnet_ids),
            ami_type=args.system_ami_type,
            capacity_type="ON_DEMAND",
            instance_types=[args.system_instance_type],
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=template.id, version=template.latest_version.apply(str)
            ),
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                desired_size=args.system_desired_size, min_size=args.system_min_size, max_size=args.system_max_size
            ),
            update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
            labels=system_node_labels(),
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[role]),
        )
        self.register_outputs({"name": self.name, "endpoint": self.endpoint, "kubeconfig": self.kubeconfig})
