"""A GB200 cluster from chosen components: its own VPC, EKS, one self-managed u-p6e-gb200x36 UltraServer, GPU software.

One ``Settings`` model describes the stack, as a stack file does for the full platform (ultraserver.Platform); each
component takes its part. Unlike the full platform, it installs no MPI operator, runs no IMEX bandwidth check and
leaves Kueue and the drift check off.
"""

import pulumi
from ultraserver import (
    Cluster,
    ClusterArgs,
    ClusterSettings,
    DriftCheckSettings,
    GpuNodeGroup,
    GpuNodeGroupArgs,
    GpuNodeGroupSettings,
    HealthSettings,
    ImexCheckSettings,
    KubernetesLayer,
    KubernetesLayerArgs,
    KubernetesSettings,
    KueueSettings,
    Network,
    NetworkArgs,
    NetworkSettings,
    Settings,
    SystemNodeGroupSettings,
    ips_needed,
    layout_for,
    plan_subnets,
    summarize_layout,
)

INSTANCE_TYPE = "p6e-gb200.36xlarge"
ULTRASERVER_TYPE = "u-p6e-gb200x36"
GPU_NODES = 9  # instances in one u-p6e-gb200x36
GPU_PODS_PER_NODE = 32
SYSTEM_NODES_MAX = 4
PODS_PER_NODE = 110
ULTRASERVER = "nvl36"

config = pulumi.Config()
name = config.require("clusterName")
vpc_cidr = config.get("vpcCidr") or "10.0.0.0/16"
gpu_zone = config.require("gpuZone")
efa_layout = layout_for(INSTANCE_TYPE, config.get("efaLayout"), None, key="efaLayout")

# Size the GPU subnet for every node's interfaces and pods before anything is declared.
gpu_ips = ips_needed(GPU_NODES, GPU_PODS_PER_NODE, summarize_layout(INSTANCE_TYPE, efa_layout).ena_interfaces)
zones = config.require_object("availabilityZones")
subnets = plan_subnets(vpc_cidr, zones, {gpu_zone: gpu_ips}, SYSTEM_NODES_MAX, PODS_PER_NODE)

# The stack as one model, checked by the same rules as a stack file; each component below takes its part.
settings = Settings(
    region=pulumi.Config("aws").require("region"),
    # The program installs the Kubernetes layer itself, so the API endpoint must be reachable from where it runs.
    cluster=ClusterSettings(
        name=name,
        admin_principal_arns=config.get_object("adminPrincipalArns") or [],
        public_access_cidrs=config.require_object("publicAccessCidrs"),
    ),
    network=NetworkSettings(vpc_cidr=vpc_cidr, availability_zones=zones),
    system_node_group=SystemNodeGroupSettings(max_size=SYSTEM_NODES_MAX),
    # What the group is: a stack file's gpuNodeGroups[] entry. Its nodes carry the label
    # ultraserver.io/ultraserver=<name>, by which workloads pick this NVLink domain.
    gpu_node_groups=[
        GpuNodeGroupSettings(
            name=ULTRASERVER,
            availability_zone=gpu_zone,
            mode="self-managed",
            ultraserver_type=ULTRASERVER_TYPE,
            efaLayout=config.get("efaLayout") or "one-per-nci-group",
            capacity_reservation_ids=[config.require("capacityReservationId")],
        )
    ],
    # The Kubernetes layer's choices: no IMEX check (it needs the MPI operator), no Kueue, no drift check.
    imex_check=ImexCheckSettings(enabled=False),
    kubernetes=KubernetesSettings(kueue=KueueSettings(enabled=False)),
    health=HealthSettings(drift_check=DriftCheckSettings(enabled=False)),
)

network = Network(f"{name}-net", NetworkArgs(cluster_name=name, settings=settings.network, subnets=subnets))

cluster = Cluster(
    name,
    ClusterArgs(
        name=name,
        vpc_id=network.vpc_id,
        private_subnet_ids=network.private_subnet_ids,
        public_subnet_ids=network.public_subnet_ids,
        admin_principal_arns=settings.cluster.admin_principal_arns,
        public_access_cidrs=settings.cluster.public_access_cidrs,
        system_node_group=settings.system_node_group,
    ),
)
# GPU nodes carry the EFA security group: open it to the control plane before they boot.
cluster_rules = network.allow_cluster(cluster.security_group_id)

gpu_nodes = GpuNodeGroup(
    f"{name}-{ULTRASERVER}",
    GpuNodeGroupArgs(
        settings=settings.gpu_node_groups[0],
        # The wiring: the group reads what it needs from the cluster (name, endpoint, CA and service CIDR for the
        # NodeConfig of self-managed nodes, the cluster security group, the Kubernetes version).
        cluster=cluster,
        subnet_ids=network.gpu_subnet_ids[gpu_zone],
        security_group_ids=[network.efa_security_group.id],
    ),
    opts=pulumi.ResourceOptions(depends_on=cluster_rules),
)

# The layer derives its releases' values, device mode and checks from the settings; a self-managed group would also
# need termination_queue_url (the Node Termination Handler's queue), which this example leaves to the full platform.
KubernetesLayer(
    f"{name}-k8s",
    KubernetesLayerArgs(
        settings=settings,
        provider=cluster.provider,
        depends_on=[cluster.eks, cluster.system_node_group, cluster.coredns],
        mpi_operator=False,
    ),
)

pulumi.export("clusterName", cluster.name)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export(
    "gpuNodeGroups", {ULTRASERVER: {"fullSize": gpu_nodes.full_size, "efaDevicesPerNode": gpu_nodes.layout.efa_devices}}
)
