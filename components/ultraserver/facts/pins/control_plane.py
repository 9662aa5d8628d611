"""The real control plane a rehearsal with ``--api real`` runs: which upstream programs, from which Go modules, at
which versions.

Each is built from its Go module (the Go module proxy serves them) into a cache outside the repository
(``rehearse/binaries.py``); nothing is downloaded prebuilt. The versions are those the module proxy served on
2026-11-28 (a ``go mod download`` of each succeeded): k8s.io/kubernetes v1.34.4, v1.35.4 and v1.36.3 are the newest
patch of each minor the proxy listed then; v1.37.2 was listed too, beyond any EKS version the toolkit supports.
"""

from __future__ import annotations

from dataclasses import dataclass

from ultraserver.facts.pins.charts import KUEUE, catalog

KUBERNETES_RELEASES = {"1.34": "v1.34.4", "1.35": "v1.35.4", "1.36": "v1.36.3"}
"""Kubernetes minor -> the k8s.io/kubernetes version built for it (its staging modules at the matching v0.x.y)."""

ETCD_VERSION = "v3.6.16"
"""go.etcd.io/etcd/server/v3: Kubernetes 1.34-1.36 are built and tested against etcd 3.6 (kubeadm's
DefaultEtcdVersion in cmd/kubeadm/app/constants/constants.go at v1.35.4 is a 3.6 release); the newest 3.6 patch
the proxy served."""


@dataclass(frozen=True)
class GoProgram:
    """One upstream program: the module that holds it, the package of its ``main``, the version built."""

    name: str
    module: str
    package: str
    version: str

    @property
    def key(self) -> str:
        """Its file name in the cache: name and version, so that a new pin never reuses an old build."""
        return f"{self.name}-{self.version}"


def kubernetes_release(minor: str) -> tuple[str, str]:
    """The k8s.io/kubernetes version for a stack's minor (``1.35``), and a note when that minor is not served and
    the nearest one is used instead ('' when it is)."""
    if minor in KUBERNETES_RELEASES:
        return KUBERNETES_RELEASES[minor], ""

    def distance(served: str) -> tuple[int, int]:
        return abs(int(served.split(".")[1]) - int(minor.split(".")[1])), -int(served.split(".")[1])

    nearest = min(KUBERNETES_RELEASES, key=distance)
    version = KUBERNETES_RELEASES[nearest]
    return version, f"Kubernetes {minor} is not built here; the nearest served minor runs instead: {version}"


def kube_apiserver(version: str) -> GoProgram:
    """kube-apiserver of k8s.io/kubernetes at ``version``."""
    return GoProgram("kube-apiserver", "k8s.io/kubernetes", "k8s.io/kubernetes/cmd/kube-apiserver", version)


ETCD = GoProgram("etcd", "go.etcd.io/etcd/server/v3", "go.etcd.io/etcd/server/v3", ETCD_VERSION)
"""The etcd server: the module's root package is its ``main`` (server/main.go since etcd 3.5)."""


# --- Scheduling and admission (issue 43 stage 2): kube-scheduler, kwok, the Kueue controller ---------------------


def kube_scheduler(version: str) -> GoProgram:
    """kube-scheduler of k8s.io/kubernetes at ``version`` (the same build module as kube-apiserver)."""
    return GoProgram("kube-scheduler", "k8s.io/kubernetes", "k8s.io/kubernetes/cmd/kube-scheduler", version)


KWOK_VERSION = "v0.8.0"
"""sigs.k8s.io/kwok: the newest version the module proxy listed on 2026-11-28 (v0.6.1, v0.7.0, v0.8.0). kwok plays
the kubelets: it marks the plan's nodes Ready and moves bound pods to Running, with no container behind them."""

KWOK = GoProgram("kwok", "sigs.k8s.io/kwok", "sigs.k8s.io/kwok/cmd/kwok", KWOK_VERSION)


def kueue_controller() -> GoProgram:
    """The Kueue controller manager at the version the toolkit installs: the pinned chart's app version (chart
    0.19.2 = app v0.19.2, facts/pins/charts.py), so the controller that admits in the rehearsal is the one the
    cluster runs."""
    return GoProgram("kueue", "sigs.k8s.io/kueue", "sigs.k8s.io/kueue/cmd/kueue", "v" + catalog()[KUEUE].version)


def kube_controller_manager(version: str) -> GoProgram:
    """kube-controller-manager of k8s.io/kubernetes at ``version``: the Job controller makes a Job's pods, the
    ResourceClaim controller a pod's claims from its templates (DRA), the garbage collector their cleanup."""
    return GoProgram(
        "kube-controller-manager", "k8s.io/kubernetes", "k8s.io/kubernetes/cmd/kube-controller-manager", version
    )
