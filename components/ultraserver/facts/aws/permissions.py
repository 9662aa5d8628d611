"""IAM: the actions the live commands need (per AWS operation the code calls, and per command), and the managed
policies, principals and access policies the stack's roles and access entries use.

An operation is keyed by botocore's service name and the API operation name (``client.meta.service_model``),
which is what a failed call reports. IAM action names are the Service Authorization Reference's ("Actions,
resources, and condition keys for ...", https://docs.aws.amazon.com/service-authorization/latest/reference/):
for EC2, EKS, SSM, STS and Resource Groups the action is the service prefix plus the API name; Service Quotas'
prefix is ``servicequotas`` (botocore's service name is ``service-quotas``). ec2:PurchaseCapacityBlockExtension is
cross-checked against cloudtools/awacs awacs/ec2.py, generated from that reference; the other names were not
compared with the reference page itself (unverified). None of these actions supports resource-level permissions
that this toolkit relies on: the generated policies use ``"Resource": "*"``.

sts:GetCallerIdentity needs no permission (the STS API reference says so); it is listed because preflight and
extend call it (status too for a stack with aws:allowedAccountIds), and an explicit deny of it still stops them.
``status`` also reads the cluster through the kubeconfig's identity (Kubernetes RBAC: list nodes), which is not an
IAM action of these services.

tests/preflight and tests/status record every operation their Stubber/moto clients are asked and fail when one
is missing from OPERATION_ACTIONS or from the command's COMMAND_ACTIONS.
"""

from __future__ import annotations

OPERATION_ACTIONS: dict[tuple[str, str], str] = {
    ("sts", "GetCallerIdentity"): "sts:GetCallerIdentity",
    ("sts", "AssumeRole"): "sts:AssumeRole",
    ("eks", "DescribeCluster"): "eks:DescribeCluster",
    ("eks", "ListAccessEntries"): "eks:ListAccessEntries",
    ("eks", "DescribeAccessEntry"): "eks:DescribeAccessEntry",
    ("ec2", "DescribeCapacityReservations"): "ec2:DescribeCapacityReservations",
    ("ec2", "DescribeCapacityBlocks"): "ec2:DescribeCapacityBlocks",
    ("ec2", "DescribeCapacityBlockStatus"): "ec2:DescribeCapacityBlockStatus",
    ("ec2", "DescribeCapacityBlockExtensionOfferings"): "ec2:DescribeCapacityBlockExtensionOfferings",
    ("ec2", "PurchaseCapacityBlockExtension"): "ec2:PurchaseCapacityBlockExtension",
    ("ec2", "DescribeAvailabilityZones"): "ec2:DescribeAvailabilityZones",
    ("ec2", "DescribeInstanceTypeOfferings"): "ec2:DescribeInstanceTypeOfferings",
    ("ec2", "DescribeInstanceTypes"): "ec2:DescribeInstanceTypes",
    ("ec2", "DescribeSubnets"): "ec2:DescribeSubnets",
    ("ssm", "GetParameter"): "ssm:GetParameter",
    ("eks", "DescribeClusterVersions"): "eks:DescribeClusterVersions",
    ("eks", "DescribeAddonVersions"): "eks:DescribeAddonVersions",
    ("service-quotas", "GetServiceQuota"): "servicequotas:GetServiceQuota",
    ("resource-groups", "ListGroupResources"): "resource-groups:ListGroupResources",
    ("autoscaling", "DescribeAutoScalingGroups"): "autoscaling:DescribeAutoScalingGroups",
    ("autoscaling", "DescribeScheduledActions"): "autoscaling:DescribeScheduledActions",
    ("autoscaling", "PutScheduledUpdateGroupAction"): "autoscaling:PutScheduledUpdateGroupAction",
}
"""(botocore service name, API operation) -> the IAM action that allows it."""

_READ_RESERVATIONS = (
    "ec2:DescribeCapacityReservations",
    "resource-groups:ListGroupResources",  # groups over a capacity-reservation resource group
)
_READ_BLOCKS = ("ec2:DescribeCapacityBlocks", "ec2:DescribeCapacityBlockStatus")
# Every live command signs as the stack's AWS provider: its aws:profile, then each role of aws:assumeRoles.
_IDENTITY = ("sts:GetCallerIdentity", "sts:AssumeRole")
_EXTEND = (*_IDENTITY, *_READ_RESERVATIONS, "ec2:DescribeCapacityBlockExtensionOfferings")

COMMAND_ACTIONS: dict[str, tuple[str, ...]] = {
    "plan": (),
    "preflight": (
        *_IDENTITY,
        "eks:DescribeCluster",
        "eks:ListAccessEntries",
        "eks:DescribeAccessEntry",
        *_READ_RESERVATIONS,
        *_READ_BLOCKS,
        "ec2:DescribeAvailabilityZones",
        "ec2:DescribeInstanceTypeOfferings",
        "ec2:DescribeInstanceTypes",
        "ec2:DescribeSubnets",
        "ssm:GetParameter",
        "eks:DescribeClusterVersions",
        "eks:DescribeAddonVersions",
        "servicequotas:GetServiceQuota",
    ),
    "status": (*_IDENTITY, *_READ_RESERVATIONS, *_READ_BLOCKS),
    # The user's CI job: the recommended AMI, the EKS calendar and add-on versions (preflight/drift.py).
    "versions --check": ("ssm:GetParameter", "eks:DescribeClusterVersions", "eks:DescribeAddonVersions"),
    "extend": _EXTEND,
    "extend --yes": (
        *_EXTEND,
        "ec2:PurchaseCapacityBlockExtension",
        # After the purchase, the scale-downs tied to the old end move (status/extend_moves.py).
        "autoscaling:DescribeAutoScalingGroups",
        "autoscaling:DescribeScheduledActions",
        "autoscaling:PutScheduledUpdateGroupAction",
    ),
}
"""Every IAM action each command may call (plan runs offline and calls none; extend buys only with --yes)."""


def iam_action(service: str, operation: str) -> str:
    """The IAM action of one operation; ``service:Operation`` for an operation not in the table."""
    return OPERATION_ACTIONS.get((service, operation), f"{service}:{operation}")


def policy_document(command: str) -> dict[str, object]:
    """A least-privilege identity policy for one command (empty Statement for plan)."""
    actions = sorted(set(COMMAND_ACTIONS[command]))
    sid = "Ultraserver" + "".join(word.title() for word in command.replace("-", " ").split())
    statements = [{"Sid": sid, "Effect": "Allow", "Action": actions, "Resource": "*"}] if actions else []
    return {"Version": "2012-10-17", "Statement": statements}


# IAM facts: the AWS managed policies a worker node role needs, and the VPC CNI's own permissions.
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
