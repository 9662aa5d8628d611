"""The rehearsal's cluster put into a real kube-apiserver (``rehearse/control_plane.py``) instead of the emulator.

Every object is sent as Pulumi's Kubernetes provider sends it: server-side apply with ``fieldValidation=Strict``,
so an unknown or misspelled field, a value outside an enum and a missing required field are refused (4xx) as they
would be at ``pulumi up``; the refusals are kept, and the rehearsal fails on them. CustomResourceDefinitions go
first and are waited for (Established), then Namespaces and ServiceAccounts, then the rest.

No controller runs beside the API server, so the rehearsal plays the parts it needs, each as its controller or
the kubelet would leave the objects: a ``default`` ServiceAccount in each namespace (the ServiceAccount
controller), a status written through the ``status`` subresource (the kubelet for Nodes and Pods, Kueue for its
Workloads, the disruption controller for PodDisruptionBudgets), the ``node.kubernetes.io/not-ready`` taint that
the TaintNodesByCondition admission plugin puts on a new Node taken off again once the Node is Ready (the node
lifecycle controller), and the pods' logs, served by a stand-in for the kubelet's ``/containerLogs`` endpoint on
the node's InternalIP (loopback), which kube-apiserver proxies ``pods/<name>/log`` to.
"""

from __future__ import annotations

import http.server
import time
import urllib.parse
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from ultraserver.rehearse.control_plane import ApiError, ControlPlane
from ultraserver.rehearse.emulator import LOOPBACK
from ultraserver.rehearse.tls import https_server

MANAGER = "pulumi-kubernetes"
"""The field manager of every apply: the one Pulumi's provider uses for server-side apply."""
ESTABLISHED_WITHIN = 60.0
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
FIRST = {"CustomResourceDefinition": 0, "Namespace": 1, "ServiceAccount": 2}
"""Apply order: what later objects need served or present first."""


@dataclass(frozen=True)
class Refusal:
    """An object the API server refused: which, its answer's status code and message."""

    what: str
    code: int
    message: str

    def __str__(self) -> str:
        return f"{self.what}: HTTP {self.code}: {self.message}"


def describe(obj: Mapping[str, Any]) -> str:
    """``Kind namespace/name`` of an object."""
    meta = obj.get("metadata") or {}
    where = f"{meta['namespace']}/" if meta.get("namespace") else ""
    return f"{obj.get('kind')} {where}{meta.get('name')}"


class _Kubelet(http.server.BaseHTTPRequestHandler):
    server: Any

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        parsed = urllib.parse.urlparse(self.path)
        parts = parsed.path.strip("/").split("/")
        text = None
        if len(parts) == 4 and parts[0] == "containerLogs":
            text = self.server.logs.get((parts[1], parts[2]))
        if text is None:
            self.send_response(404)
            self.end_headers()
            return
        tail = urllib.parse.parse_qs(parsed.query).get("tailLines")
        if tail:
            text = "".join(text.splitlines(keepends=True)[-int(tail[0]) :])
        body = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        """Quiet."""


