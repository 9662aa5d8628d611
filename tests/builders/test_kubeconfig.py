"""scoped_kubeconfig: the `aws eks get-token` user runs as the stack's profile and role; nothing else changes."""

from __future__ import annotations

import json

from ultraserver.builders.kubeconfig import scoped_kubeconfig, scoped_kubeconfig_text

ROLE = "arn:aws:iam::123456789012:role/Deployer"


def config(*users: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Config", "users": list(users)}


def aws_user(*extra: str) -> dict:
    args = ["--region", "us-east-1", "eks", "get-token", "--cluster-name", "c", *extra]
    return {"name": "aws", "user": {"exec": {"command": "aws", "args": args}}}


def test_profile_and_role_replace_the_ones_there() -> None:
    given = config(aws_user("--role-arn", "arn:aws:iam::123456789012:role/Old", "--profile", "old"))
    scoped = scoped_kubeconfig(given, "new", ROLE)
    args = scoped["users"][0]["user"]["exec"]["args"]
    assert args == [
        "--region",
        "us-east-1",
        "eks",
        "get-token",
        "--cluster-name",
        "c",
        "--role",
        ROLE,
        "--profile",
        "new",
    ]
    assert given["users"][0]["user"]["exec"]["args"][-1] == "old", "the input is not changed"


def test_empty_identity_keeps_what_is_there() -> None:
    given = config(aws_user("--profile", "kept"))
    assert scoped_kubeconfig(given, "", "") == given


def test_other_users_are_left_alone() -> None:
    token = {"name": "t", "user": {"token": "abc"}}
    other = {"name": "o", "user": {"exec": {"command": "aws-iam-authenticator", "args": ["token", "-i", "c"]}}}
    given = config(token, other)
    assert scoped_kubeconfig(given, "p", ROLE) == given


def test_env_replaces_variables_of_the_same_name_and_keeps_the_others() -> None:
    user = aws_user()
    user["user"]["exec"]["env"] = [{"name": "AWS_CONFIG_FILE", "value": "/old"}, {"name": "KEEP", "value": "1"}]
    scoped = scoped_kubeconfig(config(user), "", "", {"AWS_CONFIG_FILE": "/new", "AWS_ROLE_ARN": ROLE})
    assert scoped["users"][0]["user"]["exec"]["env"] == [
        {"name": "KEEP", "value": "1"},
        {"name": "AWS_CONFIG_FILE", "value": "/new"},
        {"name": "AWS_ROLE_ARN", "value": ROLE},
    ]
    assert scoped_kubeconfig(config(user), "", "", {}) == config(user)


def test_text_in_json_is_scoped_and_other_text_is_kept() -> None:
    scoped = json.loads(scoped_kubeconfig_text(json.dumps(config(aws_user())), "p", ""))
    assert scoped["users"][0]["user"]["exec"]["args"][-2:] == ["--profile", "p"]
    assert scoped_kubeconfig_text("apiVersion: v1\n", "p", ROLE) == "apiVersion: v1\n"
