"""Access problems stop preflight as a whole with one clear error, before any check runs."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.preflight import (
    NOW,
    REGION,
    closed_port,
    stubbed,
    target,
)
from ultraserver.preflight.checks import run_preflight
from ultraserver.preflight.clients import PreflightAccessError, PreflightClients, make_clients


def test_expired_credentials_raise_access_error() -> None:
    sts, sts_stub = stubbed("sts")
    sts_stub.add_client_error(
        "get_caller_identity",
        service_error_code="ExpiredToken",
        service_message="The security token included in the request is expired",
    )
    ec2, ssm, eks, sq, rg = (stubbed(s)[0] for s in ("ec2", "ssm", "eks", "service-quotas", "resource-groups"))
    clients = PreflightClients(ec2=ec2, ssm=ssm, eks=eks, service_quotas=sq, resource_groups=rg, sts=sts)
    with pytest.raises(PreflightAccessError, match="ExpiredToken"):
        run_preflight(target(), clients, now=NOW)


def test_no_credentials_raise_access_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    for var in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    with pytest.raises(PreflightAccessError, match="no usable AWS credentials"):
        run_preflight(target(), make_clients(REGION, endpoint_url="http://127.0.0.1:9"), now=NOW)


def test_unreachable_endpoint_raises_access_error() -> None:
    clients = make_clients(REGION, endpoint_url=f"http://127.0.0.1:{closed_port()}")
    with pytest.raises(PreflightAccessError, match="cannot reach the AWS endpoint"):
        run_preflight(target(), clients, now=NOW)


def test_unknown_profile_raises_access_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none"))
    with pytest.raises(PreflightAccessError, match="no-such-profile"):
        make_clients(REGION, profile="no-such-profile")
