"""IAM facts: the AWS managed policies a worker node role needs, and nothing a pod identity can carry."""

from __future__ import annotations

# Worker nodes need to join the cluster, pull images from ECR and let the VPC CNI manage ENIs.
# Nothing else: workloads get their own permissions through Pod Identity.
NODE_POLICY_ARNS: tuple[str, ...] = (
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
    "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
)
