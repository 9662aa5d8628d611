"""Real scheduling and admission on a rehearsal's real API server (``--api real``, issue 43 stage 2), with the
Kueue controller, kube-scheduler, kube-controller-manager and kwok running beside it (rehearse/controllers.py).

It shows for real what the other tiers replay: the plan's queued check MPIJobs admitted by Kueue (one worker per node,
in one UltraServer), a whole-UltraServer Job bound one pod per node in one UltraServer (in DRA mode with its node's
devices allocated by the scheduler), and the drain's reclaim hold keeping the next job out. Played: the ComputeDomain's
channel ResourceClaimTemplate, and Kueue's webhooks (not registered: jobs are submitted suspended, as they leave them).
"""

from __future__ import annotations

import dataclasses
import sys
import time
import urllib.error
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ultraserver.builders import device_claims
from ultraserver.builders.kueue import CLUSTER_QUEUE_NAME, LOCAL_QUEUE_NAME, podset_topology_annotations
from ultraserver.config.settings import Settings
from ultraserver.config.views import device_mode, imex_targets
from ultraserver.facts.hardware.devices import CHANNEL_DEVICE_CLASS, RESOURCE_API_VERSION
from ultraserver.facts.kubernetes import kueue
from ultraserver.facts.kubernetes.scheduling import EFA_RESOURCE, GPU_RESOURCE, ULTRASERVER_LABEL
from ultraserver.facts.pins.manifests import NCCL_TESTS_IMAGE
from ultraserver.rehearse.control_plane import ApiError, ControlPlane
from ultraserver.rehearse.controllers import plan_configuration, start
from ultraserver.rehearse.kueue_reads import WORKLOADS, assigned_nodes, condition, owned_by, until, workloads
from ultraserver.rehearse.stage import Stage

STAGE = "admission (Kueue, kube-scheduler)"
HELD_FOR = 20.0
"""Seconds a job is watched under the reclaim hold: Kueue admits a fitting job in about a second once it is active."""
SAMPLE_JOB = "rehearse-whole-ultraserver"
HELD_JOB = "rehearse-after-hold"
DEVICES_TEMPLATE = "rehearse-whole-node"


@dataclass
class Placement:
    """One workload and where it went."""

    workload: str
    job: str
    admitted: bool
    nodes: list[str] = field(default_factory=list)
    """The nodes of its topology assignment (Kueue's decision)."""
    pods: dict[str, str] = field(default_factory=dict)
    """Each pod and the node it was bound to (the scheduler's decision); empty where no pod is made."""
    claims: dict[str, list[str]] = field(default_factory=dict)
    """DRA mode: each pod's allocated devices (``node/device``: the node whose ResourceSlice published it)."""

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def channel_templates(objects: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each ComputeDomain's channel ResourceClaimTemplate, as the DRA driver's controller makes it: one channel of
    the domain's DeviceClass (the driver also scopes it to the domain with an opaque config, left out here: no
    channel device is published in a rehearsal, so nothing allocates it)."""
    found = []
    for domain in objects:
        if domain["kind"] != "ComputeDomain":
            continue
        name = domain["spec"]["channel"]["resourceClaimTemplate"]["name"]
        request = {"name": "channel", "exactly": {"deviceClassName": CHANNEL_DEVICE_CLASS}}
        found.append(
            {
                "apiVersion": RESOURCE_API_VERSION,
                "kind": "ResourceClaimTemplate",
                "metadata": {"name": name, "namespace": domain["metadata"].get("namespace") or "default"},
                "spec": {"spec": {"devices": {"requests": [request]}}},
            }
        )
    return found


def sample_job(settings: Settings, name: str, namespace: str) -> list[dict[str, Any]]:
    """A whole-UltraServer training Job as a user submits it through the toolkit's queue: one whole-node pod per
    node of the first UltraServer's available nodes, inside one NVLink clique (the job helpers' pod-set annotation),
    its devices by the stack's device mode (plugin resources, or a whole-node ResourceClaimTemplate in DRA mode);
    suspended, as Kueue's webhook leaves it. No node selector: Kueue picks the UltraServer."""
    target = imex_targets(settings)[0]
    nodes, node = target.available_nodes, target.node_devices
    container: dict[str, Any] = {"name": "train", "image": NCCL_TESTS_IMAGE, "command": ["/bin/true"]}
    pod: dict[str, Any] = {"restartPolicy": "Never", "containers": [container]}
    objects: list[dict[str, Any]] = []
    if device_mode(settings).dra:
        objects.append(device_claims.claim_template(DEVICES_TEMPLATE, namespace, node))
        pod["resourceClaims"] = [device_claims.pod_claim(DEVICES_TEMPLATE)]
        container["resources"] = device_claims.whole_node_resources(node)
    else:
        limits = {GPU_RESOURCE: str(node.gpus), **({EFA_RESOURCE: str(node.efa_devices)} if node.efa_devices else {})}
        container["resources"] = {"limits": limits}
    annotations = podset_topology_annotations(nodes, target.instance_count)
    objects.append(
        {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": name, "namespace": namespace, "labels": {kueue.QUEUE_NAME_LABEL: LOCAL_QUEUE_NAME}},
            "spec": {
                "parallelism": nodes,
                "completions": nodes,
                "completionMode": "Indexed",
                "suspend": True,
                "backoffLimit": 0,
                "template": {"metadata": {"annotations": annotations}, "spec": pod},
            },
        }
    )
    return objects


