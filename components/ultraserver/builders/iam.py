"""IAM policy documents the components attach, as plain data."""

from __future__ import annotations

from typing import Any

from ultraserver.facts.iam import POD_IDENTITY_PRINCIPAL, POD_IDENTITY_TRUST_ACTIONS


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
