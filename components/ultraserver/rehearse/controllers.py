"""The programs that schedule and admit beside a rehearsal's real control plane (``--api real``, issue 43 stage 2):
the Kueue controller with the plan's Configuration, kube-scheduler, kube-controller-manager's Job, ResourceClaim,
garbage-collector, node lifecycle and taint-eviction controllers, and kwok for the kubelets (its stages:
kwok_stages); each started with the administrator's kubeconfig and stopped with the control plane. What they are
shown doing: rehearse/scheduling.py and rehearse/real_replacement.py."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from ultraserver.facts.pins.charts import KUEUE
from ultraserver.problems import ConfigError, Described, Problem
from ultraserver.rehearse.control_plane import ControlPlane, free_port
from ultraserver.rehearse.emulator import LOOPBACK


def plan_configuration(releases: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """The Kueue Configuration the plan hands its chart; None when the stack installs no Kueue."""
    for release in releases:
        if str(release.get("chart", "")).rstrip("/").rsplit("/", 1)[-1] == KUEUE:
            text = ((release.get("values") or {}).get("managerConfig") or {}).get("controllerManagerConfigYaml")
            if text:
                return dict(yaml.safe_load(text))
    return None


def local_configuration(config: Mapping[str, Any], certs: Path) -> dict[str, Any]:
    """The plan's Configuration as one controller outside a cluster runs it: no leader election, its probes and
    webhook server on free loopback ports, no metrics server, the webhook's certificate from ``certs`` (no internal
    certificate rotation: there is no Secret mount), the visibility API off; all that decides admission is the
    plan's."""
    local = dict(config)
    local["leaderElection"] = {"leaderElect": False}
    local["health"] = {"healthProbeBindAddress": f"{LOOPBACK}:{free_port()}"}
    local["metrics"] = {"bindAddress": "0"}  # not served: nothing scrapes it
    local["webhook"] = {"host": LOOPBACK, "port": free_port(), "certDir": str(certs)}
    local["internalCertManagement"] = {"enable": False}
    # The on-demand visibility API (an aggregated API server, not registered here) would need a serving certificate
    # at a fixed path (/visibility, pkg/visibility/server.go at v0.19.2); it decides no admission.
    local["featureGates"] = {**(config.get("featureGates") or {}), "VisibilityOnDemand": False}
    return local


KWOK_API = "kwok.x-k8s.io/v1alpha1"
NOT_READY_LABEL = "ultraserver.io/rehearsal-not-ready"
"""A node the rehearsal breaks (``--break node-fails``): kwok's stage turns it Ready=Unknown once and nothing turns it
back (kwok runs no heartbeat stage here; the node lifecycle controller, which sees kwok renew the node's Lease, only
ever marks a node Unknown)."""


def kwok_stages() -> list[dict[str, Any]]:
    """The kubelet's part kwok plays here (kwok v0.8.0's Stage API, pkg/apis/v1alpha1/stage_types.go; kwok runs
    none unless given): a bound pod goes Running and Ready and stays so (a training job does not end during a
    rehearsal, and its claims stay allocated), a deleted pod is removed. Nodes keep the status the rehearsal wrote
    (Ready): no heartbeat stage is given, and kwok renews their Leases, so the node lifecycle controller leaves them
    so. A node labelled ``NOT_READY_LABEL`` goes Ready=Unknown, as the node lifecycle controller marks a silent
    kubelet's node, and stays so (a stage patches a Node's status with a strategic merge patch, conditions merged by
    type: pkg/utils/lifecycle/next.go:152-159 at v0.8.0; the selector's jq keys as kwok's own chaos stage
    kustomize/stage/node/chaos/node-not-ready.yaml:11 and heartbeat stage kustomize/stage/node/heartbeat/
    node-heartbeat.yaml:15 write them)."""

    def stage(name: str, expressions: list[dict[str, Any]], after: dict[str, Any], kind: str = "Pod") -> dict[str, Any]:
        return {
            "apiVersion": KWOK_API,
            "kind": "Stage",
            "metadata": {"name": name},
            "spec": {
                "resourceRef": {"apiGroup": "v1", "kind": kind},
                "selector": {"matchExpressions": expressions},
                "next": after,
            },
        }

    live = {"key": ".metadata.deletionTimestamp", "operator": "DoesNotExist"}
    running = yaml.safe_dump({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]})
    kubelet = yaml.safe_dump({"nodeInfo": {"kubeletVersion": "kwok"}})
    silent = (
        "conditions:\n- type: Ready\n  status: Unknown\n  reason: NodeStatusUnknown\n"
        "  message: Kubelet stopped posting node status.\n  lastTransitionTime: {{ Now | Quote }}\n"
    )
    return [
        # kwok plays the pods of the nodes it has taken on: it takes each node on once, marking it as its own.
        stage(
            "rehearsal-node-taken-on",
            [live, {"key": ".status.nodeInfo.kubeletVersion", "operator": "DoesNotExist"}],
            {"statusTemplate": kubelet},
            "Node",
        ),
        stage(
            "rehearsal-node-not-ready",
            [
                {"key": f'.metadata.labels["{NOT_READY_LABEL}"]', "operator": "In", "values": ["true"]},
                {
                    "key": '.status.conditions.[] | select( .type == "Ready" ) | .status',
                    "operator": "In",
                    "values": ["True"],
                },
            ],
            {"statusTemplate": silent},
            "Node",
        ),
        stage(
            "rehearsal-pod-running",
            [
                live,
                {"key": ".spec.nodeName", "operator": "Exists"},
                {"key": ".status.phase", "operator": "NotIn", "values": ["Running", "Succeeded", "Failed"]},
            ],
            {"statusTemplate": running},
        ),
        stage(
            "rehearsal-pod-removed",
            [{"key": ".metadata.deletionTimestamp", "operator": "Exists"}],
            {"finalizers": {"empty": True}, "delete": True},
        ),
    ]


