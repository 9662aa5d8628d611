"""What the kubelet of an EKS AL2023 node leaves to pods (its allocatable CPU), and the CPU share that lets one pod,
and only one, onto a whole GB200 node as Kueue's topology-aware scheduling (TAS) counts it.

Why a share at all. Kueue 0.19.2 sizes a pod for TAS from its pod spec alone (kubernetes-sigs/kueue tag v0.19.2,
commit 8eab6877, ``pkg/scheduler/flavorassigner/tas_flavorassigner.go:111-112``: "Use PodSpec directly for TAS
placement, not quota-filtered admission values", ``resources.NewRequestsFromPodSpec``), adds one ``pods`` to it
(``pkg/cache/scheduler/tas_flavor_snapshot.go:903-904``) and counts how often that fits a node's allocatable minus the
usage of pods outside TAS (``tas_flavor_snapshot.go:89-92``, ``fillLeafCounts`` 1899-1913,
``pkg/cache/scheduler/tas_topology_tree.go:167`` reads ``node.Status.Allocatable``). DRA claims are not in the pod
spec's requests: "DRA resources are not accounted for in TAS capacity calculations"
(``site/content/en/docs/concepts/dynamic_resource_allocation.md:268-270``). A pod that asks only for claims fits a
node as often as its pod limit allows, and Kueue writes the chosen hostname into each pod's nodeSelector
(``pkg/controller/tas/topology_ungater.go:312-315``), so several whole-node pods can be sent to one node, where all
but one wait for devices for good. CPU is excluded from the toolkit's quota (facts/kubernetes/kueue.py
EXCLUDED_RESOURCE_PREFIXES) but TAS still counts it: the pod spec, not the quota view, is what it sizes.

A CPU request above half the node's allocatable fits a node once, whatever else runs there (other pods only lower
what is free); at most the allocatable minus the DaemonSets' requests, it fits at all. CPU is chosen over memory
because a node's CPU capacity is its vCPU count exactly, while its memory capacity is the kernel's MemTotal, which
is below the advertised memory by an amount nobody here measured.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal, InvalidOperation

from ultraserver.facts.hardware.instances import VCPUS

MILLICORES_PER_CORE = 1000
KUBE_RESERVED_CPU_BANDS: tuple[tuple[int, int], ...] = ((1000, 600), (2000, 100), (4000, 50))
"""(upper end of the band in millicores, basis points reserved) for the first 4 cores; every millicore above 4 cores
reserves KUBE_RESERVED_CPU_REST basis points. nodeadm (awslabs/amazon-eks-ami at 81fec2e8, 2026-07-23)
``nodeadm/internal/kubelet/config.go:410-440`` (getCPUMillicoresToReserve: 6% of the first core, 1% of the second,
0.5% of cores 3-4, 0.25% above) sets it as ``kubeReserved.cpu`` (config.go:283-287); it sets no ``systemReserved``
(only the cgroup, config.go:275), so allocatable CPU is capacity minus this. The toolkit's NodeConfig sets no
kubelet config that overrides it (builders/nodeconfig.py passes only flags)."""
KUBE_RESERVED_CPU_REST = 25


def kube_reserved_cpu_millicores(vcpus: int) -> int:
    """nodeadm's kubeReserved CPU for a node of `vcpus` vCPUs (integer arithmetic per band, as nodeadm does)."""
    total = vcpus * MILLICORES_PER_CORE
    reserved, start = 0, 0
    for end, basis_points in (*KUBE_RESERVED_CPU_BANDS, (max(total, 4000), KUBE_RESERVED_CPU_REST)):
        if total > start:
            reserved += (min(total, end) - start) * basis_points // 10000
        start = end
    return reserved


def allocatable_cpu_millicores(instance_type: str) -> int | None:
    """Allocatable CPU of a node of the type on the EKS AL2023 AMI; None for a type without a known vCPU count."""
    vcpus = VCPUS.get(instance_type)
    if vcpus is None:
        return None
    return vcpus * MILLICORES_PER_CORE - kube_reserved_cpu_millicores(vcpus)


def whole_node_cpu_millicores(instance_type: str) -> int | None:
    """The CPU request of a whole-node pod: the fewest whole cores above half the node's allocatable, so TAS fits it
    once per node and never twice. None for a type without a known vCPU count."""
    allocatable = allocatable_cpu_millicores(instance_type)
    if allocatable is None:
        return None
    return (allocatable // 2 // MILLICORES_PER_CORE + 1) * MILLICORES_PER_CORE


_DECIMAL_SUFFIXES = {"m": Decimal("0.001"), "": Decimal(1), "k": Decimal(10**3), "M": Decimal(10**6)}


def cpu_millicores(quantity: object) -> int | None:
    """A CPU quantity as written in a pod spec (``2``, ``"500m"``, ``"1.5"``) in millicores, rounded up as the API
    server rounds; None when it is not one."""
    if isinstance(quantity, bool) or not isinstance(quantity, (int, float, str)):
        return None
    text = str(quantity).strip()
    suffix = text[-1:] if text[-1:] in _DECIMAL_SUFFIXES else ""
    try:
        value = Decimal(text[: len(text) - len(suffix)]) * _DECIMAL_SUFFIXES[suffix]
    except InvalidOperation:
        return None
    if not value.is_finite() or value < 0:
        return None
    return int((value * MILLICORES_PER_CORE).to_integral_value(rounding=ROUND_CEILING))
