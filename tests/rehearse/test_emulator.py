"""The emulated API answers the reads the day-2 code makes as a Kubernetes API server would, over real HTTP."""

from __future__ import annotations

from pathlib import Path

import pytest
from ultraserver.rehearse.emulator import Emulator, plural
from ultraserver.rehearse.selectors import field_values, matches
from ultraserver.verify.clients import ClusterError, connect


def node(name: str, labels: dict[str, str], ready: bool = True) -> dict:
    status = {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}, "status": status}


def pod(name: str, labels: dict[str, str], node_name: str = "") -> dict:
    meta = {"name": name, "namespace": "ns", "labels": labels}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"nodeName": node_name, "containers": []},
        "status": {},
    }


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> object:
    with Emulator() as emulator:
        emulator.put([node("a", {"g": "1"}), node("b", {"g": "2"}, ready=False)])
        emulator.put([pod("p1", {"job-name": "x-launcher"}, "a"), pod("p2", {"job-name": "y-launcher"}, "b")])
        emulator.set_log("ns", "p1", "one\ntwo\nthree\n")
        yield connect(str(emulator.kubeconfig(Path(tmp_path_factory.mktemp("kube")))))


def test_nodes_come_back_through_the_official_client(api: object) -> None:
    nodes = {n.name: n for n in api.nodes()}  # type: ignore[attr-defined]
    assert set(nodes) == {"a", "b"} and nodes["a"].ready and not nodes["b"].ready


def test_a_label_selector_filters_the_list(api: object) -> None:
    assert [p.name for p in api.pods("ns", "job-name=x-launcher")] == ["p1"]  # type: ignore[attr-defined]
    assert [p.name for p in api.pods("other", "job-name=x-launcher")] == []  # type: ignore[attr-defined]


def test_pod_logs_whole_and_tailed(api: object) -> None:
    assert api.pod_log("ns", "p1") == "one\ntwo\nthree\n"  # type: ignore[attr-defined]
    assert api.pod_log("ns", "p1", tail_lines=1) == "three\n"  # type: ignore[attr-defined]
    with pytest.raises(ClusterError, match="HTTP 404"):
        api.pod_log("ns", "p2")  # type: ignore[attr-defined]


def test_cordon_and_eviction_change_what_the_api_serves(tmp_path: Path) -> None:
    import kubernetes

    with Emulator() as emulator:
        emulator.put([node("n", {}), pod("p", {}, "n"), pod("q", {}, "m")])
        client = kubernetes.config.new_client_from_config(str(emulator.kubeconfig(tmp_path)))
        core = kubernetes.client.CoreV1Api(client)
        core.patch_node("n", {"spec": {"unschedulable": True}})
        assert core.read_node("n").spec.unschedulable is True
        on_node = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=n").items
        assert [p.metadata.name for p in on_node] == ["p"]
        eviction = kubernetes.client.V1Eviction(metadata=kubernetes.client.V1ObjectMeta(name="p", namespace="ns"))
        core.create_namespaced_pod_eviction("p", "ns", eviction)
        assert [p.metadata.name for p in core.list_namespaced_pod("ns").items] == ["q"]
        with pytest.raises(kubernetes.client.ApiException) as gone:
            core.create_namespaced_pod_eviction("p", "ns", eviction)
        assert gone.value.status == 404


def test_each_request_is_answered_by_its_reaction_and_then_forgotten(tmp_path: Path) -> None:
    # kmock keeps every request and filters all of them to route each new one: kept, a rehearsal's thousands of
    # requests slowed each answer (the extend-late walk on gb200-multi: 243 s).
    import kubernetes

    with Emulator(forbidden=[("PATCH", "v1/nodes")]) as emulator:
        emulator.put([node("n", {"g": "1"}), node("m", {"g": "2"}), pod("p", {}, "n")])
        emulator.set_log("ns", "p", "one\ntwo\n")
        core = kubernetes.client.CoreV1Api(kubernetes.config.new_client_from_config(str(emulator.kubeconfig(tmp_path))))
        for _ in range(20):
            assert [n.metadata.name for n in core.list_node(label_selector="g=2").items] == ["m"]
            assert core.read_namespaced_pod_log("p", "ns", tail_lines=1) == "two\n"
            with pytest.raises(kubernetes.client.ApiException) as refused:
                core.patch_node("n", {"spec": {"unschedulable": True}})
            assert refused.value.status == 403
        assert list(emulator._api) == []  # noqa: SLF001 - kmock's kept requests


def test_a_served_resource_with_nothing_stored_is_an_empty_list(api: object) -> None:
    assert api.resource_slices() == [] and api.device_classes() == []  # type: ignore[attr-defined]


def test_a_resource_is_listed_once_served_and_404_before(tmp_path: Path) -> None:
    import kubernetes

    with Emulator() as emulator:
        client = kubernetes.config.new_client_from_config(str(emulator.kubeconfig(tmp_path)))
        custom = kubernetes.client.CustomObjectsApi(client)
        with pytest.raises(kubernetes.client.ApiException) as unknown:
            custom.list_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "workloads")
        assert unknown.value.status == 404
        emulator.serve(["kueue.x-k8s.io/v1beta2/workloads"])
        assert custom.list_cluster_custom_object("kueue.x-k8s.io", "v1beta2", "workloads")["items"] == []


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("", True),
        ("a=1", True),
        ("a==1,b=2", True),
        ("a!=1", False),
        ("a in (1,3)", True),
        ("a notin (1,3)", False),
        ("c", False),
        ("!c", True),
        ("a=1,c", False),
    ],
)
def test_label_selectors_follow_the_kubernetes_grammar(selector: str, expected: bool) -> None:
    assert matches(selector, {"a": "1", "b": "2"}) is expected


def test_field_selectors_read_dotted_paths() -> None:
    values = field_values({"spec": {"nodeName": "n1"}}, "spec.nodeName=n1,metadata.name!=x")
    assert values == {"spec.nodeName": "n1", "metadata.name": ""}
    assert matches("spec.nodeName=n1", values)


def test_an_unparsable_selector_is_refused() -> None:
    with pytest.raises(ValueError, match="unable to parse"):
        matches("a b", {})


@pytest.mark.parametrize(
    ("kind", "resource"),
    [
        ("ComputeDomain", "computedomains"),
        ("Topology", "topologies"),
        ("Gateway", "gateways"),
        ("Ingress", "ingresses"),
    ],
)
def test_kinds_map_to_their_resource_names(kind: str, resource: str) -> None:
    assert plural(kind) == resource