class RealApi:
    """The rehearsal's cluster in a running control plane; what it refused is in :attr:`refused`."""

    def __init__(self, control_plane: ControlPlane) -> None:
        self.control_plane = control_plane
        self.refused: list[Refusal] = []
        self.logs: dict[tuple[str, str], str] = {}
        self._resources: dict[tuple[str, str], tuple[str, bool]] = {}
        self._with_status: set[tuple[str, str]] = set()
        self._namespaces: set[str] = set()
        self._running = ExitStack()
        self.kubelet_port = 0

    @property
    def url(self) -> str:
        return self.control_plane.url

    def __enter__(self) -> RealApi:
        server = self._running.enter_context(https_server(_Kubelet, self.control_plane.authority, logs=self.logs))
        self.kubelet_port = int(server.server_address[1])
        self._discover()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._running.close()

    def _discover(self) -> None:
        """(apiVersion, kind) -> (collection path prefix, namespaced) for every served resource."""
        call = self.control_plane.call
        found: dict[tuple[str, str], tuple[str, bool]] = {}
        versions = [("v1", "/api/v1")]
        for group in call("GET", "/apis")["groups"]:
            versions += [(v["groupVersion"], f"/apis/{v['groupVersion']}") for v in group["versions"]]
        for api_version, prefix in versions:
            listed = call("GET", prefix)["resources"]
            names = {r["name"] for r in listed}
            for resource in listed:
                if "/" not in resource["name"]:
                    found[api_version, resource["kind"]] = (f"{prefix}/{resource['name']}", resource["namespaced"])
                    if f"{resource['name']}/status" in names:
                        self._with_status.add((api_version, resource["kind"]))
        self._resources = found

    def path(self, obj: Mapping[str, Any]) -> str:
        """The object's own URL path; KeyError when no served resource has its kind."""
        collection, namespaced = self._resources[obj["apiVersion"], obj["kind"]]
        meta = obj["metadata"]
        if namespaced:
            group, _, plural = collection.rpartition("/")
            collection = f"{group}/namespaces/{meta.get('namespace') or 'default'}/{plural}"
        return f"{collection}/{meta['name']}"

    def _apply(self, obj: Mapping[str, Any], suffix: str = "") -> bool:
        query = urllib.parse.urlencode({"fieldManager": MANAGER, "fieldValidation": "Strict", "force": "true"})
        try:
            path = self.path(obj)
        except KeyError:
            served = "no CustomResourceDefinition of the plan or the charts serves it"
            self.refused.append(Refusal(describe(obj), 404, f"{obj['apiVersion']} {obj['kind']}: {served}"))
            return False
        try:
            self.control_plane.call("PATCH", f"{path}{suffix}?{query}", obj, "application/apply-patch+yaml")
        except ApiError as error:
            self.refused.append(
                Refusal(describe(obj) + (f" ({suffix[1:]})" if suffix else ""), error.code, error.message)
            )
            return False
        return True

    def _kubelet_side(self, node: Mapping[str, Any]) -> dict[str, Any]:
        status = dict(node.get("status") or {})
        status.setdefault("addresses", [{"type": "InternalIP", "address": LOOPBACK}])
        status.setdefault("daemonEndpoints", {"kubeletEndpoint": {"Port": self.kubelet_port}})
        return {**node, "status": status}

    def _namespace(self, name: str) -> None:
        """The namespace (when nothing of the plan made it) and its ``default`` ServiceAccount."""
        if not name or name in self._namespaces:
            return
        self._namespaces.add(name)
        self._apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        self._apply({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": name}})

    def put(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """Apply each object (and its status through the ``status`` subresource)."""
        ordered = sorted(objects, key=lambda o: FIRST.get(o["kind"], len(FIRST)))
        crds = [o for o in ordered if o["kind"] == "CustomResourceDefinition"]
        for crd in crds:
            self._apply(crd)
        if crds:
            self._established(crds)
        for obj in ordered[len(crds) :]:
            if obj["kind"] == "Node":
                obj = self._kubelet_side(obj)
            obj = self._scoped(obj)
            namespace = obj["metadata"].get("namespace")
            if namespace:
                self._namespace(namespace)
            # A status goes through its subresource where there is one (the main resource ignores it there).
            subresource = bool(obj.get("status")) and (obj["apiVersion"], obj["kind"]) in self._with_status
            body = {k: v for k, v in obj.items() if k != "status"} if subresource else dict(obj)
            if not self._apply(body):
                continue
            if obj["kind"] == "Namespace":
                self._namespace(obj["metadata"]["name"])
            if subresource:
                self._apply({**body, "status": obj["status"]}, "/status")
            if obj["kind"] == "Node":
                self._ready_node(obj)

    def _scoped(self, obj: Mapping[str, Any]) -> Mapping[str, Any]:
        """The object as a client sends it: no creationTimestamp (the server stamps it), and a cluster-scoped one
        without the namespace a chart's release gave it (Helm and Pulumi drop it too)."""
        known = self._resources.get((obj["apiVersion"], obj["kind"]))
        dropped = {"creationTimestamp"} | ({"namespace"} if known is not None and not known[1] else set())
        return {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k not in dropped}}

    def _ready_node(self, node: Mapping[str, Any]) -> None:
        """Take off the not-ready taint admission added at creation, as the node lifecycle controller does once
        the Node is Ready (it stays on a Node that is not)."""
        ready = [c for c in node["status"].get("conditions") or [] if c["type"] == "Ready"]
        if not ready or ready[0]["status"] != "True":
            return
        path = self.path(node)
        current = self.control_plane.call("GET", path)
        taints = current["spec"].get("taints") or []
        kept = [t for t in taints if t["key"] != NOT_READY_TAINT]
        if kept != taints:
            current["spec"]["taints"] = kept
            self.control_plane.call("PUT", path, current)

    def _established(self, crds: list[Mapping[str, Any]]) -> None:
        """Wait until each CRD is Established and its resources list (a new resource's watch cache answers 429,
        "storage is (re)initializing", for a moment: a controller retries, the rehearsal waits)."""
        deadline = time.monotonic() + ESTABLISHED_WITHIN
        for crd in crds:
            path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
            while time.monotonic() < deadline:
                try:
                    conditions = self.control_plane.call("GET", path).get("status", {}).get("conditions") or []
                except ApiError:
                    break  # refused: already recorded
                if any(c["type"] == "Established" and c["status"] == "True" for c in conditions):
                    break
                time.sleep(0.2)
        self._discover()
        lists = [
            f"/apis/{crd['spec']['group']}/{version['name']}/{crd['spec']['names']['plural']}"
            for crd in crds
            for version in crd["spec"].get("versions") or []
            if version.get("served")
        ]
        for collection in lists:
            while time.monotonic() < deadline:
                try:
                    self.control_plane.call("GET", f"{collection}?limit=1")
                    break
                except ApiError as error:
                    if error.code != 429:
                        break
                time.sleep(0.2)

    def serve(self, resources: Iterable[str]) -> None:
        """Nothing to do: a real API server serves what its CRDs define."""

    def remove(self, obj: Mapping[str, Any]) -> None:
        """Delete an object at once (no kubelet is there to finish a graceful deletion)."""
        self.control_plane.call("DELETE", self.path(obj), {"gracePeriodSeconds": 0})

    def get(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """The object as the API server holds it now."""
        return dict(self.control_plane.call("GET", self.path(obj)))

    def set_log(self, namespace: str, pod: str, text: str) -> None:
        """The log the kubelet stand-in returns for the pod's containers."""
        self.logs[namespace, pod] = text

    def kubeconfig(self, directory: Path) -> Path:
        """The administrator's kubeconfig."""
        return self.control_plane.kubeconfig(directory)

    def version(self) -> dict[str, Any]:
        return self.control_plane.version()
