"""EKS control-plane logs: the log group EKS writes to and the retention CloudWatch Logs accepts.

EKS sends the enabled control-plane log types to the log group ``/aws/eks/<cluster-name>/cluster`` and creates it,
with no retention, when it does not exist (EKS user guide, "Send control plane logs to CloudWatch Logs",
control-plane-logs.html). Creating the group first, before the cluster, lets the stack set its retention and KMS key;
the Terraform AWS provider documents the same order (website/docs/r/eks_cluster.html.markdown, "Enabling Control Plane
Logging": an aws_cloudwatch_log_group of that name that the cluster depends on).
"""

from __future__ import annotations

RETENTION_DAYS: tuple[int, ...] = (
    1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653,
)  # fmt: skip
"""Values PutRetentionPolicy accepts (botocore `logs` model, retentionInDays documentation; a test reads it)."""
DEFAULT_RETENTION_DAYS = 90
"""The toolkit's default retention of control-plane logs."""
KMS_ACTIONS = ("kms:Encrypt*", "kms:Decrypt*", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:Describe*")
"""What CloudWatch Logs needs of a log group's key (CloudWatch Logs user guide, "Encrypt log data in CloudWatch Logs
using AWS KMS", key policy), granted to the regional service principal for this log group only."""


def log_group_name(cluster_name: str) -> str:
    """The log group EKS writes a cluster's control-plane logs to."""
    return f"/aws/eks/{cluster_name}/cluster"


def logs_principal(region: str) -> str:
    """The CloudWatch Logs service principal of a region."""
    return f"logs.{region}.amazonaws.com"
