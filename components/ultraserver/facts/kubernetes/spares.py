"""Spare nodes inside an UltraServer: the label, taint and annotations the toolkit's spares controller sets, and the
timings a replacement is expected to take (docs/health.md, "Spares inside the NVLink domain").

A spare is a joined, Ready GB200 node of its UltraServer that no job may use: it carries ``SPARE_TAINT`` (NoSchedule),
which no job tolerates, so Kueue's topology-aware scheduling leaves it out of every placement, first and replacement
alike (kueue v0.19.2 pkg/cache/scheduler/scheduling_simulator_default.go lines 72-79: a node with an untolerated
NoSchedule/NoExecute taint is excluded). The controller takes the taint off one spare of the failed node's own
UltraServer when an active node fails, and only then lets Kueue find the replacement: the node-level search of a
pod set with a required topology stays inside the failed node's domain (pkg/cache/scheduler/tas_flavor_snapshot.go
lines 697 and 1902), and the freed spare is the one node there with room.
"""

from __future__ import annotations

from ultraserver.facts.kubernetes.scheduling import GPU_TOLERATION

ROLE_LABEL = "ultraserver.io/node-role"
"""What a GPU node of a group with spares is to the controller: ``ACTIVE``, ``SPARE``, ``FAILED``."""
ACTIVE = "active"
SPARE = "spare"
FAILED = "failed"
SPARE_TAINT = "ultraserver.io/spare"
"""NoSchedule taint of a spare; the GPU node DaemonSets tolerate it (``SPARE_TOLERATION``), no job does."""
SPARE_TAINT_EFFECT = "NoSchedule"
SPARE_TOLERATION: dict[str, str] = {"key": SPARE_TAINT, "operator": "Exists", "effect": SPARE_TAINT_EFFECT}
"""What the device plugins, GPU Operator, DRA kubelet plugin and EFA plugin carry, so a spare stays checked."""
GPU_NODE_DAEMON_TOLERATIONS = (GPU_TOLERATION, SPARE_TOLERATION)
"""What every DaemonSet of the GPU nodes tolerates: the GPU taint, and a spare's taint, so a spare keeps its device
plugins, GPU Feature Discovery labels and DRA kubelet plugin (and so passes the node-facts checks) while no job may
use it."""
FAILED_TAINT = "ultraserver.io/failed"
"""NoExecute taint the controller puts on a failed active node once a spare took its place: its pods are deleted at
once instead of after the 300 s not-ready toleration Kubernetes adds to every pod, so Kueue, which marks a node
unhealthy for a workload when the workload's pods on it have terminated or are being deleted (kueue v0.19.2
pkg/controller/tas/node_controller.go lines 385-389, 480-484, 713-724), looks for the replacement without delay."""
REPLACES_ANNOTATION = "ultraserver.io/replaces"
"""On a promoted spare: the failed node it took over."""
PROMOTED_ANNOTATION = "ultraserver.io/promoted-at"
"""On a promoted spare: when (UTC, ISO 8601)."""
FAILED_ANNOTATION = "ultraserver.io/failed-at"
"""On a failed node: when the controller first saw it fail (the start of the GPU-hours lost)."""
REASON_ANNOTATION = "ultraserver.io/failed-reason"
"""On a failed node: the condition that failed it."""
MOVED_ANNOTATION = "ultraserver.io/moved-workloads"
"""On a promoted spare: the Kueue Workloads (namespace/name) that had pods on the failed node."""
REBOOTED_ANNOTATION = "ultraserver.io/rebooted-at"
"""On a node of a self-managed group the controller rebooted: when (UTC, ISO 8601), written before the reboot so no
later run reboots it again for the same failure (facts/aws/node_repair.py ``REBOOT_AGAIN_HOURS``)."""
REBOOT_REASON_ANNOTATION = "ultraserver.io/reboot-reason"
"""On a rebooted node: the AcceleratedHardwareReady reason it was rebooted for."""
HEALTH_CONDITIONS = ("AcceleratedHardwareReady",)
"""Node conditions of the EKS node monitoring agent that fail a node when False (EKS user guide, node health:
https://docs.aws.amazon.com/eks/latest/userguide/node-health.html), beside Ready."""
FAILURE_GRACE_MINUTES = 2
"""A condition must stay bad this long before the controller acts: a kubelet restart or a short API blip makes a
node NotReady for well under a minute, and taking a spare for it would burn the spare for nothing."""
CONTROLLER_PERIOD_MINUTES = 1
"""The controller runs in the reclaim drain's CronJob, every minute."""
NODE_MONITOR_GRACE_SECONDS = 50
"""kube-controller-manager ``--node-monitor-grace-period``: how long a node that stopped posting status stays Ready
(50 s by default since Kubernetes 1.32, as kubernetes/kubernetes#127352 describes it; EKS does not publish its
control plane's value: UNVERIFIED for EKS)."""
SYSTEMIC_FRACTION = 0.5
"""More than this share of an UltraServer's nodes failing at once is a cluster-wide signal (the DCGM conflict of
docs/health.md marked healthy nodes AcceleratedHardwareReady=False): the controller alerts and takes no spare."""


def expected_replacement_minutes() -> float:
    """Minutes from a node's failure to its job's pod being placed on a spare, at most: the node is marked NotReady,
    the grace runs out, the next CronJob run promotes the spare and taints the failed node; Kueue's replacement then
    takes seconds (not counted). The job's own restart from its checkpoint comes on top."""
    return NODE_MONITOR_GRACE_SECONDS / 60 + FAILURE_GRACE_MINUTES + CONTROLLER_PERIOD_MINUTES
