"""A kubeconfig whose `aws eks get-token` runs as the stack's AWS identity (its aws:profile, its assumed role, and
the settings the AWS CLI reads from its environment: shared files, a web identity role).

EKS answers only principals with an access entry; a token minted by whatever credentials the environment holds
gets 401. pulumi-eks writes the identity as ``--role <arn>`` and ``--profile <name>`` arguments of the exec user
(v4.3.0 nodejs/eks/cluster/cluster.ts:228-237, generateKubeconfig), so this does the same to a kubeconfig read from
another stack's output.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

ROLE_FLAGS = ("--role", "--role-arn")
PROFILE_FLAG = "--profile"


def _without(args: Sequence[str], flags: Sequence[str]) -> list[str]:
    """``args`` without each of ``flags`` and the value after it."""
    kept: list[str] = []
    skip = False
    for arg in args:
        if skip:
            skip = False
        elif arg in flags:
            skip = True
        else:
            kept.append(arg)
    return kept


def _get_token_exec(user: Any) -> dict[str, Any] | None:
    """The user's exec settings when it runs `aws eks get-token`, else None."""
    exec_config = (user.get("user") or {}).get("exec") if isinstance(user, dict) else None
    if not isinstance(exec_config, dict) or str(exec_config.get("command", "")).rsplit("/", 1)[-1] != "aws":
        return None
    return exec_config if "get-token" in (exec_config.get("args") or []) else None


def scoped_kubeconfig(
    kubeconfig: Mapping[str, Any], profile: str, role_arn: str, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """A copy of ``kubeconfig`` whose `aws eks get-token` users assume ``role_arn`` and use ``profile`` (each when
    given, replacing the one there) with ``env`` in their environment (config.aws_identity.kubeconfig_env: each
    variable replacing one of the same name); other users (tokens, certificates, other commands) are left alone."""
    scoped = copy.deepcopy(dict(kubeconfig))
    for user in scoped.get("users") or []:
        exec_config = _get_token_exec(user)
        if exec_config is None:
            continue
        args = list(exec_config.get("args") or [])
        if role_arn:
            args = [*_without(args, ROLE_FLAGS), "--role", role_arn]
        if profile:
            args = [*_without(args, (PROFILE_FLAG,)), PROFILE_FLAG, profile]
        exec_config["args"] = args
        if env:
            kept = [e for e in exec_config.get("env") or [] if not (isinstance(e, dict) and e.get("name") in env)]
            exec_config["env"] = kept + [{"name": name, "value": value} for name, value in env.items()]
    return scoped


def scoped_kubeconfig_text(value: Any, profile: str, role_arn: str, env: Mapping[str, str] | None = None) -> str:
    """``scoped_kubeconfig`` of a kubeconfig given as JSON text or as a mapping (a stack output may be either), as
    JSON text; text that is not JSON (a YAML kubeconfig someone exported by hand) is returned as it is."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(scoped_kubeconfig(value, profile, role_arn, env))
