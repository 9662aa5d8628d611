"""The programs that schedule and admit beside a rehearsal's real control plane (``--api real``, issue 43 stage 2):
the Kueue controller with the plan's Configuration, kube-scheduler, kube-controller-manager's Job, ResourceClaim
and garbage-collector controllers, and kwok for the kubelets; each started with the administrator's kubeconfig and
stopped with the control plane. What they are shown doing: rehearse/scheduling.py."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from ultraserver.facts.pins.charts import KUEUE
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
    """The plan's Configuration as one controller outside a cluster runs it: no leader election, its probes,
    metrics and webhook server on free loopback ports, the webhook's certificate from ``certs`` (no internal
    certificate rotation: there is no Secret mount); everything that decides admission is the plan's."""
    local = dict(config)
    local["leaderElection"] = {"leaderElect": False}
    local["health"] = {"healthProbeBindAddress": f"{LOOPBACK}:{free_port()}"}
    local["metrics"] = {"bindAddress": f"{LOOPBACK}:{free_port()}"}
    local["webhook"] = {"host": LOOPBACK, "port": free_port(), "certDir": str(certs)}
    local["internalCertManagement"] = {"enable": False}
    return local


def start(plane: ControlPlane, paths: Mapping[str, Path], folder: Path, config: Mapping[str, Any]) -> None:
    """Start the controller manager, the scheduler, kwok and Kueue beside the control plane (stopped with it)."""
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
            "--controllers=job-controller,resourceclaim-controller,garbage-collector-controller",
        ],
    )
    plane.run("kube-scheduler", paths["kube-scheduler"], [*common, *delegated, f"--secure-port={free_port()}"])
    plane.run(
        "kwok",
        paths["kwok"],
        [f"--kubeconfig={kubeconfig}", "--manage-all-nodes=true", f"--server-address={LOOPBACK}:{free_port()}"],
    )
    certs = folder / "kueue-certs"
    certs.mkdir(exist_ok=True)
    (certs / "tls.crt").write_bytes(plane.authority.certificate)
    (certs / "tls.key").write_bytes(plane.authority.key)
    config_file = folder / "kueue-config.yaml"
    config_file.write_text(yaml.safe_dump(local_configuration(config, certs)))
    plane.run("kueue", paths["kueue"], [f"--config={config_file}"], env={**os.environ, "KUBECONFIG": kubeconfig})
