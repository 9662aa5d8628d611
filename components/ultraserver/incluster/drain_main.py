"""The reclaim drain CronJob's entry point: one run of ``drain.run_once`` through the pod's service account.

The ConfigMap mounts this file and the modules it imports side by side in a stock Python image (no image ships the
ultraserver package), so they import the standard library only, and find each other next to them.
"""

from __future__ import annotations

import json
import os
import ssl
import sys
import urllib.request
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

try:
    from ultraserver.incluster.drain import Block, RestApi, gpu_nodes, run_once
    from ultraserver.incluster.recheck import run_checks_once
    from ultraserver.incluster.spares import groups_from
    from ultraserver.incluster.spares import run_once as run_spares_once
    from ultraserver.incluster.warning_queue import AlertTopic, WarningQueue, pod_credentials, read_warnings
except ImportError:  # in the cluster: the mounted directory is on sys.path
    from drain import Block, RestApi, gpu_nodes, run_once  # type: ignore[no-redef]
    from recheck import run_checks_once  # type: ignore[no-redef]
    from spares import groups_from  # type: ignore[no-redef]
    from spares import run_once as run_spares_once  # type: ignore[no-redef]
    from warning_queue import AlertTopic, WarningQueue, pod_credentials, read_warnings  # type: ignore[no-redef]

SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


class StdlibApi(RestApi):
    """The API server through the pod's service account, with urllib only."""

    def __init__(self, folder: str = SERVICE_ACCOUNT, env: Mapping[str, str] = os.environ) -> None:
        host = env["KUBERNETES_SERVICE_HOST"]
        self._base = f"https://{host}:{env.get('KUBERNETES_SERVICE_PORT', '443')}"
        with open(f"{folder}/token") as handle:
            self._token = handle.read().strip()
        self._tls = ssl.create_default_context(cafile=f"{folder}/ca.crt")

    def _call(self, method: str, path: str, body: Any = None, content: str = "application/json") -> Any:
        data = None if body is None else json.dumps(body).encode()
        headers = {"Authorization": f"Bearer {self._token}", "Content-Type": content, "Accept": "application/json"}
        request = urllib.request.Request(self._base + path, data=data, headers=headers, method=method)
        with urllib.request.urlopen(request, context=self._tls, timeout=60) as response:
            return json.load(response)


def _checks(path: str) -> list[dict[str, Any]]:
    """The check jobs to make again at each join; none without the file (a drain deployed without checks)."""
    if not path or not os.path.isfile(path):
        return []
    with open(path) as handle:
        return list(json.load(handle))


def queued_warnings(now: datetime) -> list[dict[str, Any]]:
    """EC2's expiration warnings from the queue in WARNING_QUEUE_URL; none when the drain was deployed without one or
    the queue cannot be read (said on stderr)."""
    url = os.environ.get("WARNING_QUEUE_URL", "")
    if not url:
        return []
    try:
        return list(read_warnings(WarningQueue(url, os.environ["AWS_REGION"], pod_credentials()), now))
    except (OSError, KeyError, ValueError) as error:  # urllib's errors are OSErrors
        # The drain by the computed cut-off must run whatever the queue does; the next minute reads it again.
        print(json.dumps({"warningQueueError": str(error)}), file=sys.stderr)
        return []


def alert_publisher() -> Any:
    """What sends the spares controller's alerts to the stack's SNS topic (ALERT_TOPIC_ARN); None without a topic
    (the alert is then only in the pod's log, as every action is). A failed publish is logged, not raised: the
    replacement has been made, the next alert goes out on its own."""
    topic = os.environ.get("ALERT_TOPIC_ARN", "")
    if not topic:
        return None

    def publish(subject: str, message: str) -> None:
        try:
            AlertTopic(topic, os.environ["AWS_REGION"], pod_credentials()).publish(subject, message)
        except (OSError, KeyError, ValueError) as error:
            print(json.dumps({"alertTopicError": str(error), "subject": subject}), file=sys.stderr)

    return publish


def main(now: datetime | None = None) -> int:
    """One run: the drain, the spares, then the fabric checks due at a join; print each action taken; 0 when the run
    completed."""
    now = now or datetime.now(timezone.utc)
    blocks = [Block.from_json(b) for b in json.loads(os.environ["BLOCKS"])]
    warnings = json.loads(os.environ.get("WARNINGS") or "[]") + queued_warnings(now)
    api = StdlibApi()
    nodes = gpu_nodes(api)
    for action in run_once(api, blocks, now, os.environ.get("CLUSTER_QUEUE", ""), warnings, nodes):
        print(json.dumps(action, sort_keys=True))
    # Spares before the checks: a node held back as a spare is tainted before a check job can be placed on it.
    for action in run_spares_once(api, groups_from(os.environ.get("SPARES", "")), now, nodes, alert_publisher()):
        print(json.dumps(action, sort_keys=True))
    for action in run_checks_once(api, _checks(os.environ.get("CHECKS_FILE", "")), blocks, now, nodes):
        print(json.dumps(action, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
