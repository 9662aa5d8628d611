"""``--break node-fails`` on the real programs (``--api real``, issue 46 §2): after the admission stage
(rehearse/scheduling.py) has started them, a whole-UltraServer Job admitted by the real Kueue v0.19.2 (TAS) runs on
kwok's nodes of one UltraServer; kwok turns one of them NotReady and keeps it so (its node stage,
controllers.kwok_stages); the toolkit's spares controller (``incluster/spares.py``, as the drain's CronJob runs it,
with the drain's ServiceAccount token) frees a spare and taints the failed node; kube-controller-manager's
taint-eviction controller deletes the pod there; then the real Kueue must move it: its node controller marks the node
unhealthy, its scheduler puts a replacement into the Workload's topology assignment, its ungater sends the Job
controller's new pod there, kube-scheduler binds it.

Nothing here moves a pod: the stage only breaks the node, runs the controller once at the end of its grace, and
reads where the real programs put the pods. On a stack without spares it shows the loss and the alert.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ultraserver.config.settings import Settings
from ultraserver.config.views import imex_targets
from ultraserver.facts.kubernetes.scheduling import CLIQUE_LABEL, ULTRASERVER_LABEL
from ultraserver.facts.kubernetes.spares import FAILURE_GRACE_MINUTES
from ultraserver.incluster import drain, drain_main, rest, spares
from ultraserver.rehearse.apis import Api, guarded, script_account
from ultraserver.rehearse.cluster import cronjob_env
from ultraserver.rehearse.control_plane import ApiError, ControlPlane
from ultraserver.rehearse.controllers import NOT_READY_LABEL
from ultraserver.rehearse.kueue_reads import assigned_nodes, condition, free_nodes, owned_by, until, workloads
from ultraserver.rehearse.node_failure import as_node
from ultraserver.rehearse.reclaim import drain_inputs
from ultraserver.rehearse.scheduling import HELD_JOB, sample_job
from ultraserver.rehearse.stage import Stage
from ultraserver.verify.spares import spare_view

STAGE = "node failure (real Kueue)"
JOB = "rehearse-node-fails"
RESTARTS = 3
"""The Job's backoffLimit: a training job restarts its lost pod from the last checkpoint (with 0, the Job controller
fails the whole Job when the failed node's pod is deleted)."""
WATCHED_FOR = 15.0
"""Seconds Kueue is given to act on a stack without spares before its Workload is read."""

Controller = Callable[[datetime], list[dict[str, str]]]
"""One run of the spares controller at a moment; what it reports (``spares.findings``)."""


def spares_controller(target: Api, objects: Sequence[dict[str, Any]], account: Path, stack: str) -> Controller:
    """The spares part of the drain's run (drain_main.run: gpu_nodes, spares.run_once, spares.findings), against the
    real API as the drain CronJob's ServiceAccount, its groups from the CronJob's SPARES."""
    groups = spares.groups_from((cronjob_env(objects, "SPARES") or {}).get("SPARES", ""))

    def run(now: datetime) -> list[dict[str, str]]:
        env = target.account(account, *script_account(objects, "SPARES"))
        api = drain_main.StdlibApi(str(account), env)
        spares.run_once(api, groups, now, rest.gpu_nodes(api))
        return spares.findings(stack, rest.gpu_nodes(api), groups, now)

    return run


