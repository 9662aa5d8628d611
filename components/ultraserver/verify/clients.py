"""Kubernetes API access for ``verify``: a small read-only Protocol, plain data, and the real client behind it.

Checks only see ``ClusterReader`` and the plain ``Node``/``Pod`` records, so tests drive them with a fake.
Every failure to reach or read the API becomes ``ClusterError`` (one line, no traceback), which the checks
turn into a FAILED verdict for the check that needed the data.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ultraserver.config.files import load_yaml
from ultraserver.problems import ConfigError
from ultraserver.verify.exec_plugin import ExecPluginSilent, check_exec_plugin, merged

KUBERNETES_CLIENT_REQUIREMENT = "kubernetes>=31,<36"
T = TypeVar("T")


class ClusterError(RuntimeError):
    """The Kubernetes API could not be reached or refused a read (message says which call and why)."""


class KubeconfigError(ClusterError):
    """The kubeconfig is missing or unusable: bad input, nothing in the cluster was read."""


@dataclass(frozen=True)
class Node:
    """What the checks need of one node."""

    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    allocatable: Mapping[str, str] = field(default_factory=dict)
    """Allocatable resources as the API reports them (quantities as strings)."""
    ready: bool = True
    ready_changed: datetime | None = None
    """When the Ready condition last changed status (its lastTransitionTime); None when not reported."""
    provider_id: str = ""
    """spec.providerID; on EC2 aws:///<zone>/<instance id>."""
    annotations: Mapping[str, str] = field(default_factory=dict)
    """metadata.annotations (the spares controller's notes: facts/kubernetes/spares.py)."""
    unschedulable: bool = False
    """spec.unschedulable: cordoned (kubectl cordon, a drain), so no new pod lands on it."""
    taints: tuple[tuple[str, str, str], ...] = ()
    """spec.taints as (key, value, effect)."""
    pressure: tuple[str, ...] = ()
    """The node conditions other than Ready that are True (MemoryPressure, DiskPressure, PIDPressure, ...)."""


@dataclass(frozen=True)
class Pod:
    """What the checks need of one pod."""

    name: str
    namespace: str
    node_name: str = ""
    phase: str = "Pending"
    ready: bool = False
    created: str = ""
    """Creation timestamp in RFC 3339 (sorts in time order)."""
    labels: Mapping[str, str] = field(default_factory=dict)
    finished: str = ""
    """When its last container terminated, RFC 3339 ('' while any still runs or none reported)."""
    waiting: str = ""
    """The reason a container of it waits (ContainerCreating, ImagePullBackOff, ...); '' when none waits."""


class ClusterReader(Protocol):
    """The reads ``verify`` makes; each raises ClusterError when the API cannot answer."""

    def nodes(self) -> list[Node]:
        """Every node."""

    def device_classes(self) -> list[str]:
        """Names of the DRA DeviceClasses (resource.k8s.io)."""

    def pods(self, namespace: str, selector: str) -> list[Pod]:
        """Pods of a namespace matching a label selector."""

    def pod_log(self, namespace: str, name: str, tail_lines: int | None = None) -> str:
        """A pod's log (the last `tail_lines` lines when given)."""

    def resource_slices(self) -> list[dict[str, Any]]:
        """resource.k8s.io/v1 ResourceSlices as plain objects (read in DRA mode, Kubernetes 1.35+)."""


class ReadOnce:
    """A ClusterReader asking the API once per distinct list of a run: verify's checks and its acceptance judge the
    same nodes and launcher pods, read once (an API that does not answer fails once too, not once per reader)."""

    def __init__(self, reader: ClusterReader) -> None:
        self._reader = reader
        self._answers: dict[tuple[str, ...], Any] = {}

    def _once(self, key: tuple[str, ...], read: Callable[[], T]) -> T:
        if key not in self._answers:
            try:
                self._answers[key] = read()
            except ClusterError as err:
                self._answers[key] = err
        answer = self._answers[key]
        if isinstance(answer, ClusterError):
            raise answer
        return answer

    def nodes(self) -> list[Node]:
        return self._once(("nodes",), self._reader.nodes)

    def device_classes(self) -> list[str]:
        return self._once(("deviceClasses",), self._reader.device_classes)

    def pods(self, namespace: str, selector: str) -> list[Pod]:
        return self._once(("pods", namespace, selector), partial(self._reader.pods, namespace, selector))

    def pod_log(self, namespace: str, name: str, tail_lines: int | None = None) -> str:
        return self._reader.pod_log(namespace, name, tail_lines)

    def resource_slices(self) -> list[dict[str, Any]]:
        return self._once(("resourceSlices",), self._reader.resource_slices)


def _pressure(conditions: Any) -> tuple[str, ...]:
    """The conditions other than Ready that hold (True): a node under them evicts pods and takes no new ones."""
    return tuple(sorted(c.type for c in conditions or [] if c.type != "Ready" and c.status == "True"))


def _taints(spec: Any) -> tuple[tuple[str, str, str], ...]:
    return tuple((t.key, t.value or "", t.effect) for t in getattr(spec, "taints", None) or [])


def _ready(conditions: Any) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in conditions or [])


