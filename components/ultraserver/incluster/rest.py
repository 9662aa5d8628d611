"""The reclaim drain's REST calls (standard library only, mounted beside ``drain_main.py``): the ``Api`` the drain
calls, ``RestApi`` over one HTTP call whose errors carry the status, and the GB200 nodes every in-cluster step reads.
``drain_main.StdlibApi`` speaks it with urllib, ``status.drain`` over the official client."""

from __future__ import annotations

from typing import Any, Protocol

try:
    from ultraserver.incluster.copied_facts import ULTRASERVER_LABEL as GROUP_LABEL
except ImportError:  # in the cluster: the mounted directory is on sys.path
    from copied_facts import ULTRASERVER_LABEL as GROUP_LABEL  # type: ignore[no-redef]


class Api(Protocol):
    """The drain's REST calls (``StdlibApi`` below, ``status.drain`` over the official client): ``patch`` is a JSON
    merge patch, ``post`` False on a 429 (an eviction a budget blocks), ``delete`` takes a 404 as done."""

    def get(self, path: str) -> dict[str, Any]: ...
    def patch(self, path: str, body: dict[str, Any]) -> None: ...
    def post(self, path: str, body: dict[str, Any]) -> bool: ...
    def delete(self, path: str) -> None: ...


class RestApi:
    """``Api`` over one ``_call(method, path, body, content type)`` whose errors carry the HTTP status (urllib's
    ``code``, the official client's ``status``): a refused eviction (429) is False, a gone pod's delete (404) done."""

    def _call(self, method: str, path: str, body: Any = None, content: str = "application/json") -> Any:
        raise NotImplementedError

    def get(self, path: str) -> dict[str, Any]:
        return self._call("GET", path)

    def patch(self, path: str, body: dict[str, Any]) -> None:
        self._call("PATCH", path, body, "application/merge-patch+json")

    def post(self, path: str, body: dict[str, Any]) -> bool:
        try:
            self._call("POST", path, body)
        except Exception as err:
            if (getattr(err, "code", None) or getattr(err, "status", None)) == 429:
                return False
            raise
        return True

    def delete(self, path: str) -> None:
        try:
            self._call("DELETE", path)
        except Exception as err:
            if (getattr(err, "code", None) or getattr(err, "status", None)) != 404:
                raise


def items(api: Api, path: str) -> list[dict[str, Any]]:
    return list(api.get(path).get("items") or [])


def gpu_nodes(api: Api) -> list[dict[str, Any]]:
    """The GB200 nodes (those carrying GROUP_LABEL), which the drain and the checks at each join both read."""
    return items(api, f"/api/v1/nodes?labelSelector={GROUP_LABEL}")


def status_of(error: BaseException) -> int | None:
    """The HTTP status an error carries (urllib's ``code``, the official client's and ``aws_query.QueryError``'s
    ``status``; a QueryError's ``code`` is AWS's error code, text), if any."""
    found = [v for v in (getattr(error, "code", None), getattr(error, "status", None)) if isinstance(v, int)]
    return found[0] if found else None


def failure(step: str, target: str, error: BaseException, aws: bool = False) -> dict[str, Any]:
    """One failed call, as the run reports it (and ``drain_watch`` alerts on it); ``aws``: a call to AWS, whose fix is
    the drain's IAM role, not its RBAC."""
    found = {"step": step, "target": target, "status": status_of(error), "error": str(error)[:300]}
    return {**found, "aws": True} if aws else found