def _time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class RealFailure:
    """The stage on the running programs; ``lines`` and ``failed`` as it goes."""

    def __init__(
        self, plane: ControlPlane, served: Any, settings: Settings, controller: Controller, release: Callable[[], None]
    ) -> None:
        self.plane, self.served, self.settings = plane, served, settings
        self.controller, self.release = controller, release
        self.namespace = settings.kubernetes.kueue.local_queue_namespaces[0]
        self.lines: list[str] = []
        self.failed: list[str] = []

    def check(self, ok: bool, passed: str, failed: str) -> None:
        self.lines.append(passed if ok else f"FAILED {failed}")
        if not ok:
            self.failed.append(failed)

    def _nodes(self) -> dict[str, dict[str, Any]]:
        return {n["metadata"]["name"]: n for n in self.plane.call("GET", "/api/v1/nodes")["items"]}

    def _listed(self) -> list[dict[str, Any]]:
        path = f"/api/v1/namespaces/{self.namespace}/pods?labelSelector=job-name%3D{JOB}"
        return list(self.plane.call("GET", path)["items"])

    def _pods(self) -> dict[str, str]:
        """Each live pod of the Job bound to a node, Running (kwok's pod stage), and its node."""
        return {
            p["metadata"]["name"]: p["spec"]["nodeName"]
            for p in self._listed()
            if p["spec"].get("nodeName")
            and not p["metadata"].get("deletionTimestamp")
            and (p.get("status") or {}).get("phase") == "Running"
        }

    def _workload(self) -> dict[str, Any]:
        return next((w for w in workloads(self.plane, self.namespace) if owned_by(w, JOB)), {})

    def _queue_free(self) -> None:
        """The admission stage's held job gone and the drain's reclaim hold released by the drain's own request (as
        after an extension): a held ClusterQueue admits nothing, replacements included."""
        background = {"propagationPolicy": "Background", "gracePeriodSeconds": 0}
        try:
            self.plane.call("DELETE", f"/apis/batch/v1/namespaces/{self.namespace}/jobs/{HELD_JOB}", background)
        except ApiError as error:
            if error.code != 404:  # none held: the admission stage had no hold to show
                raise
        until(
            f"Job {HELD_JOB}'s workload gone",
            lambda: not any(owned_by(w, HELD_JOB) for w in workloads(self.plane, self.namespace)),
        )
        self.release()

    def run(self) -> Stage:
        self._queue_free()
        before, ultraserver, standby = self._admitted()
        failed = sorted(before.values())[0]
        now, findings = self._fail(failed)
        if standby:
            self._replaced(before, failed, standby, ultraserver)
            self.check(
                any(f["key"].startswith("spare-used:") for f in findings),
                "the spare-used alert was raised",
                "no spare-used alert",
            )
        else:
            self._lost(ultraserver, findings, now)
        return Stage(STAGE, 1 if self.failed else 0, "\n".join(self.lines))

    def _admitted(self) -> tuple[dict[str, str], str, list[str]]:
        """The Job admitted and Running: its pods' nodes, its UltraServer, the spares held back there."""
        objects = sample_job(self.settings, JOB, self.namespace)
        objects[-1]["spec"]["backoffLimit"] = RESTARTS
        wanted = int(objects[-1]["spec"]["parallelism"])
        self.served.put(objects)
        before = until(f"Job {JOB}: {wanted} pods Running", lambda: (p := self._pods()) and len(p) == wanted and p)
        nodes = self._nodes()
        home = {_label(nodes[n], ULTRASERVER_LABEL) for n in before.values()}
        ultraserver = sorted(home)[0]
        standby = sorted(
            n
            for n, raw in nodes.items()
            if spares.role(raw) == spares.SPARE and _label(raw, ULTRASERVER_LABEL) == ultraserver
        )
        self.lines.append(
            f"Kueue admitted Job {JOB} ({wanted} whole-node pods); kube-scheduler bound them on {len(home)} "
            f"UltraServer(s) ({ultraserver}); spares held back there (tainted by the controller): "
            f"{', '.join(standby) or 'none'}"
        )
        return before, ultraserver, standby

    def _fail(self, failed: str) -> tuple[datetime, list[dict[str, str]]]:
        """kwok's stage makes the node NotReady; the controller runs once at the end of its grace: its moment and
        what it reported."""
        self.plane.call(
            "PATCH",
            f"/api/v1/nodes/{failed}",
            {"metadata": {"labels": {NOT_READY_LABEL: "true"}}},
            "application/merge-patch+json",
        )
        since = _time(until(f"node {failed} NotReady (kwok's stage)", lambda: _not_ready_since(self._nodes()[failed])))
        self.lines.append(
            f"kwok marked node {failed} (pod of Job {JOB}) Ready=Unknown at {since:%H:%M:%S} and keeps it"
        )
        # The controller's clock at the end of its grace (its CronJob runs every minute; it has waited since).
        now = since + timedelta(minutes=FAILURE_GRACE_MINUTES, seconds=1)
        findings = self.controller(now)
        nodes = self._nodes()
        notes = {n: raw["metadata"].get("annotations") or {} for n, raw in nodes.items()}
        freed = [n for n, note in notes.items() if note.get(spares.REPLACES_ANNOTATION) == failed]
        taints = [f"{t['key']}:{t['effect']}" for t in nodes[failed]["spec"].get("taints") or []]
        self.lines.append(
            f"the spares controller (its ServiceAccount) at failure + {FAILURE_GRACE_MINUTES} min: node {failed} "
            f"role {_label(nodes[failed], spares.ROLE_LABEL) or 'none'}, taints {', '.join(taints) or 'none'}; "
            f"spare freed: {', '.join(freed) or 'none'}"
        )
        self.lines += [f"alert to the stack's topic: {f['subject']}" for f in findings]
        return now, findings

    def _none_free(self, before: dict[str, str], failed: str) -> bool:
        """Whether no node is free for the failed node's pod, said as the stage's failure. The controller has run its
        one time, and nothing else frees a node: with none free now, none ever is. The Job's pods share one template,
        with the tolerations Kueue's flavor and the admission plugins gave it."""
        listed = self._listed()
        tolerations = (listed[0]["spec"].get("tolerations") or []) if listed else []
        if not listed or free_nodes(self._nodes().values(), set(before.values()), tolerations):
            return False
        self.check(
            False,
            "",
            f"Kueue's replacement of node {failed} in Job {JOB}'s assignment: never: no node is free for it (each "
            "GPU node holds a pod of the Job, is tainted NoSchedule or NoExecute, or is not Ready), so Kueue "
            "cannot place the pod; the spares controller must free a spare of the failed node's UltraServer",
        )
        return True

    def _replaced(self, before: dict[str, str], failed: str, standby: list[str], ultraserver: str) -> None:
        """With spares: the real Kueue must move the failed node's pod onto a spare of the same UltraServer."""

        def moved() -> dict[str, str] | None:
            pods, assigned = self._pods(), assigned_nodes(self._workload())
            done = len(pods) == len(before) and failed not in pods.values() and failed not in assigned
            return pods if done and sorted(pods.values()) == assigned else None

        if self._none_free(before, failed):
            return
        try:
            after = until(f"Kueue's replacement of node {failed} in Job {JOB}'s assignment", moved)
        except TimeoutError as error:
            workload = self._workload()
            status = workload.get("status") or {}
            self.check(
                False,
                "",
                f"{error}: Workload unhealthyNodes {[u.get('name') for u in status.get('unhealthyNodes') or []]}, "
                f"assigned {assigned_nodes(workload)}, Evicted {condition(workload, 'Evicted').get('message', '-')}, "
                f"pods Running {self._pods()}; " + " | ".join(self._evidence()),
            )
            return
        nodes = self._nodes()
        new = sorted(set(after.values()) - set(before.values()))
        outside = [n for n in after.values() if _label(nodes[n], ULTRASERVER_LABEL) != ultraserver]
        cliques = {_label(nodes[n], CLIQUE_LABEL) for n in after.values()}
        evicted = condition(self._workload(), "Evicted")
        self.check(
            len(new) == 1 and new[0] in standby and not outside and len(cliques) == 1,
            f"real Kueue replaced {failed} with spare {', '.join(new)} of {ultraserver} in the Workload's topology "
            f"assignment; kube-scheduler bound the Job controller's new pod there",
            f"the pods moved to {new or 'no new node'} (spares were {standby}), {len(cliques)} clique(s)",
        )
        self.check(
            evicted.get("status") != "True",
            "the Workload kept its admission (no eviction)",
            f"Kueue evicted the Workload: {evicted.get('message')}",
        )
        self.lines.append(f"pods placed outside {ultraserver}: {len(outside)}")
        self.lines += self._evidence()

    def _lost(self, ultraserver: str, findings: list[dict[str, str]], now: datetime) -> None:
        """Without spares: the loss and the alert, and what Kueue did with the job meanwhile."""
        nodes = [as_node(n) for n in self._nodes().values() if ULTRASERVER_LABEL in n["metadata"].get("labels", {})]
        view = spare_view(nodes, ultraserver, imex_targets(self.settings)[0].node_devices.gpus, now)
        self.lines += view.lines() if view is not None else []
        self.check(
            view is not None and view.gpu_hours_lost > 0 and any(f["key"].startswith("no-spare:") for f in findings),
            f"the loss ({view.gpu_hours_lost if view else 0:.1f} GPU-hours so far) and the no-spare alert reported",
            "the loss or the no-spare alert was not reported; fix: see docs/health.md",
        )
        time.sleep(WATCHED_FOR)
        workload = self._workload()
        self.lines.append(
            f"Kueue meanwhile: Workload admitted {condition(workload, 'Admitted').get('status')}, unhealthyNodes "
            f"{[u.get('name') for u in (workload.get('status') or {}).get('unhealthyNodes') or []]} (no spare: the "
            "job waits for a human or the node)"
        )
        self.lines += self._evidence()

    def _evidence(self) -> list[str]:
        """What the real programs said: the taint-eviction controller's deletions of the Job's pods (its log) and
        the events on the Job's Workload (Kueue's)."""
        log = self.plane.folder / "kube-controller-manager.log"
        text = log.read_text(errors="replace").splitlines() if log.is_file() else []
        found = [f"kube-controller-manager: {line[:240]}" for line in text if "Deleting pod" in line and JOB in line]
        name = self._workload().get("metadata", {}).get("name", "")
        query = f"fieldSelector=involvedObject.name%3D{name}"
        events = self.plane.call("GET", f"/api/v1/namespaces/{self.namespace}/events?{query}")["items"] if name else []
        found += [f"event on Workload {name}: {e.get('reason')}: {str(e.get('message'))[:200]}" for e in events]
        return found