def _finished(statuses: Any) -> str:
    """The latest finishedAt of the containers, once every one has terminated."""
    ends = [getattr(getattr(c.state, "terminated", None), "finished_at", None) for c in statuses or []]
    done = [e for e in ends if isinstance(e, datetime)]
    return max(done).isoformat() if done and len(done) == len(ends) else ""


def _waiting(statuses: Any) -> str:
    """The reason of the first container that waits."""
    reasons = [getattr(getattr(c.state, "waiting", None), "reason", None) for c in statuses or []]
    return next((str(r) for r in reasons if r), "")


def _ready_changed(conditions: Any) -> datetime | None:
    changed = next((c.last_transition_time for c in conditions or [] if c.type == "Ready"), None)
    return changed if isinstance(changed, datetime) else None


class KubernetesReader:
    """ClusterReader over the official Python client (CoreV1Api and the generic custom-objects API)."""

    # DeviceClasses are served as resource.k8s.io/v1beta1 on Kubernetes 1.33 (v1 from 1.34); reading them
    # through the generic API keeps this independent of which typed API the installed client ships.
    DEVICE_CLASS_VERSIONS = ("v1", "v1beta2", "v1beta1")
    # Seconds per request (connect, read): an unreachable endpoint fails quickly instead of hanging.
    TIMEOUT = (10, 60)

    def __init__(self, core: Any, custom: Any, describe: str) -> None:
        self._core = core
        self._custom = custom
        self._describe = describe

    def _call(self, what: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except Exception as err:  # noqa: BLE001 -- any client, network or TLS error becomes one clear line
            status = getattr(err, "status", None)
            text = str(err).strip()
            reason = getattr(err, "reason", None) or (text.splitlines()[-1] if text else type(err).__name__)
            detail = f"HTTP {status} {reason}" if status else f"{type(err).__name__}: {reason}"
            raise ClusterError(f"{what} through {self._describe} failed: {detail}") from None

    def nodes(self) -> list[Node]:
        items = self._call("listing nodes", lambda: self._core.list_node(_request_timeout=self.TIMEOUT).items)
        return [
            Node(
                name=n.metadata.name,
                labels=dict(n.metadata.labels or {}),
                allocatable={k: str(v) for k, v in (n.status.allocatable or {}).items()},
                ready=_ready(n.status.conditions),
                ready_changed=_ready_changed(n.status.conditions),
                provider_id=getattr(getattr(n, "spec", None), "provider_id", None) or "",
                annotations=dict(n.metadata.annotations or {}),
                unschedulable=bool(getattr(getattr(n, "spec", None), "unschedulable", False)),
                taints=_taints(getattr(n, "spec", None)),
                pressure=_pressure(n.status.conditions),
            )
            for n in items
        ]

    def device_classes(self) -> list[str]:
        last: ClusterError | None = None
        for version in self.DEVICE_CLASS_VERSIONS:
            try:
                found = self._call(
                    f"listing resource.k8s.io/{version} deviceclasses",
                    partial(
                        self._custom.list_cluster_custom_object,
                        "resource.k8s.io",
                        version,
                        "deviceclasses",
                        _request_timeout=self.TIMEOUT,
                    ),
                )
            except ClusterError as err:
                last = err
                continue
            return [item["metadata"]["name"] for item in found.get("items", [])]
        raise last or ClusterError("no resource.k8s.io version to read deviceclasses from")

    def pods(self, namespace: str, selector: str) -> list[Pod]:
        items = self._call(
            f"listing pods {selector!r} in {namespace}",
            lambda: (
                self._core.list_namespaced_pod(namespace, label_selector=selector, _request_timeout=self.TIMEOUT).items
            ),
        )
        return [
            Pod(
                name=p.metadata.name,
                namespace=p.metadata.namespace,
                node_name=p.spec.node_name or "",
                phase=p.status.phase or "Pending",
                ready=_ready(p.status.conditions),
                created=p.metadata.creation_timestamp.isoformat() if p.metadata.creation_timestamp else "",
                labels=dict(p.metadata.labels or {}),
                finished=_finished(p.status.container_statuses),
                waiting=_waiting(p.status.container_statuses),
            )
            for p in items
        ]

    def resource_slices(self) -> list[dict[str, Any]]:
        found = self._call(
            "listing resource.k8s.io/v1 resourceslices",
            partial(
                self._custom.list_cluster_custom_object,
                "resource.k8s.io",
                "v1",
                "resourceslices",
                _request_timeout=self.TIMEOUT,
            ),
        )
        return list(found.get("items", []))

    def pod_log(self, namespace: str, name: str, tail_lines: int | None = None) -> str:
        kwargs: dict[str, Any] = {"_request_timeout": self.TIMEOUT}
        if tail_lines:
            kwargs["tail_lines"] = tail_lines
        return self._call(
            f"reading the log of pod {namespace}/{name}",
            lambda: self._core.read_namespaced_pod_log(name, namespace, **kwargs),
        )

    def config_map_data(self, namespace: str, name: str) -> dict[str, str]:
        found = self._call(
            f"reading configmap {namespace}/{name}",
            lambda: self._core.read_namespaced_config_map(name, namespace, _request_timeout=self.TIMEOUT),
        )
        return dict(found.data or {})

    def patch_config_map_data(self, namespace: str, name: str, data: dict[str, str]) -> None:
        """Set these keys of a ConfigMap's data (``ultraserver extend`` moving the reclaim drain's blocks)."""
        self._call(
            f"patching configmap {namespace}/{name}",
            lambda: self._core.patch_namespaced_config_map(
                name, namespace, {"data": data}, _request_timeout=self.TIMEOUT
            ),
        )


DEFAULT_KUBECONFIG = "~/.kube/config"


def kubeconfig_files(given: str | None) -> tuple[str, str]:
    """The kubeconfig to read and how it was chosen, as kubectl chooses: --kubeconfig, else $KUBECONFIG (a list of
    files joined by the path separator, merged: the first file to set a value wins), else ~/.kube/config."""
    if given:
        return given, f"--kubeconfig {given}"
    listed = os.environ.get("KUBECONFIG", "")
    if listed.strip(os.pathsep):
        return listed, f"$KUBECONFIG={listed} (its files merged, as kubectl merges them)"
    return os.path.expanduser(DEFAULT_KUBECONFIG), f"{DEFAULT_KUBECONFIG} (no --kubeconfig, $KUBECONFIG unset)"


def connect(kubeconfig: str | None) -> KubernetesReader:
    """A reader for a kubeconfig given as a file path or as the document itself (e.g. a stack output); None reads
    $KUBECONFIG or ~/.kube/config as kubectl does (kubeconfig_files).

    Raises KubeconfigError when the file is missing or malformed; connection problems surface on the first read.
    """
    if kubeconfig is None:
        return _connect_files(*kubeconfig_files(None))
    try:
        import kubernetes
        import yaml
    except ImportError:
        raise KubeconfigError(
            f"verify needs the Kubernetes Python client: pip install '{KUBERNETES_CLIENT_REQUIREMENT}'"
        ) from None
    try:
        if os.path.isfile(kubeconfig):
            # Bounded and UTF-8 before the client reads it.
            document = load_yaml(Path(kubeconfig), "--kubeconfig", pulumi=False)
            _answers(document, f"kubeconfig {kubeconfig}", Path(kubeconfig).parent)
            client = kubernetes.config.new_client_from_config(config_file=kubeconfig)
            describe = f"kubeconfig {kubeconfig}"
        else:
            document = yaml.safe_load(kubeconfig)
            if not isinstance(document, dict) or "clusters" not in document:
                raise KubeconfigError(
                    f"kubeconfig: {kubeconfig!r} is neither an existing file nor a kubeconfig document; write it "
                    "with `pulumi stack output kubeconfig --show-secrets > kubeconfig` and pass --kubeconfig kubeconfig"
                )
            _answers(document, "the given kubeconfig")
            client = kubernetes.config.new_client_from_config_dict(document)
            describe = "the given kubeconfig"
    except KubeconfigError:
        raise
    except ConfigError as err:
        raise KubeconfigError(str(err)) from None
    except Exception as err:  # noqa: BLE001 -- malformed kubeconfig: one line, no traceback
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise KubeconfigError(f"kubeconfig {kubeconfig!r} is not usable: {first}") from None
    return KubernetesReader(kubernetes.client.CoreV1Api(client), kubernetes.client.CustomObjectsApi(client), describe)


def _answers(document: Any, where: str, directory: Path | None = None) -> None:
    """KubeconfigError when the current context's exec plugin gives no credentials in time (verify/exec_plugin.py)."""
    try:
        check_exec_plugin(document, where, directory)
    except ExecPluginSilent as silent:
        raise KubeconfigError(str(silent)) from None


def _connect_files(listed: str, chosen: str) -> KubernetesReader:
    """A reader for the merged kubeconfig files of a path list (the Kubernetes client merges them as kubectl does)."""
    files = [path for path in listed.split(os.pathsep) if path and os.path.isfile(path)]
    if not files:
        raise KubeconfigError(
            f"kubeconfig: {chosen} names no existing file; pass --kubeconfig FILE (e.g. written with "
            "`pulumi stack output kubeconfig --show-secrets > kubeconfig`)"
        )
    if len(files) == 1:
        return connect(files[0])
    import kubernetes

    try:
        # Bounded and UTF-8 before the client reads them.
        documents = [load_yaml(Path(path), "$KUBECONFIG", pulumi=False) for path in files]
        _answers(merged(documents), f"kubeconfig {chosen}")
        client = kubernetes.config.new_client_from_config(config_file=os.pathsep.join(files))
    except KubeconfigError:
        raise
    except ConfigError as err:
        raise KubeconfigError(str(err)) from None
    except Exception as err:  # noqa: BLE001 -- malformed kubeconfig: one line, no traceback
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise KubeconfigError(f"kubeconfig {chosen} is not usable: {first}") from None
    return KubernetesReader(
        kubernetes.client.CoreV1Api(client), kubernetes.client.CustomObjectsApi(client), f"kubeconfig {chosen}"
    )
