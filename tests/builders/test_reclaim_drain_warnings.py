"""EC2's expiration warning reaches the drain: an EventBridge event on the drain's SQS queue (a moto server on
loopback), read by the script's own standard-library client, starts the drain at once on the simulated clock."""

from __future__ import annotations

import http.server
import json
import os
import threading
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from helpers.sim_cluster import SimCluster, two_blocks
from moto.server import ThreadedMotoServer
from ultraserver.builders.reclaim_drain import drain_blocks
from ultraserver.incluster import drain as ds
from ultraserver.incluster import drain_main
from ultraserver.incluster import warning_queue as wq

REGION = "us-east-1"
CREDS = {"AccessKeyId": "AKIDEXAMPLE", "SecretAccessKey": "secret", "Token": "session"}


def _sqs(endpoint: str) -> Any:
    """boto3's SQS client of the moto server: the test's side of the queue."""
    return boto3.client(
        "sqs", endpoint_url=endpoint, region_name=REGION, aws_access_key_id="k", aws_secret_access_key="s"
    )


@pytest.fixture
def queue_url() -> Iterator[str]:
    """A fresh queue on a moto server on a free loopback port."""
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    sqs = _sqs(f"http://{host}:{port}")
    # moto keeps its backends per process: a queue of its own per test.
    yield sqs.create_queue(QueueName=f"reclaim-warnings-{uuid.uuid4().hex[:8]}")["QueueUrl"]
    server.stop()


def _send(queue_url: str, event: dict) -> None:
    _sqs(queue_url.rsplit("/", 2)[0]).send_message(QueueUrl=queue_url, MessageBody=json.dumps(event))


def _event(reservation: str, end: datetime, detail_type: str = "Capacity Block Expiration Warning") -> dict:
    return {
        "version": "0",
        "source": "aws.ec2",
        "detail-type": detail_type,
        "detail": {"capacity-reservation-id": reservation, "end-date": end.strftime("%Y-%m-%dT%H:%M:%SZ")},
    }


def test_a_queued_warning_starts_the_drain_at_once_before_the_computed_cut_off(queue_url: str) -> None:
    stack = drain_blocks(two_blocks("managed", "switch"))[0]
    queue = wq.WarningQueue(queue_url, REGION, CREDS)
    now = datetime.now(timezone.utc).replace(microsecond=0)
    # EC2's end is 40 minutes away while the stack's is days later: the computed cut-off is far off.
    block = ds.Block(stack.ultraserver, stack.reservations, now - timedelta(days=1), now + timedelta(days=2), 90)
    sim = SimCluster()
    names = sim.add_nodes(block.ultraserver, 18, block.start + timedelta(minutes=5), "managed")
    assert ds.timeline(block).cutoff > now + timedelta(days=1)
    ds.run_once(sim, [block], now, "", wq.read_warnings(queue, now))
    assert not any(sim.nodes[n]["spec"].get("unschedulable") for n in names)
    _send(queue_url, _event(block.reservations[0], now + timedelta(minutes=40)))
    _send(queue_url, {"detail-type": "EC2 Instance State-change Notification", "detail": {}})
    warnings = wq.read_warnings(queue, now)
    assert [(w["reservation"], w["end"]) for w in warnings] == [
        (block.reservations[0], (now + timedelta(minutes=40)).strftime("%Y-%m-%dT%H:%M:%SZ"))
    ]
    assert abs(datetime.fromisoformat(warnings[0]["seen"].replace("Z", "+00:00")) - now) < timedelta(minutes=1)
    ds.run_once(sim, [block], now + timedelta(minutes=1), "", warnings)
    assert all(sim.nodes[n]["spec"]["unschedulable"] for n in names)


def test_a_warning_stays_queued_until_its_end_has_passed(queue_url: str) -> None:
    now = datetime.now(timezone.utc).replace(microsecond=0)
    _send(queue_url, _event("cr-0123456789abcdef0", now + timedelta(minutes=40)))
    queue = wq.WarningQueue(queue_url, REGION, CREDS)
    assert len(wq.read_warnings(queue, now)) == 1
    # Hidden for the rest of this run only; a later run (after VISIBILITY_SECONDS) reads it again, then deletes it
    # once EC2's end has passed.
    assert queue.receive(now) == []
    assert wq.warning_of({"Body": "not json"}) is None


def test_spent_drops_non_warnings_and_past_ends() -> None:
    now = datetime(2026, 11, 27, 12, tzinfo=timezone.utc)
    sent = {"SentTimestamp": str(int(now.timestamp() * 1000))}
    live = {"Body": json.dumps(_event("cr-1", now + timedelta(minutes=5))), "Attributes": sent}
    past = {"Body": json.dumps(_event("cr-1", now - timedelta(minutes=5))), "Attributes": sent}
    china = {
        "Body": json.dumps(_event("cr-1", now, "Capacity Block Reservation Expiration Warning")),
        "Attributes": sent,
    }
    other = {"Body": json.dumps(_event("cr-1", now, "Capacity Block Delivered")), "Attributes": sent}
    assert not wq.spent(live, now)
    assert wq.spent(past, now)
    assert wq.spent(other, now)
    assert wq.warning_of(china) == {
        "reservation": "cr-1",
        "end": "2026-11-27T12:00:00Z",
        "seen": "2026-11-27T12:00:00Z",
    }


