"""The reclaim drain through the official Kubernetes client: the decisions the in-cluster CronJob makes
(``incluster.drain``), driven from a program with its own client and clock (a rehearsal on an emulated API, a
one-off run from a workstation). ``drain_step(api_client, blocks, now)`` reads, decides and applies once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from ultraserver.facts.capacity.capacity_blocks import require_aware
from ultraserver.incluster.drain import Block, run_once
from ultraserver.incluster.rest import RestApi
from ultraserver.verify.clients import KubernetesReader


class KubernetesApi(RestApi):
    """The drain's REST calls over a ``kubernetes.client.ApiClient`` (its configuration, credentials and TLS)."""

    def __init__(self, api_client: Any) -> None:
        self._client = api_client

    def _call(self, method: str, path: str, body: Any = None, content: str = "application/json") -> Any:
        resource, _, query = path.partition("?")
        params = [tuple(part.split("=", 1)) for part in query.split("&") if part]
        return self._client.call_api(
            resource,
            method,
            query_params=params,
            header_params={"Accept": "application/json", "Content-Type": content},
            body=body,
            response_type="object",
            auth_settings=["BearerToken"],
            _return_http_data_only=True,
            _request_timeout=KubernetesReader.TIMEOUT,  # verify's per-request bound, for the same reason
        )


def drain_step(
    api_client: Any,
    blocks: list[Block],
    now: datetime,
    cluster_queue: str = "",
    warnings: list[dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """One run of the reclaim drain at ``now`` against the cluster behind ``api_client``: the actions taken."""
    return run_once(KubernetesApi(api_client), blocks, require_aware(now), cluster_queue, warnings)
