"""A preflight call the caller's IAM policy denies names the IAM action to grant, not a missing resource."""

from __future__ import annotations

import pytest
from helpers.preflight import IMAGE_PARAM, REGION, stubbed, target
from ultraserver.preflight.checks import check_ami
from ultraserver.preflight.clients import ApiFailure, call, make_clients
from ultraserver.preflight.report import FAIL


def test_denied_ssm_parameter_is_not_reported_as_missing() -> None:
    ssm, stub = stubbed("ssm")
    stub.add_client_error("get_parameter", service_error_code="AccessDeniedException", http_status_code=400)
    [result] = check_ami(target(ami_ssm_parameter=IMAGE_PARAM), ssm)
    assert result.level == FAIL
    assert "does not resolve" not in result.value
    assert result.fix.startswith("grant ssm:GetParameter ")


def test_a_denied_call_names_the_iam_action_not_the_botocore_service() -> None:
    quotas, stub = stubbed("service-quotas")
    stub.add_client_error("get_service_quota", service_error_code="AccessDeniedException", http_status_code=400)
    with pytest.raises(ApiFailure) as failure:
        call(quotas, "get_service_quota", ServiceCode="eks", QuotaCode="L-6D54EA21")
    assert failure.value.fix.startswith("grant servicequotas:GetServiceQuota ")


def test_a_throttled_call_says_so_and_clients_retry_it() -> None:
    ec2, stub = stubbed("ec2")
    stub.add_client_error("describe_subnets", service_error_code="RequestLimitExceeded", http_status_code=503)
    with pytest.raises(ApiFailure) as failure:
        call(ec2, "describe_subnets", SubnetIds=["subnet-0123456789abcdef0"])
    assert failure.value.fix.startswith("AWS throttled ec2:DescribeSubnets after 3 attempts")
    # The Stubber answers before botocore's retry handler; the real clients retry in standard mode.
    retries = make_clients(REGION).ec2.meta.config.retries
    assert (retries["mode"], retries["total_max_attempts"]) == ("standard", 3)
