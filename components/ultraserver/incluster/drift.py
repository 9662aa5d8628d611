"""The drift check the health CronJob runs in the cluster: verify's cheap node facts, with the standard library only.

No image ships the ultraserver package, so this file (and ``copied_facts.py``) is mounted from a ConfigMap into a
stock Python image and run as a script. It reads the nodes through the pod's service account and compares them with
the expected node groups (JSON in the EXPECTED environment variable, written by ``builders.drift_check``). It prints
one line per drift (a node that lost EFA devices or GPUs, lost its clique label, went NotReady, or an UltraServer
whose node count or clique count changed) and exits 1, so the Job fails and the drift shows in `kubectl get jobs` and
events. It must import nothing but the standard library.
"""

from __future__ import annotations

import json
import os
import ssl
import sys
import urllib.request
from collections import defaultdict
from collections.abc import Callable, Mapping
from datetime import datetime, timezone
from typing import Any

try:
    from ultraserver.incluster.copied_facts import CLIQUE_LABEL, EFA_RESOURCE, GPU_RESOURCE
    from ultraserver.incluster.copied_facts import ULTRASERVER_LABEL as GROUP_LABEL
except ImportError:  # in the cluster: the mounted directory is on sys.path
    from copied_facts import CLIQUE_LABEL, EFA_RESOURCE, GPU_RESOURCE  # type: ignore[no-redef]
    from copied_facts import ULTRASERVER_LABEL as GROUP_LABEL  # type: ignore[no-redef]

SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def _ready(node: dict[str, Any]) -> bool:
    conditions = node.get("status", {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def _node_drift(node: dict[str, Any], group: dict[str, Any]) -> list[str]:
    name = node["metadata"]["name"]
    allocatable = node.get("status", {}).get("allocatable") or {}
    found = []
    if not _ready(node):
        found.append(f"node {name}: NotReady")
    plugin = ((GPU_RESOURCE, "gpus"), (EFA_RESOURCE, "efa")) if group.get("allocatable", True) else ()
    for resource, key in plugin:
        value = str(allocatable.get(resource, "0"))
        if value != str(group[key]):
            found.append(f"node {name}: allocatable {resource} {value}, expected {group[key]}")
    if not (node["metadata"].get("labels") or {}).get(CLIQUE_LABEL):
        found.append(f"node {name}: no {CLIQUE_LABEL} label")
    return found


def running(group: dict[str, Any], now: datetime) -> bool:
    """Whether the group should be at full size now: no windows (fixed size), or inside one of them."""
    windows = group.get("windows") or []
    return not windows or any(_utc(start) <= now < _utc(until) for start, until in windows)


def _utc(text: str) -> datetime:
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)


def drift(nodes: list[dict[str, Any]], expected: list[dict[str, Any]]) -> list[str]:
    """Every difference between the nodes and the expected node groups (empty when none)."""
    found: list[str] = []
    by_group: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for node in nodes:
        by_group[(node["metadata"].get("labels") or {}).get(GROUP_LABEL, "")].append(node)
    for group in expected:
        members = by_group.get(group["name"], [])
        if len(members) != group["nodes"]:
            found.append(f"group {group['name']}: {len(members)} nodes, expected {group['nodes']}")
        cliques = {(n["metadata"].get("labels") or {}).get(CLIQUE_LABEL) for n in members} - {None, ""}
        if members and len(cliques) > group["ultraservers"]:
            found.append(f"group {group['name']}: {len(cliques)} cliques, expected {group['ultraservers']}")
        for node in sorted(members, key=lambda n: n["metadata"]["name"]):
            found.extend(_node_drift(node, group))
    return found


def list_nodes(api: str, headers: dict[str, str], context: ssl.SSLContext | None) -> list[dict[str, Any]]:
    """Every node, read from the API server at ``api`` (GET /api/v1/nodes)."""
    request = urllib.request.Request(f"{api}/api/v1/nodes", headers=headers)
    with urllib.request.urlopen(request, context=context, timeout=60) as response:
        items: list[dict[str, Any]] = json.load(response)["items"]
    return items


def in_cluster(
    folder: str = SERVICE_ACCOUNT, env: Mapping[str, str] = os.environ
) -> tuple[str, dict[str, str], ssl.SSLContext]:
    """The API server, token and CA the pod's service account gives (the Job runs inside the cluster): the address
    Kubernetes puts in the pod's ``env``, the token and CA it mounts in ``folder`` (a rehearsal passes its own)."""
    host = env["KUBERNETES_SERVICE_HOST"]
    port = env.get("KUBERNETES_SERVICE_PORT", "443")
    with open(f"{folder}/token") as handle:
        token = handle.read().strip()
    context = ssl.create_default_context(cafile=f"{folder}/ca.crt")
    return f"https://{host}:{port}", {"Authorization": f"Bearer {token}"}, context


def check(groups: list[dict[str, Any]], now: datetime, read_nodes: Callable[[], list[dict[str, Any]]]) -> int:
    """Print the drift and return 1, or print a summary and return 0. Groups outside their Capacity Blocks are
    skipped (they are at 0 nodes on purpose); with none in a block there is nothing to check, which is not a failure."""
    expected = [g for g in groups if running(g, now)]
    for group in groups:
        if group not in expected:
            print(f"skipped group {group['name']}: no block is active at {now:%Y-%m-%dT%H:%MZ}")
    if not expected:
        print("no block is active: no GPU node group should be running now, nothing to check")
        return 0
    found = drift(read_nodes(), expected)
    for line in found:
        print(f"DRIFT {line}")
    if not found:
        print(f"no drift: {sum(g['nodes'] for g in expected)} GPU nodes in {len(expected)} node groups as expected")
    return 1 if found else 0


def main(now: datetime | None = None) -> int:
    """The Job's run: the expected groups from EXPECTED, the nodes through the pod's service account."""
    groups = json.loads(os.environ["EXPECTED"])
    return check(groups, now or datetime.now(timezone.utc), lambda: list_nodes(*in_cluster()))


if __name__ == "__main__":
    sys.exit(main())
