"""`preflight`, `status` and `extend` ask AWS as the stack's AWS provider does: its aws:profile, then each of its
aws:assumeRoles in order; `extend` says which account it acts in and refuses one the stack's aws:allowedAccountIds
does not list (so does `status`).

moto answers STS and IAM; every request's SigV4 signature is read for the access key that signed it, so the tests see
which credentials made each call.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.auth import SigV4Auth
from helpers.cli import copy_project, run_main
from moto import mock_aws
from ultraserver.preflight import checks as preflight_checks
from ultraserver.preflight.clients import PreflightAccessError
from ultraserver.status import extend as extend_module
from ultraserver.status import run as run_module

PROFILE, PROFILE_KEY, ENVIRONMENT_KEY = "gb200-prod", "AKIAPROFILEPROFILE01", "AKIAENVIRONMENTKEY01"
ACCOUNT = "123456789012"  # moto's account
TRUST = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":"*"},"Action":"sts:AssumeRole"}]}'
Signed = tuple[str, dict[str, list[str]]]  # (access key, form fields of the request body)


@pytest.fixture
def signed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[list[Signed]]:
    """A machine with two identities (the environment's keys and the profile gb200-prod) and a moto account; the
    list fills with every request the code signs."""
    config = tmp_path / "aws-config"
    config.write_text(f"[profile {PROFILE}]\naws_access_key_id = {PROFILE_KEY}\naws_secret_access_key = secret\n")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(config))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none"))
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", ENVIRONMENT_KEY)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    seen: list[Signed] = []
    original = SigV4Auth.add_auth

    def record(auth: SigV4Auth, request: Any) -> None:
        body = request.body.decode() if isinstance(request.body, bytes) else str(request.body or "")
        seen.append((auth.credentials.access_key, urllib.parse.parse_qs(body)))
        original(auth, request)

    with mock_aws():
        monkeypatch.setattr(SigV4Auth, "add_auth", record)
        yield seen


def roles(*names: str) -> list[str]:
    iam = boto3.client("iam", region_name="us-east-1")
    return [iam.create_role(RoleName=name, AssumeRolePolicyDocument=TRUST)["Role"]["Arn"] for name in names]


def stack(tmp_path: Path, chain: list[str], extra: str = "") -> Path:
    """A project whose stack 'id' is gb200-x72 with aws:profile, aws:assumeRoles and ``extra`` set."""
    project = copy_project(tmp_path / "project")
    shipped = (project / "stacks" / "Pulumi.gb200-x72.yaml").read_text()
    listed = "".join(f"\n    - roleArn: {arn}" for arn in chain)
    identity = f"config:\n  aws:profile: {PROFILE}\n  aws:assumeRoles:{listed}\n{extra}"
    (project / "stacks" / "Pulumi.id.yaml").write_text(shipped.replace("config:\n", identity, 1))
    return project


def assume_calls(seen: list[Signed]) -> list[tuple[str, str]]:
    """(role assumed, key that signed the AssumeRole) per AssumeRole request, in order."""
    return [(form["RoleArn"][0], key) for key, form in seen if form.get("Action") == ["AssumeRole"]]


def command(name: str, project: Path, *extra: str) -> list[str]:
    base = [name, "--stack", "id", "--project-dir", str(project)]
    base += [] if name == "preflight" else ["--now", "2026-12-03T12:00:00Z"]
    return base + (["--group", "nvl72", "--hours", "48", *extra] if name == "extend" else list(extra))


@pytest.fixture
def acting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The caller each command's clients act as, recorded where status and extend start asking AWS."""
    callers: list[str] = []

    def spy(*args: Any) -> Any:
        clients = next(a for a in args if hasattr(a, "sts"))
        callers.append(clients.sts.get_caller_identity()["Arn"])
        raise PreflightAccessError("stopped by the test")  # nothing further is asked

    monkeypatch.setattr(preflight_checks, "run_preflight", spy)
    monkeypatch.setattr(run_module, "run_status", spy)
    monkeypatch.setattr(extend_module, "run_extend", spy)
    return callers


@pytest.mark.parametrize("name", ["preflight", "status", "extend"])
def test_the_stacks_profile_signs_and_its_roles_are_assumed_in_order(
    name: str, signed: list[Signed], acting: list[str], tmp_path: Path
) -> None:
    hop, deployer = roles("Hop", "Deployer")
    done = run_main(*command(name, stack(tmp_path, [hop, deployer])))
    assert done.stderr.endswith("stopped by the test\n"), done.stderr
    (first, by_profile), (second, by_hop) = assume_calls(signed)
    assert (first, by_profile) == (hop, PROFILE_KEY)  # the profile's key, not the environment's
    assert second == deployer and by_hop not in (PROFILE_KEY, ENVIRONMENT_KEY)  # signed by Hop's session
    assert acting == [f"arn:aws:sts::{ACCOUNT}:assumed-role/Deployer/ultraserver"]
    assert ENVIRONMENT_KEY not in {key for key, _ in signed}


@pytest.mark.parametrize("name", ["preflight", "status", "extend"])
def test_profile_overrides_the_stacks_profile(
    name: str, signed: list[Signed], acting: list[str], tmp_path: Path
) -> None:
    (hop,) = roles("Hop")
    config = Path(str(tmp_path / "aws-config"))
    config.write_text(
        config.read_text() + "[profile other]\naws_access_key_id = AKIAOTHERPROFILEKEY1\n"
        "aws_secret_access_key = secret\n"
    )
    run_main(*command(name, stack(tmp_path, [hop]), "--profile", "other"))
    assert assume_calls(signed) == [(hop, "AKIAOTHERPROFILEKEY1")]


def test_extend_names_the_account_it_acts_in_before_acting(
    signed: list[Signed], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (deployer,) = roles("Deployer")
    monkeypatch.setattr(extend_module, "run_extend", lambda *_: (["offerings ..."], True))
    done = run_main(*command("extend", stack(tmp_path, [deployer])))
    assert done.code == 0, done.stderr
    assert done.stdout.splitlines()[:2] == [
        f"AWS account {ACCOUNT} (arn:aws:sts::{ACCOUNT}:assumed-role/Deployer/ultraserver)",
        "offerings ...",
    ]


@pytest.mark.parametrize("name", ["preflight", "status", "extend"])
def test_an_account_the_stack_does_not_allow_is_refused_before_any_other_call(
    name: str, signed: list[Signed], acting: list[str], tmp_path: Path
) -> None:
    (deployer,) = roles("Deployer")
    project = stack(tmp_path, [deployer], '  aws:allowedAccountIds: ["111122223333", "444455556666"]\n')
    signed.clear()  # the role's creation
    done = run_main(*command(name, project, "--yes") if name == "extend" else command(name, project))
    assert done.code == 2, done.stdout + done.stderr
    assert re.fullmatch(
        rf"{name}: aws:allowedAccountIds: got the caller arn:aws:sts::{ACCOUNT}:assumed-role/Deployer/ultraserver "
        rf"in account {ACCOUNT}; allowed: credentials of account 111122223333, 444455556666; fix: sign in to that "
        r"account \(--profile, or the stack's aws:profile and aws:assumeRoles\), or correct aws:allowedAccountIds if "
        r"the stack moved \(no other AWS call was made\)\n",
        done.stderr,
    ), done.stderr
    assert acting == []  # neither preflight's checks, the status reads nor extend's purchase and moves ran
    assert [form["Action"][0] for _, form in signed] == ["AssumeRole", "GetCallerIdentity"]


def test_an_allowed_account_goes_ahead(signed: list[Signed], acting: list[str], tmp_path: Path) -> None:
    (deployer,) = roles("Deployer")
    project = stack(tmp_path, [deployer], f'  aws:allowedAccountIds: ["{ACCOUNT}"]\n')
    run_main(*command("extend", project, "--yes"))
    assert acting == [f"arn:aws:sts::{ACCOUNT}:assumed-role/Deployer/ultraserver"]