@dataclass
class Admission:
    """The stage's findings: each workload's placement, and what failed."""

    placements: list[Placement] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def check(self, ok: bool, passed: str, failed: str) -> None:
        self.lines.append(passed if ok else f"FAILED {failed}")
        if not ok:
            self.failed.append(failed)

    def stage(self) -> Stage:
        return Stage(STAGE, 1 if self.failed else 0, "\n".join(self.lines))


class Scheduling:
    """The stage against a running control plane with the cluster served (``served``: the RealApi)."""

    def __init__(
        self,
        plane: ControlPlane,
        served: Any,
        settings: Settings,
        objects: Sequence[dict[str, Any]],
        hold: Callable[[], None] | None,
    ) -> None:
        self.plane, self.served, self.settings, self.objects, self.hold = plane, served, settings, objects, hold
        self.nodes = {n["metadata"]["name"]: n for n in plane.call("GET", "/api/v1/nodes")["items"]}
        self.found = Admission()
        self.namespace = settings.kubernetes.kueue.local_queue_namespaces[0]

    def run(self) -> Admission:
        until("the ClusterQueue Active (Kueue running with the plan's flavors and Topology)", self._queue_active)
        self.found.lines.append(f"ClusterQueue {CLUSTER_QUEUE_NAME} Active under the real Kueue controller")
        self._check_jobs()
        if not self._sample():
            # Its pods still hold the quota the hold is judged on: the hold would be judged on a full queue.
            self.found.lines.append(f"the reclaim hold: not judged, Job {SAMPLE_JOB}'s pods were not all bound")
        elif self.hold is None:
            self.found.lines.append("the reclaim hold: not shown, the stack deploys no drain (no block window)")
        else:
            self._held(self.hold)
        return self.found

    def _queue_active(self) -> bool:
        queue = self.plane.call("GET", f"{WORKLOADS}/clusterqueues/{CLUSTER_QUEUE_NAME}")
        return condition(queue, "Active").get("status") == "True"

    def _ultraservers(self, nodes: Sequence[str]) -> set[str]:
        return {str((self.nodes[n]["metadata"].get("labels") or {}).get(ULTRASERVER_LABEL)) for n in nodes}

    def _whole(self, placement: Placement, nodes: Sequence[str], wanted: int, what: str) -> None:
        ultraservers = self._ultraservers(nodes)
        self.found.check(
            len(nodes) == wanted and len(set(nodes)) == len(nodes) and len(ultraservers) == 1,
            f"{what}: {len(nodes)} pod(s) on {len(set(nodes))} node(s), UltraServer {', '.join(sorted(ultraservers))}",
            f"{what}: {len(nodes)} pod(s) on {len(set(nodes))} distinct node(s) of UltraServer(s) "
            f"{', '.join(sorted(ultraservers)) or 'none'}; expected {wanted}, one per node, in one UltraServer",
        )

    def _check_jobs(self) -> None:
        """Each check MPIJob of the plan that names a queue (the others are not Kueue's: the plan exempts the
        cross-UltraServer and fleet checks on purpose) admitted with one worker per node in one UltraServer, in the
        order Kueue admits them; each removed once seen (no MPI Operator runs it), so its quota goes to the next."""
        waiting: dict[tuple[str, str], dict[str, Any]] = {}
        for job in (o for o in self.objects if o["kind"] == "MPIJob"):
            meta = job["metadata"]
            if kueue.QUEUE_NAME_LABEL in (meta.get("labels") or {}):
                waiting[(meta.get("namespace") or "default", meta["name"])] = job
            else:
                why = (meta.get("annotations") or {}).get(kueue.EXEMPT_ANNOTATION, "no exemption given")
                self.found.lines.append(f"MPIJob {meta.get('namespace')}/{meta['name']}: no queue, not Kueue's ({why})")

        def next_admitted() -> tuple[tuple[str, str], dict[str, Any]] | None:
            for (namespace, name), _ in waiting.items():
                for workload in workloads(self.plane, namespace):
                    if owned_by(workload, name) and condition(workload, "Admitted").get("status") == "True":
                        return (namespace, name), workload
            return None

        while waiting:
            try:
                (namespace, name), workload = until(
                    "an admission of " + ", ".join(n for _, n in waiting), next_admitted
                )
            except TimeoutError as error:
                self.found.check(False, "", f"MPIJob(s) not admitted by Kueue: {error}")
                return
            job = waiting.pop((namespace, name))
            wanted = int(job["spec"]["mpiReplicaSpecs"]["Worker"]["replicas"])
            nodes = assigned_nodes(workload)
            placement = Placement(workload["metadata"]["name"], f"MPIJob {namespace}/{name}", True, nodes)
            self.found.placements.append(placement)
            self._whole(placement, nodes, wanted, f"MPIJob {namespace}/{name} admitted by Kueue, workers assigned")
            self.served.remove(job)
            for owned in [w for w in workloads(self.plane, namespace) if owned_by(w, name)]:
                self.served.remove(owned)

    def _pods(self, job: str) -> list[dict[str, Any]]:
        path = f"/api/v1/namespaces/{self.namespace}/pods?labelSelector=job-name%3D{job}"
        return list(self.plane.call("GET", path)["items"])

    def _sample(self) -> bool:
        """The whole-UltraServer Job admitted and bound; False when its pods were not all bound in time."""
        objects = sample_job(self.settings, SAMPLE_JOB, self.namespace)
        self.served.put(objects)
        wanted = int(objects[-1]["spec"]["parallelism"])
        dra = device_mode(self.settings).dra
        claims: dict[str, list[str]] = {}

        def bound() -> list[dict[str, Any]] | None:
            # A pod is bound only once the scheduler has allocated its claims.
            pods = [p for p in self._pods(SAMPLE_JOB) if p["spec"].get("nodeName")]
            for pod in pods:
                if dra and not claims.get(pod["metadata"]["name"]):
                    claims[pod["metadata"]["name"]] = self._devices(pod)
            return pods if len(pods) == wanted else None

        try:
            pods = until(f"Job {SAMPLE_JOB}: {wanted} pods bound", bound)
        except TimeoutError as error:
            pods = self._pods(SAMPLE_JOB)
            gated = sum(1 for p in pods if p["spec"].get("schedulingGates"))
            placed = sum(1 for p in pods if p["spec"].get("nodeName"))
            self.found.check(False, "", f"{error} ({len(pods)} pod(s), {gated} gated, {placed} bound)")
            return False
        workload = next(w for w in workloads(self.plane, self.namespace) if owned_by(w, SAMPLE_JOB))
        placement = Placement(
            workload["metadata"]["name"],
            f"Job {self.namespace}/{SAMPLE_JOB}",
            True,
            assigned_nodes(workload),
            {p["metadata"]["name"]: p["spec"]["nodeName"] for p in pods},
            claims,
        )
        self.found.placements.append(placement)
        nodes = list(placement.pods.values())
        self._whole(placement, nodes, wanted, f"Job {SAMPLE_JOB} admitted, its pods bound by kube-scheduler")
        self.found.check(
            sorted(nodes) == placement.nodes,
            "the pods are on the nodes of Kueue's topology assignment",
            f"pods on {sorted(nodes)}, Kueue assigned {placement.nodes}",
        )
        if dra:
            self._judge_claims(placement)
        return True

    def _devices(self, pod: Mapping[str, Any]) -> list[str]:
        """The devices allocated to the pod's claims, as ``node/device`` (the node of the ResourceSlice pool
        that published each)."""
        pools = {
            (s["spec"]["driver"], s["spec"]["pool"]["name"]): s["spec"].get("nodeName", "")
            for s in self.plane.call("GET", f"/apis/{RESOURCE_API_VERSION}/resourceslices")["items"]
        }
        found = []
        for status in (pod.get("status") or {}).get("resourceClaimStatuses") or []:
            path = f"/apis/{RESOURCE_API_VERSION}/namespaces/{self.namespace}/resourceclaims"
            claim = self.plane.call("GET", f"{path}/{status['resourceClaimName']}")
            allocation = (claim.get("status") or {}).get("allocation") or {}
            for result in (allocation.get("devices") or {}).get("results") or []:
                found.append(f"{pools.get((result['driver'], result['pool']), '?')}/{result['device']}")
        return found

    def _judge_claims(self, placement: Placement) -> None:
        """In DRA mode: each pod's claim allocated by the scheduler from its own node's ResourceSlices, the whole
        node's devices (never two whole-node pods on one node)."""
        node = imex_targets(self.settings)[0].node_devices
        wanted = node.gpus + node.efa_devices
        for name, where in placement.pods.items():
            devices = placement.claims.get(name) or []
            own = all(d.split("/", 1)[0] == where for d in devices)
            self.found.check(
                len(devices) == wanted and own,
                f"pod {name}: {len(devices)} devices of {where} allocated by kube-scheduler",
                f"pod {name} on {where}: {len(devices)} device(s) allocated ({', '.join(devices) or 'none'}); "
                f"expected the node's {wanted}, all from its own ResourceSlices",
            )

    def _held(self, hold: Callable[[], None]) -> None:
        """The drain's reclaim hold (``hold``: the drain's own request, as its ServiceAccount) keeps jobs out."""
        # Its quota back first, so that only the hold can keep the next job out.
        background = {"propagationPolicy": "Background", "gracePeriodSeconds": 0}
        self.plane.call("DELETE", f"/apis/batch/v1/namespaces/{self.namespace}/jobs/{SAMPLE_JOB}", background)
        try:
            # The garbage collector's pace: as slow as an admission on a loaded machine (CI's gb200-multi: over 60 s).
            until(f"Job {SAMPLE_JOB}'s workload gone", lambda: not self._sample_workloads(SAMPLE_JOB))
        except TimeoutError as error:
            self.found.check(False, "", f"{error}: the hold cannot be judged on a full queue")
            return
        try:
            hold()
        except urllib.error.HTTPError as error:
            self.found.check(False, "", f"the drain's reclaim hold was refused: HTTP {error.code} ({error.url})")
            return
        self.served.put(sample_job(self.settings, HELD_JOB, self.namespace)[-1:])
        time.sleep(HELD_FOR)
        held = self._sample_workloads(HELD_JOB)
        admitted = [w for w in held if condition(w, "QuotaReserved").get("status") == "True"]
        pods = [p for p in self._pods(HELD_JOB) if p["spec"].get("nodeName")]
        self.found.check(
            not admitted and not pods,
            f"under the reclaim hold (stopPolicy Hold) Job {HELD_JOB} waits: {len(held)} workload(s), none "
            f"admitted after {HELD_FOR:.0f} s, no pod bound",
            f"under the reclaim hold Job {HELD_JOB} was admitted ({len(admitted)} workload(s), {len(pods)} pod(s) "
            "bound)",
        )
        self.found.placements += [
            Placement(w["metadata"]["name"], f"Job {self.namespace}/{HELD_JOB}", False) for w in held
        ]

    def _sample_workloads(self, job: str) -> list[dict[str, Any]]:
        return [w for w in workloads(self.plane, self.namespace) if owned_by(w, job)]


