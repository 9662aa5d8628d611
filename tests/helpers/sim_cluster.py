"""A simulated API server for the reclaim drain: nodes, pods, a PodDisruptionBudget, Kueue Workloads and a
ClusterQueue as plain objects, the drain's REST calls over them, and Kueue admitting one job a minute."""

from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone
from typing import Any

from helpers.stacks import stack_config
from ultraserver.config.settings import parse_settings
from ultraserver.incluster import drain as ds

FIRST = datetime(2026, 12, 1, 11, 30, tzinfo=timezone.utc)
DAYS = 14


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


class Forbidden(Exception):
    """The API server's 403, as urllib raises it (``code``)."""

    code = 403


class NotFound(Exception):
    """The API server's 404."""

    code = 404


class SimCluster:
    """An API server over plain objects: what ``run_once`` reads and changes, plus Kueue's admission of one job a
    minute onto a schedulable node with a free slot (nothing while the ClusterQueue is held)."""

    def __init__(self) -> None:
        self.nodes: dict[str, dict[str, Any]] = {}
        self.pods: dict[tuple[str, str], dict[str, Any]] = {}
        self.workloads: dict[str, dict[str, Any]] = {}
        self.queue: dict[str, Any] = {"metadata": {"name": "gb200"}, "spec": {"stopPolicy": "None"}}
        self.admitted: list[tuple[datetime, str]] = []
        self.evicted: list[str] = []
        self.jobs = 0
        self.config_maps: dict[tuple[str, str], dict[str, str]] = {}
        self.refused: set[tuple[str, str]] = set()
        """(method, path fragment) pairs the API server answers 403 (a missing RBAC verb)."""

    # -- the world
    def add_nodes(self, ultraserver: str, count: int, at: datetime, mode: str) -> list[str]:
        names = []
        for index in range(count):
            name = f"ip-{ultraserver}-{at:%m%d%H%M}-{index}"
            labels = {ds.GROUP_LABEL: ultraserver}
            if mode == "managed":
                labels["eks.amazonaws.com/nodegroup"] = f"{ultraserver}-{at:%Y%m%dt%H%Mz}"
            meta = {"name": name, "labels": labels, "creationTimestamp": _iso(at)}
            ready = {"conditions": [{"type": "Ready", "status": "True"}]}
            self.nodes[name] = {"metadata": meta, "spec": {}, "status": ready}
            self.pods[("kube-system", f"efa-{name}")] = self.pod("kube-system", f"efa-{name}", name, daemon=True)
            names.append(name)
        # A service with a budget of one disruption runs one replica on the first node.
        self.pods[("svc", f"api-{names[0]}")] = self.pod("svc", f"api-{names[0]}", names[0], labels={"app": "api"})
        return names

    def remove_nodes(self, names: list[str]) -> None:
        for name in names:
            self.nodes.pop(name, None)
        self.pods = {k: p for k, p in self.pods.items() if p["spec"].get("nodeName") not in names}

    @staticmethod
    def pod(ns: str, name: str, node: str, daemon: bool = False, labels: dict | None = None) -> dict[str, Any]:
        owners = [{"kind": "DaemonSet", "name": "efa"}] if daemon else []
        meta = {"name": name, "namespace": ns, "labels": labels or {}, "ownerReferences": owners}
        return {"metadata": meta, "spec": {"nodeName": node}, "status": {"phase": "Running"}}

    def schedulable(self, name: str) -> bool:
        node = self.nodes[name]
        return not node["spec"].get("unschedulable") and not node["spec"].get("taints")

    def admit(self, now: datetime) -> None:
        """Kueue: one new job a minute, placed on a schedulable node without a training pod."""
        self.jobs += 1
        if self.queue["spec"].get("stopPolicy", "None") != "None":
            return
        busy = {p["spec"]["nodeName"] for p in self.pods.values() if p["metadata"]["namespace"] == "train"}
        free = [n for n in sorted(self.nodes) if self.schedulable(n) and n not in busy]
        if not free:
            return
        node, name = free[0], f"job-{self.jobs}"
        self.admitted.append((now, node))
        level = {"universal": node}
        assignment = {
            "topologyAssignment": {
                "levels": ["kubernetes.io/hostname"],
                "slices": [{"domainCount": 1, "podCounts": {"universal": 1}, "valuesPerLevel": [level]}],
            }
        }
        self.workloads[name] = {
            "metadata": {"name": name, "namespace": "train"},
            "status": {"admission": {"clusterQueue": "gb200", "podSetAssignments": [assignment]}},
        }
        opted = {ds.CHECKPOINT_LABEL: "false"} if self.jobs % 2 else {}  # every other job opts out of checkpoints
        self.pods[("train", name)] = self.pod("train", name, node, labels=opted)

    def budget(self) -> dict[str, Any]:
        """minAvailable 1 over the api replicas: one may go while another runs somewhere."""
        healthy = sum(1 for p in self.pods.values() if p["metadata"]["labels"].get("app") == "api")
        return {
            "metadata": {"name": "api", "namespace": "svc"},
            "spec": {"selector": {"matchLabels": {"app": "api"}}},
            "status": {"disruptionsAllowed": max(0, healthy - 1)},
        }

    def running_on(self, names: list[str]) -> list[str]:
        return sorted(
            p["metadata"]["name"]
            for p in self.pods.values()
            if p["spec"]["nodeName"] in names
            and not any(o["kind"] == "DaemonSet" for o in p["metadata"]["ownerReferences"])
        )

    def deploy(self, manifests: list[dict[str, Any]]) -> None:
        """What ``pulumi up`` leaves in the cluster that the drain reads: the ConfigMaps."""
        for doc in manifests:
            if doc["kind"] == "ConfigMap":
                meta = doc["metadata"]
                self.config_maps[(meta["namespace"], meta["name"])] = dict(doc["data"])

    def pod_env(self, cron_job: dict[str, Any]) -> dict[str, str]:
        """A new Job pod's environment, as the kubelet builds it at container start (configMapKeyRef resolved)."""
        (container,) = cron_job["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
        env = {}
        for item in container["env"]:
            ref = item.get("valueFrom", {}).get("configMapKeyRef")
            key = (cron_job["metadata"]["namespace"], ref["name"]) if ref else None
            env[item["name"]] = self.config_maps[key][ref["key"]] if key else item["value"]
        return env

    # -- status.extend_drain.ConfigMaps
    def config_map_data(self, namespace: str, name: str) -> dict[str, str]:
        return dict(self.config_maps[(namespace, name)])

    def patch_config_map_data(self, namespace: str, name: str, data: dict[str, str]) -> None:
        self.config_maps[(namespace, name)].update(data)

    # -- ds.Api
    def _check(self, method: str, path: str) -> None:
        if any(method == verb and fragment in path for verb, fragment in self.refused):
            raise Forbidden(path)

    def get(self, path: str) -> dict[str, Any]:
        self._check("GET", path)
        if "/configmaps/" in path:
            parts = path.split("/")
            key = (parts[-3], parts[-1])
            if key not in self.config_maps:
                raise NotFound(path)
            return {"metadata": {"namespace": key[0], "name": key[1]}, "data": dict(self.config_maps[key])}
        if path.startswith("/api/v1/nodes"):
            return {"items": copy.deepcopy(list(self.nodes.values()))}
        if path == "/api/v1/pods":
            return {"items": copy.deepcopy(list(self.pods.values()))}
        if path.endswith("/poddisruptionbudgets"):
            return {"items": [self.budget()]}
        if path.endswith("/workloads"):
            return {"items": copy.deepcopy(list(self.workloads.values()))}
        assert path.endswith("/clusterqueues/gb200"), path
        return copy.deepcopy(self.queue)

    def patch(self, path: str, body: dict[str, Any]) -> None:
        self._check("PATCH", path)
        parts = path.split("/")
        if "/configmaps/" in path:
            self.config_maps[(parts[-3], parts[-1])].update(body["data"])
            return
        if "/nodes/" in path:
            self.nodes[parts[-1]]["spec"].update(body["spec"])
            return
        if "/clusterqueues/" in path:
            self.queue["spec"].update(body["spec"])
            notes = self.queue["metadata"].setdefault("annotations", {})
            for key, value in body["metadata"]["annotations"].items():
                notes.pop(key, None) if value is None else notes.__setitem__(key, value)
            return
        target = self.workloads[parts[-1]] if "/workloads/" in path else self.pods[(parts[-3], parts[-1])]
        target["metadata"].setdefault("annotations", {}).update(body["metadata"]["annotations"])

    def post(self, path: str, body: dict[str, Any]) -> bool:
        self._check("POST", path)
        key = (body["metadata"]["namespace"], body["metadata"]["name"])
        if path.endswith("/configmaps"):
            self.config_maps[key] = dict(body["data"])
            return True
        pod = self.pods[key]
        if pod["metadata"]["labels"].get("app") == "api":
            if self.budget()["status"]["disruptionsAllowed"] < 1:
                return False  # the API server refuses with 429
            # Its controller makes a new replica; no GB200 node takes it, so it waits (Pending, on no node).
        self.pods.pop(key)
        self.evicted.append(key[1])
        return True

    def delete(self, path: str) -> None:
        self._check("DELETE", path)
        parts = path.split("/")
        self.pods.pop((parts[-3], parts[-1]), None)


def two_blocks(mode: str, handover: str, extended: bool = False) -> Any:
    """gb200-x72 on two back-to-back blocks (the first a day longer when ``extended``)."""
    config = copy.deepcopy(stack_config("gb200-x72"))
    group = config["ultraserver-eks:gpuNodeGroups"][0]
    group.pop("capacityReservationIds"), group.pop("reservationWindow")
    group.update(mode=mode, handover=handover)
    days = [DAYS + (1 if extended else 0), DAYS]
    group["capacityBlocks"] = [
        {"capacityReservationIds": [rid], "start": _iso(start), "end": _iso(start + timedelta(days=length))}
        for rid, start, length in (
            ("cr-0aaaaaaaaaaaaaaaa", FIRST, days[0]),
            ("cr-0bbbbbbbbbbbbbbbb", FIRST + timedelta(days=days[0]), days[1]),
        )
    ]
    return parse_settings(config, today=FIRST.date() - timedelta(days=7))
