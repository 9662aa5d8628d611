"""The EKS control plane (through pulumi-eks) and the system node group where controllers run."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_eks as eks
import pulumi_kubernetes as k8s

from ultraserver.arguments import checked, checked_component
from ultraserver.builders.iam import pod_identity_trust_policy
from ultraserver.builders.kubeconfig import scoped_kubeconfig_text
from ultraserver.config.access_entries import access_entry_specs
from ultraserver.config.argument_rules import cluster_name_problems, private_subnet_problems, tag_problems
from ultraserver.config.settings import AddonSettings, SystemNodeGroupSettings
from ultraserver.facts.aws import control_plane, limits, network
from ultraserver.facts.aws.aws_ids import PUBLIC_ENDPOINT_FROM_ANYWHERE
from ultraserver.facts.aws.permissions import CNI_POLICY_ARN, VPC_CNI_NAMESPACE, VPC_CNI_SERVICE_ACCOUNT
from ultraserver.facts.kubernetes import eks_versions
from ultraserver.facts.kubernetes.scheduling import system_node_labels
from ultraserver.facts.pins import addons
from ultraserver.problems import ConfigError, Problem
from ultraserver.resources.control_plane_logs import control_plane_log_group
from ultraserver.resources.launch_template import system_launch_template_args
from ultraserver.resources.node_role import NodeRole, NodeRoleArgs


@checked()
@dataclass
class ClusterCoreData:
    """What node groups need from a cluster, as pulumi-eks's ``CoreData``: pass a ``Cluster`` or build one by hand.

    Built by hand it lets node groups join a cluster declared elsewhere (another stack's outputs).
    """

    name: pulumi.Input[str]
    """EKS cluster name."""
    endpoint: pulumi.Input[str]
    """API server endpoint, for the NodeConfig of nodes EKS does not bootstrap."""
    certificate_authority: pulumi.Input[str]
    """Base64 cluster CA data, as EKS returns it."""
    service_cidr: pulumi.Input[str]
    """Kubernetes service CIDR."""
    security_group_id: pulumi.Input[str]
    """The EKS-created cluster security group; nodes with custom security groups must carry it themselves."""
    kubernetes_version: str = eks_versions.DEFAULT_TEXT
    """Kubernetes minor version of the control plane; selects the node AMI."""
    node_prerequisites: Sequence[pulumi.Resource] = ()
    """What nodes need before they boot (e.g. the VPC CNI's Pod Identity association)."""


@checked()
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
    kubernetes_version: str = eks_versions.DEFAULT_TEXT
    """Kubernetes minor version (the toolkit's default; 1.33 is the floor for DRA)."""
    control_plane_tier: str = control_plane.STANDARD
    """EKS Provisioned Control Plane tier (facts/aws/control_plane.py): standard, or one set on pulumi-eks's
    aws:eks/cluster:Cluster child through a transform (pulumi-eks 4.4.0 does not expose it)."""
    public_access_cidrs: Sequence[str] = ()
    """CIDRs for a public API endpoint; empty keeps the endpoint private."""
    public_endpoint_from_anywhere: bool = False
    """The stack allows 0.0.0.0/0 or ::/0 in public_access_cidrs; tagged on the cluster for the policy."""
    admin_principal_arns: Sequence[str] = ()
    """IAM principals granted cluster admin."""
    preview_principal_arns: Sequence[str] = ()
    """IAM principals granted read-only access (AmazonEKSViewPolicy), e.g. the pull-request preview role."""
    deployer_cidrs: Sequence[str] = ()
    """CIDRs in the VPC that `pulumi up` runs from: HTTPS to the private endpoint through the cluster security group."""
    deployer_security_group_ids: Sequence[str] = ()
    """Security groups of the runner or bastion that runs `pulumi up`: HTTPS through the cluster security group."""
    deletion_protection: bool = True
    """EKS deletion protection ("the cluster cannot be deleted unless deletion protection is first disabled",
    pulumi-aws 7.51.1 eks.Cluster): turn it off, pulumi up, then destroy."""
    log_types: Sequence[str] = ("api", "audit", "authenticator")
    """Control-plane log types."""
    log_retention_days: int = limits.DEFAULT_RETENTION_DAYS
    """Retention of the control-plane log group, which the component creates (KMS-encrypted) before the cluster."""
    create_oidc_provider: bool = False
    """Create the cluster's IAM OIDC provider, for IRSA; the toolkit's own roles use EKS Pod Identity."""
    pod_ips_per_node: int = 32
    """The VPC CNI's MINIMUM_IP_TARGET, with WARM_IP_TARGET 2 instead of a whole warm ENI (facts/aws/network.py): the
    planned pods per GPU node, which the subnets are sized for."""
    addons: AddonSettings = field(default_factory=AddonSettings)
    """EKS add-on versions (vpc-cni, coredns, kube-proxy, pod identity agent); empty takes the EKS default."""
    system_node_group: SystemNodeGroupSettings = field(default_factory=SystemNodeGroupSettings)
    """The system node group: instance type, AMI type, sizes, root volume (the stack's systemNodeGroup)."""
    tags: Mapping[str, str] = field(default_factory=dict)
    """Tags for every AWS resource."""
    kubernetes_provider: bool = True
    """Declare a Kubernetes provider for the cluster; False when another stack installs the Kubernetes layer."""
    node_monitoring_agent: bool = True
    """Install the eks-node-monitoring-agent add-on (node health conditions; see docs/health.md)."""
    aws_profile: str = ""
    """The stack's aws:profile: the kubeconfig runs `aws eks get-token --profile` with it (empty: the environment's)."""
    assume_role_arn: str = ""
    """The role the AWS provider assumes (aws:assumeRoles): the kubeconfig runs `aws eks get-token --role` with it."""
    kubeconfig_env: Mapping[str, str] = field(default_factory=dict)
    """Environment of the kubeconfig's `aws eks get-token` (config.aws_identity.kubeconfig_env)."""

    def problems(self) -> list[Problem]:
        """What EKS would refuse at deploy time: the name, fewer than two private subnets, a tag."""
        return (
            cluster_name_problems(self.name, "ClusterArgs.name")
            + private_subnet_problems(self.private_subnet_ids, "ClusterArgs.private_subnet_ids")
            + tag_problems(self.tags, "ClusterArgs.tags")
        )


def scaling_tier(tier: str) -> pulumi.ResourceTransform:
    """A transform that sets the control-plane scaling tier on pulumi-eks's aws:eks/cluster:Cluster child (resource
    transforms reach the children of packaged components; pulumi-aws 7.51.1 ``controlPlaneScalingConfig.tier``)."""
    if tier not in control_plane.TIERS:
        raise ConfigError(
            Problem("control_plane_tier", tier, f"one of {', '.join(control_plane.TIERS)}", "pick a tier EKS offers")
        )

    def transform(args: pulumi.ResourceTransformArgs) -> pulumi.ResourceTransformResult | None:
        if args.type_ != "aws:eks/cluster:Cluster":
            return None
        return pulumi.ResourceTransformResult({**args.props, "controlPlaneScalingConfig": {"tier": tier}}, args.opts)

    return transform


@checked_component
class Cluster(pulumi.ComponentResource):
    """An EKS cluster with API access entries, encrypted secrets, OIDC, managed add-ons and a system node group."""

    eks: eks.Cluster
    name: pulumi.Output[str]
    endpoint: pulumi.Output[str]
    certificate_authority: pulumi.Output[str]
    service_cidr: pulumi.Output[str]
    security_group_id: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    provider: k8s.Provider | None
    system_node_group: aws.eks.NodeGroup
    coredns: aws.eks.Addon
    core: ClusterCoreData
    """What node groups need from this cluster."""

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
        logs = control_plane_log_group(name, args.name, args.log_retention_days, tags, self) if args.log_types else None

        def version(addon: str, override: str) -> str:
            return addons.addon_version(addon, override, args.kubernetes_version)

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
            # pulumi-eks hands it to its aws.eks.Cluster (nodejs/eks/cluster/cluster.ts:743 at v4.3.0).
            deletion_protection=args.deletion_protection,
            skip_default_node_group=True,
            # Otherwise pulumi-eks adds its own cluster security group (plus an internet egress rule) and a node
            # security group nothing uses; the control plane and every node keep the EKS-created cluster
            # security group (self.security_group_id). pulumi-eks nodejs/eks/cluster/cluster.ts.
            skip_default_security_groups=True,
            create_instance_role=False,
            # Off: GB200 runs on capacity-block node groups Auto Mode does not manage (docs/health.md, "EKS Auto Mode").
            auto_mode=eks.AutoModeOptionsArgs(enabled=False),
            enabled_cluster_log_types=list(args.log_types),
            encryption_config_key_arn=key.arn,
            create_oidc_provider=args.create_oidc_provider,
            # pulumi-eks merges these env values over its own (nodejs/eks/addons/cni-addon.ts:539-556 at v4.3.0).
            vpc_cni_options=eks.VpcCniOptionsArgs(
                addon_version=version(addons.VPC_CNI, args.addons.vpc_cni) or None,
                configuration_values=network.configuration_values(args.pod_ips_per_node),
            ),
            # CoreDNS is a Deployment: its add-on reaches ACTIVE only once pods run, and everything that waits for
            # this component waits for all its children. Declared below, after the system node group, instead.
            coredns_addon_options=eks.CoreDnsAddonOptionsArgs(enabled=False),
            kube_proxy_addon_options=eks.KubeProxyAddonOptionsArgs(
                enabled=True, version=version(addons.KUBE_PROXY, args.addons.kube_proxy) or None
            ),
            tags={**tags, PUBLIC_ENDPOINT_FROM_ANYWHERE: "true"} if args.public_endpoint_from_anywhere else tags,
            opts=pulumi.ResourceOptions(
                parent=self,
                depends_on=[logs] if logs else [],
                transforms=[scaling_tier(args.control_plane_tier)]
                if args.control_plane_tier != control_plane.STANDARD
                else None,
            ),
        )
        aws_cluster = self.eks.eks_cluster
        self.name = aws_cluster.name
        self.endpoint = aws_cluster.endpoint
        self.certificate_authority = aws_cluster.certificate_authority.apply(lambda ca: ca.data)
        self.service_cidr = aws_cluster.kubernetes_network_config.apply(lambda c: c.service_ipv4_cidr)
        # The security group EKS attaches to the control plane and to nodes without custom groups.
        self.security_group_id = aws_cluster.vpc_config.apply(lambda c: c.cluster_security_group_id)
        # pulumi-eks's kubeconfigJson carries neither the stack's aws:profile nor a role (v4.3.0
        # nodejs/eks/cluster/cluster.ts:908-912 and 1275: the exported kubeconfig is the one without the profile;
        # :2166 kubeconfigJson; pulumi/pulumi-eks#1426, #669), so the providers would run `aws eks get-token` as
        # whoever the environment names and get 401 from every release. getKubeconfig (:2324-2335) takes both.
        made = self.eks.get_kubeconfig(profile_name=args.aws_profile or None, role_arn=args.assume_role_arn or None)
        env = dict(args.kubeconfig_env)
        scoped = made.apply(lambda text: scoped_kubeconfig_text(text, "", "", env))
        self.kubeconfig = pulumi.Output.secret(scoped if env else made)
        deployer_rules = self._deployer_https(name, args, tags)
        entries = self._access_entries(name, args, tags)
        agent = self._addon(
            f"{name}-pod-identity-agent",
            addons.POD_IDENTITY_AGENT,
            version(addons.POD_IDENTITY_AGENT, args.addons.pod_identity_agent),
            tags,
            child,
        )
        # A provider is only declared where the deployer reaches the API server (docs/deploy.md "Reachability").
        self.provider = (
            k8s.Provider(
                f"{name}-k8s",
                kubeconfig=self.kubeconfig,
                # Its Helm releases run as the deployer: a listed admin's entry must be there first.
                opts=pulumi.ResourceOptions(parent=self, depends_on=[*deployer_rules, *entries]),
            )
            if args.kubernetes_provider
            else None
        )
        node_prerequisites = [agent, self._vpc_cni_identity(name, tags)]

        role = NodeRole(f"{name}-system", NodeRoleArgs(tags=tags), opts=child)
        lt_args = system_launch_template_args(args.system_node_group.disk_size_gib, tags)
        template = aws.ec2.LaunchTemplate(
            f"{name}-system", description="System nodes: IMDSv2, encrypted root", **lt_args, opts=child
        )
        self.system_node_group = aws.eks.NodeGroup(
            f"{name}-system",
            cluster_name=self.name,
            node_group_name_prefix=f"{args.name}-system-",
            node_role_arn=role.role.arn,
            subnet_ids=list(args.private_subnet_ids),
            ami_type=args.system_node_group.ami_type,
            capacity_type="ON_DEMAND",
            instance_types=[args.system_node_group.instance_type],
            launch_template=aws.eks.NodeGroupLaunchTemplateArgs(
                id=template.id, version=template.latest_version.apply(str)
            ),
            scaling_config=aws.eks.NodeGroupScalingConfigArgs(
                desired_size=args.system_node_group.desired_size,
                min_size=args.system_node_group.min_size,
                max_size=args.system_node_group.max_size,
            ),
            update_config=aws.eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
            labels=system_node_labels(),
            tags=tags,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[role, *node_prerequisites]),
        )
        # The managed add-on adopts the CoreDNS EKS bootstrapped (OVERWRITE) once there are nodes to run it on
        # (pulumi/pulumi-eks #1819, #1525: the add-on waits for ACTIVE, which needs scheduled pods).
        after_system_nodes = pulumi.ResourceOptions(parent=self, depends_on=[self.system_node_group])
        coredns = version(addons.COREDNS, args.addons.coredns)
        self.coredns = self._addon(f"{name}-coredns", addons.COREDNS, coredns, tags, after_system_nodes)
        self.core = ClusterCoreData(
            name=self.name,
            endpoint=self.endpoint,
            certificate_authority=self.certificate_authority,
            service_cidr=self.service_cidr,
            security_group_id=self.security_group_id,
            kubernetes_version=args.kubernetes_version,
            node_prerequisites=node_prerequisites,
        )
        if args.node_monitoring_agent:
            # A DaemonSet: like the other node-needing add-ons it waits for the system nodes.
            monitoring = version(addons.NODE_MONITORING_AGENT, "")
            self._addon(
                f"{name}-node-monitoring-agent", addons.NODE_MONITORING_AGENT, monitoring, tags, after_system_nodes
            )
        self.register_outputs({"name": self.name, "endpoint": self.endpoint, "kubeconfig": self.kubeconfig})

    def _access_entries(self, name: str, args: ClusterArgs, tags: Mapping[str, str]) -> list[pulumi.Resource]:
        """One entry per principal, named after it, each with its cluster-scoped policy association.

        Declared here rather than through pulumi-eks's accessEntries, which named them
        ``<cluster>-<key>`` under the eks:index:Cluster component with the association ``<entry>-<policy>`` under
        the entry (pulumi/pulumi-eks nodejs/eks/cluster/authenticationMode.ts:178-212 at v4.3.0). The aliases name
        what pulumi-eks made for the same position (admin-<index>, and its association under it), so an existing
        stack adopts them instead of replacing them. Adopting works for a list left in its order for that one
        update: each alias points at one position (docs/deploy.md, Who can reach the cluster).
        """
        made: list[pulumi.Resource] = []
        for spec in access_entry_specs(args.admin_principal_arns, args.preview_principal_arns):
            former, former_association = [], []
            if spec.former_key:
                old = f"{name}-{spec.former_key}"
                former = [pulumi.Alias(name=old, parent=self.eks)]
                old_urn = pulumi.create_urn(old, "aws:eks/accessEntry:AccessEntry", parent=self.eks)
                former_association = [pulumi.Alias(name=f"{old}-{spec.association}", parent=old_urn)]
            entry = aws.eks.AccessEntry(
                f"{name}-{spec.key}",
                cluster_name=self.name,
                principal_arn=spec.principal_arn,
                tags=dict(tags),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[self.eks], aliases=former),
            )
            association = aws.eks.AccessPolicyAssociation(
                f"{name}-{spec.key}-{spec.association}",
                cluster_name=self.name,
                principal_arn=spec.principal_arn,
                policy_arn=spec.policy_arn,
                access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
                opts=pulumi.ResourceOptions(parent=entry, depends_on=[entry], aliases=former_association),
            )
            made += [entry, association]
        return made

    def _deployer_https(self, name: str, args: ClusterArgs, tags: Mapping[str, str]) -> list[pulumi.Resource]:
        """Port 443 on the cluster security group from each deployer source: with a private-only endpoint this group
        is all that admits the deployer (EKS user guide, cluster-endpoint and sec-group-reqs). With
        skipDefaultSecurityGroups, pulumi-eks's own clusterSecurityGroupId output is this same EKS-created group
        (pulumi/pulumi-eks nodejs/eks/cluster/cluster.ts:2196-2197 at v4.3.0 and master 7bf0c1b)."""
        sources = [("cidr", c, {"cidr_ipv4": c}) for c in args.deployer_cidrs] + [
            ("sg", g, {"referenced_security_group_id": g}) for g in args.deployer_security_group_ids
        ]
        return [
            aws.vpc.SecurityGroupIngressRule(
                f"{name}-deployer-https-{kind}-{source.replace('/', '-')}",
                security_group_id=self.security_group_id,
                ip_protocol="tcp",
                from_port=443,
                to_port=443,
                description=f"Kubernetes API from the deployer ({source})",
                tags=dict(tags),
                opts=pulumi.ResourceOptions(parent=self),
                **peer,
            )
            for kind, source, peer in sources
        ]

    def _addon(
        self, name: str, addon: str, version: str, tags: Mapping[str, str], opts: pulumi.ResourceOptions
    ) -> aws.eks.Addon:
        """One EKS managed add-on of this cluster at ``version`` ("": EKS's default), adopting what EKS installed."""
        return aws.eks.Addon(
            name,
            cluster_name=self.name,
            addon_name=addon,
            addon_version=version or None,
            resolve_conflicts_on_create="OVERWRITE",
            tags=dict(tags),
            opts=opts,
        )

    def _vpc_cni_identity(self, name: str, tags: Mapping[str, str]) -> aws.eks.PodIdentityAssociation:
        """The VPC CNI's permissions through EKS Pod Identity instead of on every node role.

        pulumi-eks's VpcCniOptions takes only an IRSA role (serviceAccountRoleArn), so the association is its own
        resource. Nodes wait for it: aws-node cannot assign pod IPs, and the node stays NotReady, without it. The
        agent runs on the host network, so it works before the CNI does (EKS user guide pod-identities).
        """
        child = pulumi.ResourceOptions(parent=self)
        role = aws.iam.Role(
            f"{name}-vpc-cni", assume_role_policy=json.dumps(pod_identity_trust_policy()), tags=dict(tags), opts=child
        )
        policy = aws.iam.RolePolicyAttachment(
            f"{name}-vpc-cni-{CNI_POLICY_ARN.rsplit('/', 1)[-1]}", role=role.name, policy_arn=CNI_POLICY_ARN, opts=child
        )
        return aws.eks.PodIdentityAssociation(
            f"{name}-vpc-cni",
            cluster_name=self.name,
            namespace=VPC_CNI_NAMESPACE,
            service_account=VPC_CNI_SERVICE_ACCOUNT,
            role_arn=role.arn,
            tags=dict(tags),
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy]),
        )
