"""A preflight call the caller's IAM policy denies names the IAM action to grant, not a missing resource."""

from __future__ import annotations

import pytest
from helpers.preflight import IMAGE_PARAM, stubbed, target
from ultraserver.preflight.checks import check_ami
from ultraserver.preflight.clients import ApiFailure, call
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
