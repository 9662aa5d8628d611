"""The account part of an ARN, as the caller-account check and the queue-sender rule read it."""

from __future__ import annotations

import pytest
from ultraserver.config.aws_identity import caller_account
from ultraserver.facts.aws.aws_ids import arn_account


@pytest.mark.parametrize(
    ("arn", "account"),
    [
        ("arn:aws:sts::111122223333:assumed-role/deployer/session", "111122223333"),
        ("arn:aws:events:us-east-1:*:rule/r", "*"),
        ("arn:aws:s3:::bucket/key:with:colons", ""),
        ("arn:aws:iam::111122223333", None),
        ("not an arn", None),
    ],
)
def test_arn_account(arn: str, account: str | None) -> None:
    assert arn_account(arn) == account


def test_caller_account_falls_back_to_the_text_it_cannot_split() -> None:
    assert caller_account("arn:aws:iam::111122223333:user/ops") == "111122223333"
    assert caller_account("unknown") == "unknown"
