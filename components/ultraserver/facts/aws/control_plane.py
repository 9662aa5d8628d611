"""EKS Provisioned Control Plane: the scaling tiers, and the toolkit's tier for a fleet of GPU nodes.

The tiers are botocore's ``ControlPlaneScalingConfig.tier`` ("Available options are standard, tier-xl, tier-2xl,
tier-4xl, or tier-8xl") and pulumi-aws 7.51.1's ``aws.eks.Cluster.control_plane_scaling_config`` ("Defaults to
`standard`"). pulumi-eks 4.4.0 does not expose it, so the Cluster component sets it on pulumi-eks's child
``aws:eks/cluster:Cluster`` through a resource transform. The EKS guide: Standard mode "dynamically allocates
sufficient control plane capacity to meet your workload needs and is the recommended solution for most use cases";
Provisioned mode is for workloads "requiring very high amounts of control plane capacity" (eks-provisioned-control-
plane page).

Sizing from the fleet is the toolkit's own heuristic, UNVERIFIED against any EKS statement of what each tier holds:
EKS publishes a tier's API request concurrency, pod scheduling rate and database size (DescribeClusterVersions
``controlPlaneScalingTiers``), not a node count. Standard up to 1,000 GPU nodes (the shipped stacks have 9 to 36);
a step up at 1,000, 2,500 and 5,000 nodes, the last being the node count Kubernetes tests a cluster to ("No more than
5,000 nodes", kubernetes.io "Considerations for large clusters"). The 1,000-UltraServer benchmark (18,000 nodes) gets
tier-8xl.

Price: a provisioned tier is billed per cluster-hour on top of the standard $0.10 (facts/kubernetes/eks_versions.py);
the per-tier amounts were in no source read (the EKS pricing page was not in the searched copies): UNVERIFIED. Read
https://aws.amazon.com/eks/pricing/ before a large fleet deploys; `ultraserver plan` prints the tier it chose.
"""

from __future__ import annotations

STANDARD = "standard"
AUTO = "auto"
TIERS = (STANDARD, "tier-xl", "tier-2xl", "tier-4xl", "tier-8xl")
"""The tiers in order of capacity."""
STEPS = (1_000, 2_500, 5_000, 10_000)
"""GPU nodes from which each tier after standard is chosen (the heuristic above)."""
PRICE_NOTE = (
    "a provisioned tier costs more per cluster-hour than standard's $0.10; the amount is UNVERIFIED here "
    "(https://aws.amazon.com/eks/pricing/)"
)


def tier_for(gpu_nodes: int) -> str:
    """The tier for a fleet of GPU nodes."""
    return TIERS[sum(gpu_nodes >= step for step in STEPS)]
