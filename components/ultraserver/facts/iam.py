"""IAM facts: the AWS managed policies a worker node role needs, and the VPC CNI's own permissions."""

from __future__ import annotations

# Worker nodes need to join the cluster (AmazonEKSWorkerNodePolicy, which also lets the EKS Pod Identity Agent
# call eks-auth:AssumeRoleForPodIdentity) and pull images from ECR. Nothing else: the VPC CNI and workloads get
# their own permissions through EKS Pod Identity. EKS user guide create-node-role: "If you don't use IRSA or
# EKS Pod Identity to give permissions to the VPC CNI pods, then you must provide permissions for the VPC CNI
# on the instance role" (so with Pod Identity the node role goes without them).
NODE_POLICY_ARNS: tuple[str, ...] = (
    "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
)
# What the VPC CNI needs to manage ENIs and IPv4 addresses (EKS user guide cni-iam-role).
CNI_POLICY_ARN = "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"
# The VPC CNI's service account (EKS user guide cni-iam-role: "named aws-node" in kube-system).
VPC_CNI_NAMESPACE = "kube-system"
VPC_CNI_SERVICE_ACCOUNT = "aws-node"
# The principal EKS Pod Identity assumes roles as, and the actions its trust policy allows (EKS user guide
# pod-identities / pod-id-role).
POD_IDENTITY_PRINCIPAL = "pods.eks.amazonaws.com"
POD_IDENTITY_TRUST_ACTIONS: tuple[str, ...] = ("sts:AssumeRole", "sts:TagSession")
# EKS access policies (EKS user guide access-policy-permissions, "aws eks list-access-policies"): cluster admin for
# adminPrincipalArns; read-only for the pull-request preview role (previewPrincipalArns). AmazonEKSViewPolicy's rules
# are the Kubernetes "view" role's kind: reads most objects, not Secrets.
CLUSTER_ADMIN_POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
VIEW_POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy"
