"""The AWS provider's other credential settings reach the kubeconfig's `aws eks get-token` where the AWS CLI can
read them (its environment), and are warned where it cannot; a secret never lands in a kubeconfig."""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers.stacks import ROOT, stack_config
from offline.test_deployer_identity import provider_kubeconfigs, token_args
from ultraserver.config.settings import parse_settings, settings_warnings

ROLE = "arn:aws:iam::123456789012:role/GitHubDeploy"
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
TOKEN_FILE = "/var/run/secrets/eks.amazonaws.com/serviceaccount/token"


def exec_env(kubeconfig: dict) -> dict[str, str]:
    (user,) = kubeconfig["users"]
    return {e["name"]: e["value"] for e in user["user"]["exec"].get("env") or []}


def warnings(overrides: dict[str, Any]) -> dict[str, Any]:
    """The settings warnings of gb200-x72 with ``overrides``, by key."""
    settings = parse_settings({**stack_config("gb200-x72"), **overrides}, stack="gb200-x72")
    return {p.key: p for p in settings_warnings(settings)}


def test_one_shared_config_and_credentials_file_are_carried_as_the_cli_reads_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    overrides = {"aws:sharedConfigFiles": ["/ci/aws/config"], "aws:sharedCredentialsFiles": ["~/ci/credentials"]}
    (kubeconfig,) = provider_kubeconfigs(monkeypatch, ROOT, "gb200-x72", overrides)
    env = exec_env(kubeconfig)
    assert env["AWS_CONFIG_FILE"] == "/ci/aws/config"
    assert env["AWS_SHARED_CREDENTIALS_FILE"] == "~/ci/credentials"
    assert "KUBERNETES_EXEC_INFO" in env, "pulumi-eks's own variable is kept"


def test_several_shared_files_are_warned_and_none_carried(monkeypatch: pytest.MonkeyPatch) -> None:
    overrides = {"aws:sharedConfigFiles": ["/a", "/b"]}
    (kubeconfig,) = provider_kubeconfigs(monkeypatch, ROOT, "gb200-x72", overrides)
    assert "AWS_CONFIG_FILE" not in exec_env(kubeconfig)
    found = warnings(overrides)["aws:sharedConfigFiles"]
    assert found.value == ["/a", "/b"] and "AWS_CONFIG_FILE" in found.allowed and "merge them" in found.fix


def test_the_web_identity_role_is_carried_in_the_variables_the_cli_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    web = {"roleArn": ROLE, "webIdentityTokenFile": TOKEN_FILE, "sessionName": "ci", "duration": "1h"}
    (kubeconfig,) = provider_kubeconfigs(monkeypatch, ROOT, "gb200-x72", {"aws:assumeRoleWithWebIdentity": web})
    env = exec_env(kubeconfig)
    assert (env["AWS_ROLE_ARN"], env["AWS_WEB_IDENTITY_TOKEN_FILE"], env["AWS_ROLE_SESSION_NAME"]) == (
        ROLE,
        TOKEN_FILE,
        "ci",
    )
    assert "--profile" not in token_args(kubeconfig)
    assert "aws:assumeRoleWithWebIdentity" not in warnings({"aws:assumeRoleWithWebIdentity": web})


def test_the_kubernetes_layer_project_carries_them_too(monkeypatch: pytest.MonkeyPatch) -> None:
    overrides = {"aws:assumeRoleWithWebIdentity": {"roleArn": ROLE, "webIdentityTokenFile": TOKEN_FILE}}
    (kubeconfig,) = provider_kubeconfigs(monkeypatch, ROOT / "kubernetes-layer", "gb200-multi", overrides)
    assert exec_env(kubeconfig)["AWS_ROLE_ARN"] == ROLE


def test_web_identity_with_a_profile_is_warned_as_the_cli_ignores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    overrides = {"aws:profile": "p", "aws:assumeRoleWithWebIdentity": {"roleArn": ROLE, "webIdentityTokenFile": "/t"}}
    (kubeconfig,) = provider_kubeconfigs(monkeypatch, ROOT, "gb200-x72", overrides)
    assert "AWS_ROLE_ARN" not in exec_env(kubeconfig)
    found = warnings(overrides)["aws:assumeRoleWithWebIdentity"]
    assert "ignores AWS_ROLE_ARN" in found.allowed and "put role_arn and web_identity_token_file" in found.fix


def test_an_inline_web_identity_token_is_warned_and_never_written(monkeypatch: pytest.MonkeyPatch) -> None:
    overrides = {"aws:assumeRoleWithWebIdentity": {"roleArn": ROLE, "webIdentityToken": SECRET}}
    (kubeconfig,) = provider_kubeconfigs(monkeypatch, ROOT, "gb200-x72", overrides)
    assert SECRET not in json.dumps(kubeconfig)
    found = warnings(overrides)["aws:assumeRoleWithWebIdentity.webIdentityToken"]
    assert SECRET not in str(found) and "set webIdentityTokenFile" in found.fix


@pytest.mark.parametrize("key", ["aws:accessKey", "aws:secretKey", "aws:token"])
def test_static_keys_are_warned_with_the_fix_and_never_written(monkeypatch: pytest.MonkeyPatch, key: str) -> None:
    (kubeconfig,) = provider_kubeconfigs(monkeypatch, ROOT, "gb200-x72", {key: SECRET})
    assert SECRET not in json.dumps(kubeconfig)
    found = warnings({key: SECRET})[key]
    assert SECRET not in str(found.value) and "never written" in found.allowed
    assert "set aws:profile" in found.fix


def test_a_secret_as_the_stack_file_holds_it_is_read_as_set() -> None:
    assert "aws:secretKey" in warnings({"aws:secretKey": {"secure": "v1:AAAA"}})


def test_a_wrong_shape_is_a_clear_error() -> None:
    from ultraserver.problems import ConfigError

    with pytest.raises(ConfigError) as err:
        parse_settings({**stack_config("gb200-x72"), "aws:sharedConfigFiles": "/one/file"}, stack="gb200-x72")
    assert "aws:sharedConfigFiles" in str(err.value)
