"""The AWS CLI the kubeconfig runs: preflight fails when it is missing or older than EKS needs."""

from __future__ import annotations

import pytest
from ultraserver.preflight import tools
from ultraserver.preflight.report import FAIL, PASS


@pytest.mark.parametrize(
    ("output", "level"),
    [
        ("aws-cli/2.12.3 Python/3.11.6 Linux/6.1 exe/x86_64.ubuntu.22", PASS),
        ("aws-cli/2.12.2 Python/3.11.6 Linux/6.1 exe/x86_64.ubuntu.22", FAIL),
        ("aws-cli/1.27.160 Python/3.11.7 Linux/6.1 botocore/1.29.160", PASS),
        ("aws-cli/1.16.156 Python/3.7 Linux/4.14 botocore/1.12.146", FAIL),
        ("aws-cli/3.0.0 Python/3.13", FAIL),  # a major version EKS does not document
        ("not the aws cli", FAIL),
        (None, FAIL),
    ],
)
def test_aws_cli_versions(output: str | None, level: str) -> None:
    result = tools.check_aws_cli(output)
    assert result.level == level
    if level == FAIL:
        assert result.fix == tools.INSTALL


def test_missing_aws_cli_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tools.shutil, "which", lambda name: None)
    assert tools.aws_cli_version() is None
    assert "no aws on PATH" in tools.check_aws_cli(tools.aws_cli_version()).value
