"""EC2's Capacity Block expiration warnings, read by the reclaim drain from its SQS queue, with the standard library.

Mounted beside ``drain_main.py`` in a stock Python image, so it imports nothing but the standard library: SQS's JSON
protocol over urllib, signed with Signature Version 4 (hmac, hashlib), credentials from the EKS Pod Identity agent.
AWS SDKs and Tools reference guide, "Container credential provider" (feature-container-credentials, read
2026-11-27): "When configured, Amazon EKS sets the AWS_CONTAINER_CREDENTIALS_FULL_URI and
AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE environment variables that the SDKs and tools use to obtain credentials" and
"SDKs attempt to load credentials from the specified HTTP endpoint through a GET request". That the token file's
content goes in the Authorization header and the answer carries AccessKeyId, SecretAccessKey, Token is the
container provider's contract as botocore implements it (ContainerProvider), not quoted from an EKS page: UNVERIFIED
against EKS's own text.

A warning stays on the queue until the end it announces has passed: each minute's run reads it again (the drain is a
fresh pod each minute and keeps no state), so the drain that started on it keeps going; then it is deleted.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import urllib.parse
import urllib.request
from datetime import datetime, timezone
from typing import Any

try:
    from ultraserver.incluster.copied_facts import EXPIRATION_WARNING_DETAIL_TYPES as WARNING_DETAIL_TYPES
except ImportError:  # in the cluster: the mounted directory is on sys.path
    from copied_facts import EXPIRATION_WARNING_DETAIL_TYPES as WARNING_DETAIL_TYPES  # type: ignore[no-redef]

_SERVICE = "sqs"
_TARGET = "AmazonSQS."
_CONTENT = "application/x-amz-json-1.0"
# Hidden while this run reads on (so the loop gets the rest), visible again before next minute's run.
VISIBILITY_SECONDS = 30
_BATCH = 10  # ReceiveMessage's MaxNumberOfMessages: 1 to 10


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def sign(
    url: str,
    headers: dict[str, str],
    body: bytes,
    region: str,
    creds: dict[str, str],
    now: datetime,
    service: str = _SERVICE,
) -> dict[str, str]:
    """The headers of a SigV4-signed POST of ``body`` to ``url`` (``service``, SQS by default, in ``region``):
    ``headers`` plus host, date, session token and Authorization."""
    parts = urllib.parse.urlsplit(url)
    stamp = now.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    signed = {k.lower(): v.strip() for k, v in headers.items()}
    signed.update({"host": parts.netloc, "x-amz-date": stamp})
    if creds.get("Token"):
        signed["x-amz-security-token"] = creds["Token"]
    names = sorted(signed)
    canonical = "\n".join(
        [
            "POST",
            urllib.parse.quote(parts.path or "/"),
            parts.query,
            "".join(f"{n}:{signed[n]}\n" for n in names),
            ";".join(names),
            hashlib.sha256(body).hexdigest(),
        ]
    )
    scope = f"{stamp[:8]}/{region}/{service}/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("AWS4" + creds["SecretAccessKey"]).encode()
    for part in (stamp[:8], region, service, "aws4_request"):
        key = _hmac(key, part)
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    signed["authorization"] = (
        f"AWS4-HMAC-SHA256 Credential={creds['AccessKeyId']}/{scope}, SignedHeaders={';'.join(names)}, "
        f"Signature={signature}"
    )
    return signed


def pod_credentials() -> dict[str, str]:
    """AccessKeyId, SecretAccessKey and Token from the EKS Pod Identity agent."""
    with open(os.environ["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"]) as handle:
        token = handle.read().strip()
    request = urllib.request.Request(os.environ["AWS_CONTAINER_CREDENTIALS_FULL_URI"], headers={"Authorization": token})
    with urllib.request.urlopen(request, timeout=10) as response:
        return dict(json.load(response))


def warning_of(message: dict[str, Any]) -> dict[str, str] | None:
    """The warning ``decide`` takes (reservation, end, seen) from one SQS message holding an EventBridge event; None
    for anything else. Seen is when SQS received it (SentTimestamp, epoch milliseconds), the same every run."""
    try:
        event = json.loads(message.get("Body") or "")
        detail = event["detail"]
        sent = int(message["Attributes"]["SentTimestamp"]) / 1000
    except (ValueError, KeyError, TypeError):
        return None
    if not isinstance(event, dict) or event.get("detail-type") not in WARNING_DETAIL_TYPES:
        return None
    reservation, end = detail.get("capacity-reservation-id"), detail.get("end-date")
    if not isinstance(reservation, str) or not isinstance(end, str):
        return None
    seen = datetime.fromtimestamp(sent, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return {"reservation": reservation, "end": end, "seen": seen}


def spent(message: dict[str, Any], now: datetime) -> bool:
    """True for a message to delete: not a warning, or a warning whose end has passed (nothing left to drain)."""
    warning = warning_of(message)
    if warning is None:
        return True
    end = datetime.fromisoformat(warning["end"].replace("Z", "+00:00"))
    return end.tzinfo is not None and end <= now


class WarningQueue:
    """The drain's SQS queue through its JSON protocol, signed with the pod's credentials."""

    def __init__(self, queue_url: str, region: str, creds: dict[str, str]) -> None:
        parts = urllib.parse.urlsplit(queue_url)
        self._endpoint = f"{parts.scheme}://{parts.netloc}/"
        self._queue_url, self._region, self._creds = queue_url, region, creds

    def _call(self, action: str, payload: dict[str, Any], now: datetime) -> dict[str, Any]:
        body = json.dumps({"QueueUrl": self._queue_url, **payload}).encode()
        headers = sign(
            self._endpoint,
            {"Content-Type": _CONTENT, "X-Amz-Target": _TARGET + action},
            body,
            self._region,
            self._creds,
            now,
        )
        request = urllib.request.Request(self._endpoint, data=body, headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=15) as response:
            return dict(json.load(response))

    def receive(self, now: datetime, rounds: int = 10) -> list[dict[str, Any]]:
        """Every message on the queue (up to ``rounds`` batches), each hidden for VISIBILITY_SECONDS."""
        found: list[dict[str, Any]] = []
        for _ in range(rounds):
            payload = {
                "MaxNumberOfMessages": _BATCH,
                "VisibilityTimeout": VISIBILITY_SECONDS,
                "WaitTimeSeconds": 1,
                "MessageSystemAttributeNames": ["SentTimestamp"],
            }
            batch = self._call("ReceiveMessage", payload, now).get("Messages") or []
            found += batch
            if len(batch) < _BATCH:
                break
        return found

    def delete(self, message: dict[str, Any], now: datetime) -> None:
        self._call("DeleteMessage", {"ReceiptHandle": message["ReceiptHandle"]}, now)


def read_warnings(queue: WarningQueue, now: datetime) -> list[dict[str, str]]:
    """The warnings on the queue; deletes the messages that are spent (see ``spent``)."""
    warnings = []
    for message in queue.receive(now):
        if spent(message, now):
            queue.delete(message, now)
            continue
        warning = warning_of(message)
        if warning is not None:
            warnings.append(warning)
    return warnings
