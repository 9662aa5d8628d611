"""The whole platform of one stack: network, cluster, GB200 node groups and the Kubernetes layer."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import pulumi

from ultraserver import clock
from ultraserver.arguments import checked, checked_component
from ultraserver.builders.layer_parts import reclaim_drain_args
from ultraserver.builders.node_termination import handler_unscoped_actions
from ultraserver.builders.reclaim_drain import DRAIN_READS, drain_aws_statements
from ultraserver.builders.reclaim_warnings import warning_event_pattern
from ultraserver.config.aws_identity import kubeconfig_env
from ultraserver.config.blocks import StandbyGroup, standby_groups
from ultraserver.config.expiry import group_expired
from ultraserver.config.settings import GpuNodeGroupSettings, Settings
from ultraserver.config.subnets import plan_subnets
from ultraserver.config.views import gpu_ip_needs, needs_termination_handler, node_group_names
from ultraserver.facts.aws import node_termination as nth
from ultraserver.facts.aws.aws_ids import STACK
from ultraserver.resources.alerts import Alerts, AlertsArgs
from ultraserver.resources.cluster import Cluster, ClusterArgs
from ultraserver.resources.event_queue import EventQueue, EventQueueArgs
from ultraserver.resources.gpu_node_group import GpuNodeGroup, GpuNodeGroupArgs
from ultraserver.resources.kubernetes_layer import KubernetesLayer, KubernetesLayerArgs
from ultraserver.resources.network import Network, NetworkArgs


@checked()
@dataclass
class PlatformArgs:
    """Inputs of the Platform component."""

    settings: Settings
    """Validated stack settings."""
    now: datetime | None = None
    """Clock for the Capacity Block windows (which block is current, which scheduled actions lie ahead); UTC now."""


@checked_component
class Platform(pulumi.ComponentResource):
    """Everything one stack declares, wired in dependency order."""

    network: Network
    cluster: Cluster
    gpu_node_groups: dict[str, GpuNodeGroup]
    kubernetes: KubernetesLayer | None
    termination_queue: EventQueue | None
    reclaim_warnings: EventQueue | None
    alerts: Alerts | None

    def __init__(self, name: str, args: PlatformArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        s = args.settings
        net = s.network
        # Plan subnets before declaring anything, so a VPC too small is rejected up front.
        subnets = (
            []
            if net.existing
            else plan_subnets(
                net.vpc_cidr,
                net.availability_zones,
                gpu_ip_needs(s),
                s.system_node_group.max_size,
                net.pods_per_node,
                net.secondary_vpc_cidrs,
                net.local_zone_nat_gateways,
            )
        )
        super().__init__("ultraserver:index:Platform", name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        tags = {STACK: s.stack, **s.cluster.tags}
        self.network = Network(
            f"{s.cluster.name}-net",
            NetworkArgs(cluster_name=s.cluster.name, settings=net, subnets=subnets, tags=tags),
            opts=child,
        )
        self.cluster = Cluster(
            s.cluster.name,
            ClusterArgs(
                name=s.cluster.name,
                vpc_id=self.network.vpc_id,
                private_subnet_ids=self.network.private_subnet_ids,
                public_subnet_ids=self.network.public_subnet_ids,
                kubernetes_version=s.cluster.kubernetes_version,
                control_plane_tier=s.control_plane_tier,
                public_access_cidrs=s.cluster.public_access_cidrs,
                public_endpoint_from_anywhere=s.cluster.allow_public_endpoint_from_anywhere,
                admin_principal_arns=s.cluster.admin_principal_arns,
                preview_principal_arns=s.cluster.preview_principal_arns,
                deployer_cidrs=s.cluster.deployer_cidrs,
                deployer_security_group_ids=s.cluster.deployer_security_group_ids,
                deletion_protection=s.cluster.deletion_protection,
                log_types=s.cluster.log_types,
                log_retention_days=s.cluster.log_retention_days,
                create_oidc_provider=s.cluster.irsa,
                pod_ips_per_node=s.network.gpu_pods_per_node,
                addons=s.addons,
                system_node_group=s.system_node_group,
                node_monitoring_agent=s.health.node_monitoring_agent,
                tags=tags,
                kubernetes_provider=s.kubernetes.layer == "same-stack",
                aws_profile=s.aws_profile,
                assume_role_arn=s.deployer_role_arn,
                kubeconfig_env=kubeconfig_env(s),
            ),
            opts=child,
        )
        cluster_rules = self.network.allow_cluster(self.cluster.security_group_id)
        # Self-managed groups drain through the Node Termination Handler (queue mode) before scale-in or block end.
        self.termination_queue = None
        if needs_termination_handler(s):
            self.termination_queue = self._event_queue(
                f"{s.cluster.name}-termination",
                "ultraserver:index:NodeTerminationQueue",
                EventQueueArgs(
                    cluster_name=self.cluster.name,
                    namespace=nth.NAMESPACE,
                    service_account=nth.SERVICE_ACCOUNT,
                    rules=nth.EVENT_PATTERNS,
                    label="nth",
                    reader="handler",
                    unscoped_actions=handler_unscoped_actions(),
                    message_retention_seconds=nth.MESSAGE_RETENTION_SECONDS,
                    tags=tags,
                ),
            )
        # Capacity Block alerts (on by default with GPU groups): EventBridge rules for the stack's reservations -> SNS.
        self.alerts = None
        if s.alerts_enabled:
            self.alerts = Alerts(
                f"{s.cluster.name}-alerts",
                AlertsArgs(
                    reservation_ids=s.alert_reservation_ids,
                    sns_topic_arn=s.alerts.sns_topic_arn,
                    email_subscriptions=s.alerts.email_subscriptions,
                    tags=tags,
                ),
                opts=child,
            )
        # The drain's warning queue: EC2's expiration warnings start the drain when the stack's window is wrong. Its
        # role also reads EC2's dates of the blocks, scales the cluster's groups and publishes to the alert topic.
        self.reclaim_warnings = None
        drain = reclaim_drain_args(s)
        if drain is not None:
            name = f"{s.cluster.name}-reclaim-warnings"
            self.reclaim_warnings = self._event_queue(
                name,
                "ultraserver:index:ReclaimWarnings",
                EventQueueArgs(
                    cluster_name=self.cluster.name,
                    namespace=drain.namespace,
                    service_account=drain.name,
                    rules={"warn": warning_event_pattern()},
                    label="warn",
                    reader="drain",
                    unscoped_actions=DRAIN_READS,
                    statements=drain_aws_statements(
                        s.cluster.name,
                        self.alerts.topic_arn if self.alerts else None,
                        self.alerts.key.arn if self.alerts and self.alerts.key else None,
                        reboot=any(g.reboot for g in drain.spares),
                    ),
                    # Its one rule and target were named after the component.
                    former_names={f"{name}-warn": name},
                    tags=tags,
                ),
            )
        self.gpu_node_groups = self._gpu_node_groups(s, tags, cluster_rules, args.now)
        # Helm releases need the API server and somewhere to run controllers, not the GPU nodes:
        # GPU node groups and the releases proceed in parallel. With kubernetes.layer separate-stack this program
        # declares nothing in Kubernetes; the kubernetes-layer/ project installs the layer from inside the VPC.
        self.kubernetes = None
        if self.cluster.provider is not None:
            self.kubernetes = KubernetesLayer(
                f"{s.cluster.name}-k8s",
                KubernetesLayerArgs(
                    settings=s,
                    provider=self.cluster.provider,
                    depends_on=[self.cluster.eks, self.cluster.system_node_group, self.cluster.coredns],
                    termination_queue_url=self.termination_queue.queue.url if self.termination_queue else None,
                    warning_queue_url=self.reclaim_warnings.queue.url if self.reclaim_warnings else None,
                    alert_topic_arn=self.alerts.topic_arn if self.alerts else None,
                    now=args.now,
                ),
                opts=child,
            )
        self.register_outputs({"clusterName": self.cluster.name})

    def _gpu_node_groups(
        self, s: Settings, tags: dict[str, str], cluster_rules: list[pulumi.Resource], at: datetime | None
    ) -> dict[str, GpuNodeGroup]:
        """Every GPU node group of the settings that can still launch, by name (``at``: the program's clock)."""
        groups: dict[str, GpuNodeGroup] = {}
        now = at or clock.now()
        for group in s.gpu_node_groups:
            if group_expired(group, now):
                continue  # every block has ended: nothing can launch (config.expiry; the plan warns)
            # Node group n runs the n-th reservation of every block (capacityBlocks) or of capacityReservationIds.
            for position, group_name in enumerate(node_group_names(group)):
                if group.handover == "standby" and group.capacity_blocks:
                    # One group per block, each on its own reservation and schedule (config.blocks.standby_groups).
                    for standby in standby_groups(group, position, group_name, now):
                        groups[standby.name] = self._gpu_node_group(
                            s, group, group_name, position, tags, cluster_rules, at, standby
                        )
                    continue
                groups[group_name] = self._gpu_node_group(s, group, group_name, position, tags, cluster_rules, at)
        return groups

    def _event_queue(self, name: str, former_type: str, args: EventQueueArgs) -> EventQueue:
        """An EventQueue once the cluster exists. Each was its own component type before (``former_type``): the alias
        keeps the deployed queue, rules and role, whose children inherit it (offline/aliases.py)."""
        return EventQueue(
            name,
            args,
            opts=pulumi.ResourceOptions(
                parent=self, depends_on=[self.cluster.eks], aliases=[pulumi.Alias(type_=former_type)]
            ),
        )

    def _gpu_node_group(
        self,
        s: Settings,
        group: GpuNodeGroupSettings,
        name: str,
        position: int,
        tags: dict[str, str],
        after: list[pulumi.Resource],
        now: datetime | None,
        standby: StandbyGroup | None = None,
    ) -> GpuNodeGroup:
        """One capacity-block node group: one UltraServer, or a grouped fleet; with ``standby``, that block's group."""
        return GpuNodeGroup(
            f"{s.cluster.name}-{standby.name if standby else name}",
            GpuNodeGroupArgs(
                settings=group,
                position=position,
                standby=standby.block if standby else None,
                cluster=self.cluster,
                subnet_ids=self.network.gpu_subnet_ids[group.availability_zone],
                security_group_ids=[self.network.efa_security_group.id],
                tags=tags,
                now=now,
            ),
            # Nodes must reach the control plane the moment they boot.
            opts=pulumi.ResourceOptions(parent=self, depends_on=after),
        )
