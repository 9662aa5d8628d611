"""The reclaim drain through the official Kubernetes client, over HTTP, against the simulated API server: the same
decisions as the in-cluster script, with a refused eviction (429) retried on the next run."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import kubernetes
import pytest
from helpers.sim_cluster import SimCluster, two_blocks
from ultraserver.builders.reclaim_drain import drain_blocks
from ultraserver.incluster import drain as ds
from ultraserver.status.drain import drain_step


def _handler(sim: SimCluster) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def _answer(self, code: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _body(self) -> Any:
            return json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"null")

        def do_GET(self) -> None:  # noqa: N802 -- http.server's names
            self._answer(200, sim.get(self.path))

        def do_PATCH(self) -> None:  # noqa: N802
            assert self.headers["Content-Type"] == "application/merge-patch+json"
            sim.patch(self.path, self._body())
            self._answer(200, {})

        def do_POST(self) -> None:  # noqa: N802
            ok = sim.post(self.path, self._body())
            self._answer(201 if ok else 429, {"kind": "Status", "code": 201 if ok else 429})

        def do_DELETE(self) -> None:  # noqa: N802
            sim.delete(self.path)
            self._answer(200, {})

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def served() -> Iterator[tuple[SimCluster, Any]]:
    sim = SimCluster()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(sim))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    config = kubernetes.client.Configuration()
    config.host = f"http://127.0.0.1:{server.server_address[1]}"
    with kubernetes.client.ApiClient(config) as client:
        yield sim, client
    server.shutdown()


def test_drain_step_cordons_annotates_and_evicts_through_the_official_client(served: tuple[SimCluster, Any]) -> None:
    sim, client = served
    first, second = drain_blocks(two_blocks("managed", "switch"))
    nodes = sim.add_nodes(first.ultraserver, 2, first.start, "managed")
    sim.pods[("svc", "api-extra")] = sim.pod("svc", "api-extra", "elsewhere", labels={"app": "api"})
    times = ds.timeline(first)
    assert drain_step(client, [first, second], times.cutoff - timedelta(minutes=1), "gb200") == []
    taken = drain_step(client, [first, second], times.cutoff, "gb200")
    assert {a["kind"] for a in taken} == {"cordon", "hold-queue", "annotate-pod"}  # told; evicted after the window
    assert all(sim.nodes[n]["spec"]["unschedulable"] for n in nodes)
    window_end = times.cutoff + timedelta(minutes=ds.CHECKPOINT_GRACE_MINUTES)
    assert {a["kind"] for a in drain_step(client, [first, second], window_end, "gb200")} == {"evict-pod"}
    assert sim.running_on(nodes) == []
    # Every GB200 node is ending: Kueue admits nothing more.
    assert sim.queue["spec"]["stopPolicy"] == "Hold"


def test_a_refused_eviction_is_left_for_the_next_run(served: tuple[SimCluster, Any]) -> None:
    sim, client = served
    first, second = drain_blocks(two_blocks("self-managed", "standby"))
    nodes = sim.add_nodes(first.ultraserver, 1, first.start, "self-managed")
    times = ds.timeline(first)
    taken = drain_step(client, [first, second], times.cutoff, "gb200")
    assert "evict-pod" not in {a["kind"] for a in taken}  # the only replica: its budget allows none
    assert sim.running_on(nodes) == [f"api-{nodes[0]}"]
    drain_step(client, [first, second], times.deadline, "gb200")
    assert sim.running_on(nodes) == []
