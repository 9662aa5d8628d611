"""The two APIs a rehearsal can serve its cluster on: the emulator (``--api emulated``, the fast path) or a real
kube-apiserver and etcd (``--api real``), behind one interface for ``rehearse/run.py``.

Both give the day-2 code a kubeconfig and give each in-cluster script a service-account folder (``token``,
``ca.crt``) and the pod's ``KUBERNETES_SERVICE_HOST``/``PORT``. On the emulator every script shares one token of
the HTTPS front (``rehearse/tls.py``); on the real API each gets a token issued for the ServiceAccount its
CronJob runs as, so RBAC judges it.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import urllib.error
import urllib.parse
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ultraserver.rehearse.control_plane import ApiError
from ultraserver.rehearse.emulator import Emulator
from ultraserver.rehearse.stage import Stage
from ultraserver.rehearse.tls import TlsFront

EMULATED = "emulated"
REAL = "real"


@dataclass
class Api:
    """A running API for one rehearsal."""

    kind: str
    served: Any
    """The Emulator or the RealApi the cluster is put into."""
    describe: str
    """How the report's first line names it."""
    in_cluster_url: str
    account: Any
    """(folder, namespace, service account) -> the pod's environment, the folder filled as a pod's mount."""
    seen: list[tuple[str, str, bool]] = field(default_factory=list)
    """The in-cluster scripts' requests (the emulator's front sees them; a real API server keeps no such list)."""
    version: dict[str, Any] = field(default_factory=dict)
    """The API server's /version (a real API only)."""
    notes: list[str] = field(default_factory=list)

    def timed(self, stage: Stage) -> Stage:
        """A stage that judges times the API server stamps (the acceptance reads the launcher pods'
        creationTimestamp); shown, not judged, on a real API server, which stamps them with the machine's clock
        rather than the rehearsal's moment."""
        if self.kind == EMULATED:
            return stage
        note = (
            "not judged on a real API server: it stamps each pod's creationTimestamp with the machine's clock, not "
            "the rehearsal's moment (the emulated tier judges it)"
        )
        return dataclasses.replace(stage, code=0, verdicts=(), judged=False, output=f"{note}\n{stage.output}")

    def refusals(self) -> list[Any]:
        """What the real API server refused of the cluster (never anything on the emulator)."""
        return list(getattr(self.served, "refused", []))


@contextmanager
def emulated(forbidden: Sequence[tuple[str, str]] = ()) -> Iterator[Api]:
    """kmock on loopback, behind the HTTPS front that the in-cluster scripts reach; it answers the ``forbidden``
    requests (method, resource) with 403, as RBAC answers a verb the plan's role lacks."""
    with Emulator(forbidden) as emulator, TlsFront(emulator.url) as front:
        api = Api(
            EMULATED,
            emulator,
            f"an emulated Kubernetes API at {emulator.url}",
            front.url,
            lambda folder, namespace, name: front.service_account(folder),
        )
        api.seen = front.seen
        yield api


@contextmanager
def real(minor: str, directory: Path) -> Iterator[Api]:
    """etcd and kube-apiserver for the stack's Kubernetes minor (the nearest served one, said in a note), built on
    first use into the cache (progress on stderr)."""
    from ultraserver.rehearse.binaries import ensure, programs
    from ultraserver.rehearse.control_plane import ControlPlane
    from ultraserver.rehearse.real_api import RealApi

    wanted, note = programs(minor)
    paths = ensure(wanted, sys.stderr)
    with ExitStack() as running:
        plane = running.enter_context(ControlPlane(paths, directory / "control-plane"))
        served = running.enter_context(RealApi(plane))
        version = plane.version()
        api = Api(
            REAL,
            served,
            f"a real kube-apiserver {version.get('gitVersion')} (etcd {wanted[0].version}) at {plane.url}",
            plane.url,
            plane.service_account,
            version=version,
            notes=[note] if note else [],
        )
        yield api


def open_api(
    kind: str, minor: str, directory: Path, forbidden: Sequence[tuple[str, str]] = ()
) -> AbstractContextManager[Api]:
    """The API of that kind (``emulated`` or ``real``); a real API server refuses what RBAC refuses by itself, the
    emulator the ``forbidden`` requests."""
    return real(minor, directory) if kind == REAL else emulated(forbidden)


def script_account(objects: Sequence[Mapping[str, Any]], variable: str) -> tuple[str, str]:
    """(namespace, ServiceAccount) the plan's CronJob that sets ``variable`` runs as (``default`` when it names
    none, as Kubernetes does)."""
    for obj in objects:
        if obj["kind"] != "CronJob":
            continue
        pod = obj["spec"]["jobTemplate"]["spec"]["template"]["spec"]
        if any(e["name"] == variable for c in pod["containers"] for e in c.get("env") or []):
            return obj["metadata"].get("namespace") or "default", pod.get("serviceAccountName") or "default"
    return "default", "default"


def refusal_stage(refused: Sequence[Any]) -> Stage:
    """What the API server refused of the plan, the charts or the rehearsal's own objects: each would fail
    `pulumi up` (or the controller that writes it) the same way."""
    lines = [f"FAILED {r}" for r in refused]
    lines.append("fix: make the object valid against the API server's schema and the CRDs (fieldValidation=Strict)")
    return Stage("apply (real API)", 1, "\n".join(lines))


def guarded(name: str, stage: Callable[[], Stage]) -> Stage:
    """An in-cluster script's stage; a request the API server refuses (403 from RBAC, 422 from validation) fails
    it, as it fails the CronJob's pod, with the server's answer and the fix."""
    try:
        return stage()
    except ApiError as error:  # the rehearsal's own request for the script's token
        code, where, message = error.code, "the ServiceAccount's token request", error.message
    except urllib.error.HTTPError as error:
        code, where, message = error.code, urllib.parse.urlparse(error.url or "").path, _message(error)
    return Stage(
        name,
        1,
        f"FAILED {name}: the API server answered HTTP {code} to {where}: {message}; fix: "
        + ("grant the verb in the script's ClusterRole" if code == 403 else "send what the API's schema accepts"),
    )


def _message(error: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(error.read().decode(errors="replace")).get("message", ""))
    except ValueError:
        return ""
