"""A GB200 cluster from chosen components: its own VPC, EKS, one self-managed u-p6e-gb200x36 UltraServer, GPU software.

Unlike the full platform (ultraserver.platform), it installs no MPI operator and runs no IMEX bandwidth check.
"""

import pulumi
from ultraserver import (
    Cluster,
    ClusterArgs,
    GpuNodeGroup,
    GpuNodeGroupArgs,
    GpuNodeGroupSettings,
    KubernetesLayer,
    KubernetesLayerArgs,
    Network,
    NetworkArgs,
    NetworkSettings,
    SystemNodeGroupSettings,
    ips_needed,
    layout_for,
    plan_subnets,
    summarize_layout,
    system_node_labels,
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
subnets = plan_subnets(
    vpc_cidr, config.require_object("availabilityZones"), {gpu_zone: gpu_ips}, SYSTEM_NODES_MAX, PODS_PER_NODE
)
network = Network(
    f"{name}-net", NetworkArgs(cluster_name=name, settings=NetworkSettings(vpc_cidr=vpc_cidr), subnets=subnets)
)

cluster = Cluster(
    name,
    ClusterArgs(
        name=name,
        vpc_id=network.vpc_id,
        private_subnet_ids=network.private_subnet_ids,
        public_subnet_ids=network.public_subnet_ids,
        admin_principal_arns=config.get_object("adminPrincipalArns") or [],
        system_node_group=SystemNodeGroupSettings(max_size=SYSTEM_NODES_MAX),
    ),
)
# GPU nodes carry the EFA security group: open it to the control plane before they boot.
cluster_rules = network.allow_cluster(cluster.security_group_id)

gpu_nodes = GpuNodeGroup(
    f"{name}-{ULTRASERVER}",
    GpuNodeGroupArgs(
        # What the group is: the same model as a stack file's gpuNodeGroups[] entry, checked by the same rules.
        # Its nodes carry the label ultraserver.io/ultraserver=<name>, by which workloads pick this NVLink domain.
        settings=GpuNodeGroupSettings(
            name=ULTRASERVER,
            availability_zone=gpu_zone,
            mode="self-managed",
            ultraserver_type=ULTRASERVER_TYPE,
            efaLayout=config.get("efaLayout") or "one-per-nci-group",
            capacity_reservation_ids=[config.require("capacityReservationId")],
        ),
        # The wiring: the group reads what it needs from the cluster (name, endpoint, CA and service CIDR for the
        # NodeConfig of self-managed nodes, the cluster security group, the Kubernetes version).
        cluster=cluster,
        subnet_ids=network.gpu_subnet_ids[gpu_zone],
        security_group_ids=[network.efa_security_group.id],
    ),
    opts=pulumi.ResourceOptions(depends_on=cluster_rules),
)

KubernetesLayer(
    f"{name}-k8s",
    KubernetesLayerArgs(
        provider=cluster.provider,
        system_node_selector=system_node_labels(),
        depends_on=[cluster.eks, cluster.system_node_group, cluster.coredns],
        mpi_operator=None,
        imex_check=None,
    ),
)

pulumi.export("clusterName", cluster.name)
pulumi.export("kubeconfig", cluster.kubeconfig)
pulumi.export(
    "gpuNodeGroups", {ULTRASERVER: {"fullSize": gpu_nodes.full_size, "efaDevicesPerNode": gpu_nodes.layout.efa_devices}}
)