def test_signature_matches_botocore() -> None:
    url = "https://sqs.us-east-1.amazonaws.com/"
    body = b'{"QueueUrl": "https://sqs.us-east-1.amazonaws.com/123456789012/q"}'
    headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.ReceiveMessage"}
    request = AWSRequest(method="POST", url=url, data=body, headers=dict(headers))
    auth = SigV4Auth(Credentials(CREDS["AccessKeyId"], CREDS["SecretAccessKey"], CREDS["Token"]), "sqs", REGION)
    auth.add_auth(request)  # signs at the current time, which it writes in X-Amz-Date
    now = datetime.strptime(request.headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)
    ours = wq.sign(url, headers, body, REGION, CREDS, now)
    assert ours["authorization"] == request.headers["Authorization"]


def _queued(now: datetime) -> tuple[list[dict], list[dict]]:
    """One run's warnings as ``drain_main.run`` reads them (credentials first), and the failures it recorded."""
    failures: list[dict] = []
    cloud = drain_main.Aws(os.environ, failures)
    return drain_main.queued_warnings(now, cloud.creds, failures, os.environ), failures


def test_an_unreadable_queue_leaves_the_drain_to_its_computed_cut_off(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    token = tmp_path / "token"
    token.write_text("t")
    monkeypatch.setenv("WARNING_QUEUE_URL", "http://127.0.0.1:9/000000000000/q")
    monkeypatch.setenv("AWS_REGION", REGION)
    monkeypatch.setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", str(token))
    monkeypatch.setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:9/v1/credentials")
    warnings, failures = _queued(datetime.now(timezone.utc))
    assert warnings == [] and [f["step"] for f in failures] == ["pod-identity-credentials"]  # reported, alerted on
    monkeypatch.delenv("WARNING_QUEUE_URL")
    assert _queued(datetime.now(timezone.utc))[0] == []


def test_spent_messages_are_deleted_from_the_queue(queue_url: str) -> None:
    now = datetime.now(timezone.utc).replace(microsecond=0)
    _send(queue_url, _event("cr-0123456789abcdef0", now - timedelta(minutes=1)))
    _send(queue_url, {"detail-type": "EC2 Instance State-change Notification", "detail": {}})
    assert wq.read_warnings(wq.WarningQueue(queue_url, REGION, CREDS), now) == []
    sqs = _sqs(queue_url.rsplit("/", 2)[0])
    names = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    counts = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=names)["Attributes"]
    assert counts == {"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0"}


@pytest.fixture
def pod_identity_agent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The EKS Pod Identity agent on loopback, as the pod sees it: the two variables EKS sets in the pod and the
    token file it mounts; answers the credentials only to that token (401 otherwise). Yields the tokens it got."""
    seen: list[str] = []
    (tmp_path / "token").write_text("pod-identity-token\n")

    class Agent(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization", ""))
            ok = seen[-1] == "pod-identity-token" and self.path == "/v1/credentials"
            body = json.dumps({**CREDS, "Expiration": "2099-01-01T00:00:00Z"} if ok else {}).encode()
            self.send_response(200 if ok else 401)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
            """Quiet."""

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Agent)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv(
        "AWS_CONTAINER_CREDENTIALS_FULL_URI", f"http://127.0.0.1:{server.server_address[1]}/v1/credentials"
    )
    monkeypatch.setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", str(tmp_path / "token"))
    monkeypatch.setenv("AWS_REGION", REGION)
    yield seen
    server.shutdown()
    server.server_close()


def test_the_drain_reads_the_queue_on_the_pod_identity_agents_credentials(
    queue_url: str, pod_identity_agent: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    now = datetime.now(timezone.utc).replace(microsecond=0)
    _send(queue_url, _event("cr-0123456789abcdef0", now + timedelta(minutes=40)))
    monkeypatch.setenv("WARNING_QUEUE_URL", queue_url)
    (warning,), failures = _queued(now)
    assert failures == []
    assert warning["reservation"] == "cr-0123456789abcdef0"
    assert pod_identity_agent == ["pod-identity-token"]  # the mounted token, without its newline


def test_credentials_the_agent_refuses_leave_the_drain_to_its_cut_off(
    queue_url: str,
    pod_identity_agent: list[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    (tmp_path / "token").write_text("expired")
    monkeypatch.setenv("WARNING_QUEUE_URL", queue_url)
    warnings, failures = _queued(datetime.now(timezone.utc))
    assert warnings == [] and pod_identity_agent == ["expired"]
    assert [(f["step"], f["status"]) for f in failures] == [("pod-identity-credentials", 401)]