def start(
    plane: ControlPlane, paths: Mapping[str, Path], folder: Path, config: Mapping[str, Any], nodes_fail: bool = False
) -> None:
    """Start the controller manager, the scheduler, kwok and Kueue beside the control plane (stopped with it).
    ``nodes_fail`` (``--break node-fails`` only): the node lifecycle and taint-eviction controllers too, and kwok
    renewing each node's Lease; left out otherwise, as a machine's load then ages nothing else."""
    folder.mkdir(parents=True, exist_ok=True)
    kubeconfig = str(plane.kubeconfig(folder))
    common = [f"--kubeconfig={kubeconfig}", "--leader-elect=false", f"--bind-address={LOOPBACK}"]
    delegated = [f"--authentication-kubeconfig={kubeconfig}", f"--authorization-kubeconfig={kubeconfig}"]
    plane.run(
        "kube-controller-manager",
        paths["kube-controller-manager"],
        [
            *common,
            *delegated,
            f"--secure-port={free_port()}",
            # The taint-eviction controller deletes a pod on a node tainted NoExecute it does not tolerate; it finds
            # a node's pods through the index the node lifecycle controller adds to the shared pod informer (without
            # it: "Index with name spec.nodeName does not exist"), which judges the nodes by kwok's leases.
            "--controllers=job-controller,resourceclaim-controller,garbage-collector-controller"
            + (",node-lifecycle-controller,taint-eviction-controller" if nodes_fail else ""),
        ],
    )
    plane.run("kube-scheduler", paths["kube-scheduler"], [*common, *delegated, f"--secure-port={free_port()}"])
    stages = folder / "kwok-stages.yaml"
    stages.write_text(yaml.safe_dump_all(kwok_stages()))
    plane.run(
        "kwok",
        paths["kwok"],
        [
            f"--kubeconfig={kubeconfig}",
            f"--config={stages}",
            "--manage-all-nodes=true",
            # Each node's Lease renewed, as a kubelet's: the node lifecycle controller's heartbeat.
            *(["--node-lease-duration-seconds=40"] if nodes_fail else []),
            f"--server-address={LOOPBACK}:{free_port()}",
        ],
    )
    certs = folder / "kueue-certs"
    certs.mkdir(exist_ok=True)
    (certs / "tls.crt").write_bytes(plane.authority.certificate)
    (certs / "tls.key").write_bytes(plane.authority.key)
    config_file = folder / "kueue-config.yaml"
    config_file.write_text(yaml.safe_dump(local_configuration(config, certs)))
    # Kueue v0.19.2 reads its metrics certificate from a fixed path when it manages no certificates of its own
    # (cmd/kueue/main.go:216-229 at v0.19.2: /etc/kueue/metrics/certs, where the chart mounts it). It runs in a mount
    # namespace of its own whose /etc holds only that path, leading to the rehearsal's certificate: the machine's
    # /etc is never written (Go reads nothing else there to reach the loopback API server with its kubeconfig's CA).
    unshare = shutil.which("unshare")
    if unshare is None:
        raise ConfigError(
            Problem("--api real", Described("no `unshare` on the PATH"), "util-linux's unshare", "install util-linux")
        )
    namespace = ["--mount"] if os.geteuid() == 0 else ["--mount", "--map-root-user"]
    script = (
        'mount -t tmpfs tmpfs /etc && mkdir -p /etc/kueue/metrics && ln -s "$0" /etc/kueue/metrics/certs && exec "$@"'
    )
    plane.run(
        "kueue",
        Path(unshare),
        [*namespace, "sh", "-c", script, str(certs), str(paths["kueue"]), f"--config={config_file}"],
        env={**os.environ, "KUBECONFIG": kubeconfig},
    )
