"""The emulated Kubernetes API: kmock's stateful server on 127.0.0.1, in a thread of its own, and a kubeconfig for it.

kmock (https://github.com/nolar/kmock, 0.8, MIT) stores objects and serves create, fetch, list, watch, merge-patch
and delete over HTTP, with API discovery. What the day-2 code needs beyond that is added here, as a real API server
would answer it: lists filtered by ``labelSelector`` and ``fieldSelector`` (kmock returns every object of the
resource), the ``pods/<name>/log`` subresource (text, ``tailLines``), the ``pods/<name>/eviction`` subresource
(the pod is deleted; kmock answers 404), an empty list, not 404, for a resource the cluster serves but holds
nothing of (resource.k8s.io ResourceSlices in plugins mode), and 403 Forbidden for the requests a fault forbids (a
verb the caller's role lacks).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import yaml

from ultraserver.rehearse.selectors import field_values, matches

T = TypeVar("T")

SERVED = (
    "v1/nodes",
    "v1/pods",
    "v1/namespaces",
    "v1/events",
    "resource.k8s.io/v1/deviceclasses",
    "resource.k8s.io/v1/resourceslices",
    "resource.k8s.io/v1/resourceclaims",
    "policy/v1/poddisruptionbudgets",
    "batch/v1/jobs",
)
"""Resources every EKS 1.35 cluster serves, listed (possibly empty) before anything is stored in them."""

LOOPBACK = "127.0.0.1"


def plural(kind: str) -> str:
    """The resource name of a kind, as the API's code generators form it (ComputeDomain -> computedomains)."""
    lower = kind.lower()
    if lower.endswith("y") and lower[-2:-1] not in tuple("aeiou"):
        return lower[:-1] + "ies"
    return lower + ("es" if lower.endswith("s") else "s")


def resource_of(obj: Mapping[str, Any]) -> str:
    """kmock's resource key of an object: '<group>/<version>/<plural>', or 'v1/<plural>' for the core group."""
    return f"{obj['apiVersion']}/{plural(obj['kind'])}"


def _forgetful() -> Any:
    """kmock's emulator, forgetting each request once answered. kmock keeps every request for a test's assertions, and
    to know whether a reaction sees a new request it filters all the kept ones (kmock 0.8 kmock/_internal/apps.py
    342-344, kmock/_internal/dsl.py 146 and 402-405): a rehearsal's thousands of requests made each answer slower than
    the last. Nothing here reads them back."""
    import kmock

    class Forgetful(kmock.KubernetesEmulator):
        async def _handle(self, request: Any) -> Any:
            try:
                return await super()._handle(request)
            finally:
                self._requests[:] = [r for r in self._requests if r is not request]

    return Forgetful()


