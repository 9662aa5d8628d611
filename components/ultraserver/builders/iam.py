"""IAM policy documents the components attach, as plain data."""

from __future__ import annotations

from typing import Any

from ultraserver.facts.aws import limits
from ultraserver.facts.aws.permissions import POD_IDENTITY_PRINCIPAL, POD_IDENTITY_TRUST_ACTIONS


def pod_identity_trust_policy() -> dict[str, Any]:
    """Trust policy that lets EKS Pod Identity hand a role to a service account."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": POD_IDENTITY_PRINCIPAL},
                "Action": list(POD_IDENTITY_TRUST_ACTIONS),
            }
        ],
    }


def account_administers(account_id: str, partition: str = "aws") -> dict[str, Any]:
    """The key-policy statement of the default key policy: the account administers the key through IAM (KMS developer
    guide, "Default key policy"); without it only the other statements would govern the key."""
    return {
        "Sid": "AccountAdministers",
        "Effect": "Allow",
        "Principal": {"AWS": f"arn:{partition}:iam::{account_id}:root"},
        "Action": "kms:*",
        "Resource": "*",
    }


def log_group_key_policy(account_id: str, partition: str, region: str, log_group_arn: str) -> dict[str, Any]:
    """Key policy of a log group's KMS key: the account administers it through IAM (the default key policy), and
    CloudWatch Logs of the region may use it for that log group only (its encryption context names the group)."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            account_administers(account_id, partition),
            {
                "Sid": "CloudWatchLogsEncrypts",
                "Effect": "Allow",
                "Principal": {"Service": limits.logs_principal(region)},
                "Action": list(limits.KMS_ACTIONS),
                "Resource": "*",
                "Condition": {"ArnEquals": {"kms:EncryptionContext:aws:logs:arn": log_group_arn}},
            },
        ],
    }
