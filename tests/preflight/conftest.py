"""Preflight tests never reach a real account."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.permissions import recorded_operations, unlisted
from helpers.preflight import REGION
from moto import mock_aws


@pytest.fixture(autouse=True)
def fake_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Test credentials only, no profile."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)


@pytest.fixture
def moto() -> Iterator[None]:
    """An in-process moto account."""
    with mock_aws():
        yield


@pytest.fixture(autouse=True)
def iam_actions_listed() -> Iterator[None]:
    """Every AWS operation a preflight test makes the code call is in the preflight row of the IAM table."""
    with recorded_operations() as seen:
        yield
    missing = unlisted(seen, "preflight")
    assert not missing, f"add {missing} to facts/aws/permissions.py (OPERATION_ACTIONS, COMMAND_ACTIONS['preflight'])"