def admission_stage(
    plane: ControlPlane,
    served: Any,
    settings: Settings,
    objects: Sequence[dict[str, Any]],
    releases: Sequence[Any],
    hold: Callable[[], None] | None,
    nodes_fail: bool = False,
) -> tuple[Stage, list[Placement]]:
    """The stage on the running control plane: the programs built on first use (progress on stderr), started, the
    workloads submitted and judged, ``hold`` (the drain's reclaim hold; None without a drain) tried last;
    ``nodes_fail``: the programs a node failure needs started too (controllers.start). Not judged for a stack without
    Kueue, or when Kueue's CRDs are not served (the charts were not rendered: ``--charts``)."""
    from ultraserver.rehearse.binaries import ensure, scheduling_programs

    config = plan_configuration(releases)
    if config is None:
        return Stage(STAGE, 0, "not run: the stack installs no Kueue", judged=False), []
    try:
        plane.call("GET", f"{WORKLOADS}/clusterqueues")
    except ApiError:
        return Stage(STAGE, 0, "not run: Kueue's CRDs are not served (give --charts)", judged=False), []
    paths = ensure(scheduling_programs(settings.cluster.kubernetes_version), sys.stderr)
    # Before Kueue starts: it marks a workload whose claim template is missing inadmissible, retries it with a backoff
    # that doubles per try and watches no templates (kueue v0.19.2 pkg/controller/core/workload_controller.go 474-490,
    # 1624-1646), so a template made late on a loaded machine was seen minutes later still (CI, session 13).
    served.put(channel_templates(objects))
    start(plane, paths, plane.folder / "scheduling", config, nodes_fail)
    try:
        found = Scheduling(plane, served, settings, objects, hold).run()
    except TimeoutError as error:
        tails = [
            f"{name}: " + " | ".join(log.read_text(errors="replace").strip().splitlines()[-4:])
            for name in paths
            if (log := plane.folder / f"{name}.log").is_file()
        ]
        return Stage(STAGE, 1, "\n".join([f"FAILED {error}; the last lines of each program's log:", *tails])), []
    versions = ", ".join(f"{p.name} {p.version}" for p in scheduling_programs(settings.cluster.kubernetes_version))
    found.lines.insert(0, f"ran {versions}")
    return found.stage(), found.placements