def _label(node: Mapping[str, Any], key: str) -> str:
    return str((node["metadata"].get("labels") or {}).get(key, ""))


def _not_ready_since(node: Mapping[str, Any]) -> str:
    ready: dict[str, Any] = next((c for c in node["status"].get("conditions") or [] if c["type"] == "Ready"), {})
    return "" if ready.get("status") == "True" else str(ready.get("lastTransitionTime") or "")


def real_failure_stage(
    target: Api, objects: Sequence[dict[str, Any]], settings: Settings, stack: str, folder: Path
) -> Stage:
    """The stage on the programs the admission stage started; ``folder`` holds the ServiceAccount's mount."""
    inputs = drain_inputs(objects)
    queue = inputs.cluster_queue if inputs else ""
    account = folder / "spares-account"

    def release() -> None:
        if queue:
            env = target.account(account, *script_account(objects, "BLOCKS"))
            drain.apply(drain_main.StdlibApi(str(account), env), {"kind": "release-queue", "name": queue})

    controller = spares_controller(target, objects, account, stack)
    plane = target.served.control_plane

    def run() -> Stage:
        try:
            return RealFailure(plane, target.served, settings, controller, release).run()
        except TimeoutError as error:
            return Stage(STAGE, 1, f"FAILED {error}")

    return guarded(STAGE, run)