class Emulator:
    """A Kubernetes API on the loopback address; changes go through :meth:`put` and :meth:`remove` (thread-safe)."""

    def __init__(self, forbidden: Iterable[tuple[str, str]] = ()) -> None:
        self.url = ""
        self._forbidden = tuple(forbidden)
        self._logs: dict[tuple[str, str], str] = {}
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="rehearse-api", daemon=True)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._api: Any = None
        self._served: set[str] = set(SERVED)
        self._failure: BaseException | None = None

    def __enter__(self) -> Emulator:
        self._thread.start()
        self._ready.wait()
        if self._failure is not None:
            raise self._failure
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(timeout=10)

    def _serve(self) -> None:
        try:
            asyncio.run(self._main())
        except BaseException as err:  # noqa: BLE001 -- handed to the caller waiting in __enter__
            self._failure = err
            self._ready.set()

    async def _main(self) -> None:
        import kmock

        api = _forgetful()
        for resource in SERVED:
            api.resources[resource] = kmock.ResourceInfo()
        api[kmock.action.LIST] << self._list
        api[kmock.action.FETCH, kmock.resource("v1/pods"), kmock.subresource("log")] << self._log
        api[kmock.method.POST, kmock.resource("v1/pods"), kmock.subresource("eviction")] << self._evict
        for method, resource in self._forbidden:
            api[getattr(kmock.method, method), kmock.resource(resource)] << self._forbid
        async with api, kmock.Server(api, host=LOOPBACK) as server:
            self._api, self._loop, self._stop = api, asyncio.get_running_loop(), asyncio.Event()
            self.url = str(server.url).rstrip("/")
            self._ready.set()
            await self._stop.wait()

    def _list(self, request: Any) -> dict[str, Any]:
        import kmock

        resource = request.resource
        if f"{resource.group}/{resource.version}/{resource.plural}".lstrip("/") not in self._served:
            raise kmock.KubernetesResourceNotFoundError()
        labels, fields = request.params.get("labelSelector", ""), request.params.get("fieldSelector", "")
        items = []
        for (stored, namespace, _), obj in self._api.objects.items():
            if stored != resource or obj.deleted:
                continue
            if request.namespace is not None and namespace != request.namespace:
                continue
            raw = obj.raw
            if not matches(labels, (raw.get("metadata") or {}).get("labels") or {}):
                continue
            if fields and not matches(fields, field_values(raw, fields)):
                continue
            items.append(raw)
        return {"kind": "List", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}, "items": items}

    @staticmethod
    def _forbid(request: Any) -> None:
        """RBAC's refusal, in the words a real API server uses (every time: kmock goes on to the next reaction only
        after one that answers nothing)."""
        import kmock

        resource = request.resource
        raise kmock.KubernetesError(
            403,
            "Forbidden",
            f'{resource.plural}.{resource.group} "{request.name}" is forbidden: the caller cannot '
            f'{request.method.value.lower()} resource "{resource.plural}" in API group "{resource.group}"',
        )

    def _log(self, request: Any) -> str:
        import kmock

        text = self._logs.get((request.namespace, request.name))
        if text is None:
            raise kmock.KubernetesObjectNotFoundError()
        tail = request.params.get("tailLines")
        return "".join(text.splitlines(keepends=True)[-int(tail) :]) if tail else text

    def _evict(self, request: Any) -> dict[str, Any]:
        """An eviction (POST pods/<name>/eviction) deletes the pod: no PodDisruptionBudget is judged here."""
        import kmock

        key = (request.resource, request.namespace, request.name)
        if key not in self._api.objects or self._api.objects[key].deleted:
            raise kmock.KubernetesObjectNotFoundError()
        self._api.objects[key].delete()
        return {"apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Success", "code": 201}

    def _on_loop(self, call: Callable[[], T]) -> T:
        """Run a change on the server's loop, between requests, and wait for it."""
        assert self._loop is not None, "the emulator is not running"

        async def run() -> T:
            return call()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout=30)

    def put(self, objects: Iterable[Mapping[str, Any]]) -> None:
        """Store (or replace) each object, as a controller's create or update would leave it."""

        def store() -> None:
            for obj in objects:
                meta = obj["metadata"]
                self._served.add(resource_of(obj))
                self._api.objects[resource_of(obj), meta.get("namespace"), meta["name"]] = dict(obj)

        self._on_loop(store)

    def serve(self, resources: Iterable[str]) -> None:
        """Serve more resources ('<group>/<version>/<plural>'), as installing their CRDs would: listed, even empty."""
        self._on_loop(lambda: self._served.update(resources))

    def remove(self, obj: Mapping[str, Any]) -> None:
        """Delete an object, as its controller or the node's disappearance would."""
        meta = obj["metadata"]
        self._on_loop(lambda: self._api.objects[resource_of(obj), meta.get("namespace"), meta["name"]].delete())

    def get(self, resource: str, namespace: str | None, name: str) -> dict[str, Any]:
        """The stored object as the API would return it now."""
        return self._on_loop(lambda: dict(self._api.objects[resource, namespace, name].raw))

    def set_log(self, namespace: str, pod: str, text: str) -> None:
        """The log the kubelet would return for a pod's container."""
        self._on_loop(lambda: self._logs.__setitem__((namespace, pod), text))

    def kubeconfig(self, directory: Path) -> Path:
        """A kubeconfig for this API in ``directory`` (plain HTTP on loopback, a placeholder token)."""
        document = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "rehearsal", "cluster": {"server": self.url}}],
            "users": [{"name": "rehearsal", "user": {"token": "rehearsal"}}],
            "contexts": [{"name": "rehearsal", "context": {"cluster": "rehearsal", "user": "rehearsal"}}],
            "current-context": "rehearsal",
        }
        path = directory / "kubeconfig"
        path.write_text(yaml.safe_dump(document, sort_keys=False))
        return path
