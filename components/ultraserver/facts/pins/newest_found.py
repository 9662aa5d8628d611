"""The newest upstream release found for each pin, where it was found, and why a newer one is not adopted.

A release is adopted only when its sources at the tag could be read and its chart is packaged for the render tests
(``../shared/upstream/charts``, see its SOURCE.md): a chart that is not packaged there cannot be rendered with the
project's own ``plan --render``, so nobody adopts it blind. Re-checked 2026-11-28 against the release pages quoted in
the project's current-versions reference; the stored repository copies stop in August 2026.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from ultraserver.facts.pins import ami, charts

RECHECKED = date(2026, 11, 28)
_EARLIER = date(2026, 11, 25)


@dataclass(frozen=True)
class NewestFound:
    """A re-check of the newest upstream release of a pinned component, and why the pin stays if one is newer."""

    source: str
    checked: date
    newer: str = ""
    """The newest release found when it is newer than the pin; empty when the pin is the newest found."""
    pin_kept_because: str = ""
    """Why the toolkit stays on its pin when `newer` is set."""


MPI_OPERATOR = "mpi-operator"
KUBERNETES = "Kubernetes"
"""The set entries of the Kubernetes minors the toolkit allows (the default's is named "Kubernetes (default)")."""
AMI_ENTRY = f"{ami.AMI_TYPE} (driver {ami.NVIDIA_DRIVER})"


def _not_packaged(chart: str) -> str:
    return (
        f"its chart is not packaged for the render tests (../shared/upstream/charts holds only the pinned "
        f"{charts.pinned(chart).version}) and the stored copies of its repository stop before its tag, so it cannot "
        "be rendered with `plan --render`"
    )


NEWEST_FOUND: dict[str, NewestFound] = {
    KUBERNETES: NewestFound(
        "AMI release v20261012's table header 'Source AMI Name (K8s 1.36 - 1.37)'; CDK docs v2.277.0 "
        "eks.KubernetesVersion.V1_37",
        RECHECKED,
        newer="1.37",
        pin_kept_because="no GB200 AMI release version for 1.37 was read (a minor gets in with its pinned AMI), its "
        "EKS dates are in no primary source read, and its 6.18 kernel has no GB200 evidence yet",
    ),
    AMI_ENTRY: NewestFound(
        "awslabs/amazon-eks-ami release v20261012 (2026-10-14), which fixes the kernel panic of v20260930 and "
        "v20261003 (facts/pins/known_bad.py)",
        RECHECKED,
        newer="v20261012",
        pin_kept_because="its per-minor release versions (1.35.x-20261012 ...) and its NVIDIA driver were not read "
        "from the release page: a releaseVersion EKS would refuse cannot be pinned, nor a driver branch that might be "
        "R595 (known bad with EFA)",
    ),
    charts.GPU_OPERATOR: NewestFound(
        "NVIDIA GPU Operator release notes 26.7.2 ('Updated software component versions: DRA Driver for NVIDIA GPUs "
        "v0.5.1'); 26.7.1 also exists",
        RECHECKED,
        newer="v26.7.2",
        pin_kept_because=_not_packaged(charts.GPU_OPERATOR),
    ),
    charts.DRA_DRIVER: NewestFound(
        "kubernetes-sigs/dra-driver-nvidia-gpu release 0.5.1 (0.5.0 about 2026-08-19): host-managed IMEX (alpha gate "
        "HostManagedIMEXDaemon), optional nvidia.com/gpu.clique labels",
        RECHECKED,
        newer="0.5.1",
        pin_kept_because=_not_packaged(charts.DRA_DRIVER) + "; its upgrade notes were not read",
    ),
    charts.KUEUE: NewestFound(
        "kubernetes-sigs/kueue release v0.20.5 (v0.21.0-rc.3 exists); v0.20.0 no longer serves kueue.x-k8s.io/v1beta1",
        RECHECKED,
        newer="0.20.5",
        pin_kept_because=_not_packaged(charts.KUEUE)
        + "; 0.20 drops the v1beta1 API and refuses a DRA mapping named 'pods'",
    ),
    charts.KUBE_PROMETHEUS_STACK: NewestFound(
        "prometheus-community/helm-charts release kube-prometheus-stack-93.9.0 (five majors past the pin)",
        RECHECKED,
        newer="93.9.0",
        pin_kept_because=_not_packaged(charts.KUBE_PROMETHEUS_STACK) + "; each major needs its CRDs applied first",
    ),
    charts.EFA_DEVICE_PLUGIN: NewestFound(
        "aws/eks-charts release v0.0.249: 'Release EFA device plugin v0.5.22-eksbuild.9' (the chart version was not "
        "read)",
        RECHECKED,
        newer="app v0.5.22-eksbuild.9 (eks-charts v0.0.249)",
        pin_kept_because="the chart version of that release was not read, and "
        + _not_packaged(charts.EFA_DEVICE_PLUGIN),
    ),
    charts.DRANET: NewestFound(
        "aws/eks-charts release v0.0.249: 'DRANET v1.2.0-eksbuild.39' (the chart version was not read)",
        RECHECKED,
        newer="app v1.2.0-eksbuild.39 (eks-charts v0.0.249)",
        pin_kept_because="the chart version of that release was not read, and " + _not_packaged(charts.DRANET),
    ),
    charts.NODE_TERMINATION_HANDLER: NewestFound(
        "aws/aws-node-termination-handler: the pinned chart's tag (v1.25.6, commit 77ca841d, 2026-04-02) is the "
        "newest tag read, and no newer release was found on 2026-11-28; later releases UNVERIFIED",
        RECHECKED,
    ),
    MPI_OPERATOR: NewestFound(
        "kubeflow/mpi-operator: the pinned tag (commit 101db144, 2026-02-18) is the newest tag in a mirror whose last "
        "commit is 2026-07-02; later releases UNVERIFIED",
        _EARLIER,
    ),
}
"""Re-checks of the newest upstream release, by set entry name."""
