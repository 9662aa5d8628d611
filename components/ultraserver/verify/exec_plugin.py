"""A deadline for a kubeconfig's exec plugin (``aws eks get-token``), the credential source of EKS kubeconfigs.

The Kubernetes Python client runs the plugin and waits for it without a limit (kubernetes/config/exec_provider.py:
``process.communicate()``). A plugin that waits for a login (an AWS SSO session to renew, a prompt no one sees in
CI) never answers, and ``verify`` and ``status`` would hang with no output. So the current context's plugin is run
once here first, with its environment and ``KUBERNETES_EXEC_INFO`` as the client sets them, under a deadline; when
it answers, the client runs it as before (``aws eks get-token`` answers from its cache the second time).
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

EXEC_PLUGIN_SECONDS = 60
"""How long the plugin may take: ``aws eks get-token`` answers in a second or two."""


def merged(documents: Sequence[Any]) -> dict[str, Any]:
    """Kubeconfig documents merged as kubectl merges a $KUBECONFIG list: the first file to set a value wins."""
    result: dict[str, Any] = {"contexts": [], "users": []}
    for document in documents:
        if not isinstance(document, Mapping):
            continue
        result.setdefault("current-context", document.get("current-context"))
        for kind in ("contexts", "users"):
            result[kind] += [e for e in document.get(kind) or [] if isinstance(e, Mapping)]
    return result


def _named(entries: Any, name: Any) -> Mapping[str, Any]:
    found = next((e for e in entries or [] if isinstance(e, Mapping) and e.get("name") == name), {})
    return found if isinstance(found, Mapping) else {}


class ExecPluginSilent(Exception):
    """The kubeconfig's exec plugin gave no answer within the deadline; the text names it and the fix."""


def check_exec_plugin(document: Any, where: str, directory: Path | None = None) -> None:
    """ExecPluginSilent when the current context's exec plugin does not answer within the deadline (whatever it
    answers in time, the client judges)."""
    if not isinstance(document, Mapping):
        return
    context = _named(document.get("contexts"), document.get("current-context")).get("context") or {}
    user_name = context.get("user") if isinstance(context, Mapping) else None
    user = _named(document.get("users"), user_name).get("user") or {}
    plugin = user.get("exec") if isinstance(user, Mapping) else None
    if not isinstance(plugin, Mapping) or not plugin.get("command"):
        return
    command = [str(plugin["command"]), *(str(a) for a in plugin.get("args") or [])]
    extra = {str(e.get("name")): str(e.get("value")) for e in plugin.get("env") or [] if isinstance(e, Mapping)}
    info = {"apiVersion": plugin.get("apiVersion"), "kind": "ExecCredential", "spec": {"interactive": False}}
    environment = {**os.environ, **extra, "KUBERNETES_EXEC_INFO": json.dumps(info)}
    try:
        subprocess.run(  # noqa: S603 - the user's own kubeconfig names the command, as for kubectl
            command,
            env=environment,
            cwd=directory,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=EXEC_PLUGIN_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ExecPluginSilent(
            f"{where}: the exec plugin of user {user_name!r} (`{' '.join(command)}`) gave no credentials within "
            f"{EXEC_PLUGIN_SECONDS} s (one waiting for a login never does); fix: log in first (`aws sso login`, "
            "or run the command by hand), or give it credentials that need no prompt, then rerun"
        ) from None
    except OSError:
        return  # not found or not runnable: the client says so, as before
