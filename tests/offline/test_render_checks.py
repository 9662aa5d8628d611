"""The pure parts of `ultraserver plan --render`: GPU placement, served APIs, schemas, value probes, Helm's output and
command lines (no Helm needed; tests/offline/test_render_stacks.py renders the shipped stacks with one)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from ultraserver.facts.kubernetes.scheduling import GPU_TOLERATION
from ultraserver.facts.pins.manifests import MPI_OPERATOR
from ultraserver.offline import Plan
from ultraserver.offline.gpu_placement import (
    NodeKind,
    gpu_nodes,
    missed_groups,
    on_gpu_nodes,
    planned_nodes,
    selects,
    tolerates,
)
from ultraserver.offline.helm_template import ReleaseInput, chart_file, parse, release_inputs, template_command
from ultraserver.offline.manifest_schemas import crd_schemas, schema_error
from ultraserver.offline.noop_keys import changed, idle_keys, leaves, with_changed
from ultraserver.offline.pod_placement import lands_on, operand_pods, placement_problems, release_pods
from ultraserver.offline.pruning import placement_field, pruned
from ultraserver.offline.references import reference_problems
from ultraserver.offline.resource import PlanResource
from ultraserver.offline.served_apis import (
    api_versions_flag,
    builtin_apis,
    crd_apis,
    definitions,
    manifest_apis,
    unserved,
)
from ultraserver.offline.stack_checks import pinned_objects, stack_problems
from ultraserver.problems import ConfigError, Problem

GPU = NodeKind(
    "nvl72",
    {"kubernetes.io/os": "linux", "nvidia.com/gpu.present": "true", "ultraserver.io/ultraserver": "nvl72"},
    (("nvidia.com/gpu", "true", "NoSchedule"),),
)


def daemonset(spec: Mapping[str, Any], name: str = "ds") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "DaemonSet",
        "metadata": {"name": name},
        "spec": {"template": {"spec": spec}},
    }


@pytest.mark.parametrize(
    ("toleration", "expected"),
    [
        (GPU_TOLERATION, True),
        ({"operator": "Exists"}, True),  # every taint
        ({"operator": "Exists", "effect": "NoSchedule"}, True),  # node-exporter's default
        ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "true"}, True),
        ({"key": "nvidia.com/gpu", "value": "false"}, False),
        ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}, False),
        ({"key": "CriticalAddonsOnly", "operator": "Exists"}, False),
    ],
)
def test_a_toleration_tolerates_the_gpu_taint_as_the_scheduler_reads_it(
    toleration: dict[str, str], expected: bool
) -> None:
    assert tolerates([toleration], ("nvidia.com/gpu", "true", "NoSchedule")) is expected


def test_a_selector_and_a_required_affinity_must_match_the_node_labels() -> None:
    labels = GPU.labels
    assert selects({}, labels)
    assert selects({"nodeSelector": {"nvidia.com/gpu.present": "true"}}, labels)
    assert not selects({"nodeSelector": {"ultraserver.io/role": "system"}}, labels)
    term = {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}
    other = {"matchExpressions": [{"key": "kubernetes.io/os", "operator": "NotIn", "values": ["linux"]}]}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [other]}}}
    assert not selects({"affinity": affinity}, labels)
    # Terms are alternatives: one match is enough.
    affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] = [other, term]
    assert selects({"affinity": affinity}, labels)
    absent = {"matchExpressions": [{"key": "feature.node.kubernetes.io/x", "operator": "DoesNotExist"}]}
    affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] = [absent]
    assert selects({"affinity": affinity}, labels)


def test_daemonsets_off_the_gpu_nodes_are_named_and_others_kinds_ignored() -> None:
    on = daemonset({"tolerations": [GPU_TOLERATION]}, "on")
    untolerated = daemonset({}, "untolerated")
    elsewhere = daemonset({"tolerations": [GPU_TOLERATION], "nodeSelector": {"ultraserver.io/role": "system"}}, "x")
    deployment = {**on, "kind": "Deployment"}
    assert on_gpu_nodes([on, untolerated, elsewhere, deployment], [GPU]) == [on]
    assert missed_groups(untolerated, [GPU]) == ["nvl72"] and missed_groups(deployment, [GPU]) == []


@pytest.mark.parametrize("stack", ["gb200-x72", "gb200-x36"])  # a managed and a self-managed GPU group
def test_gpu_nodes_are_read_from_the_plans_launch_templates(stack: str, shipped_plan: Callable[[str], Plan]) -> None:
    nodes = gpu_nodes(shipped_plan(stack))
    assert [n.taints for n in nodes] == [(("nvidia.com/gpu", "true", "NoSchedule"),)]
    (labels,) = [n.labels for n in nodes]
    assert (
        labels["kubernetes.io/arch"] == "arm64" and labels["node.kubernetes.io/instance-type"] == "p6e-gb200.36xlarge"
    )
    assert labels["ultraserver.io/ultraserver"].startswith("nvl") and labels["nvidia.com/gpu.present"] == "true"
    # The system group too, with its labels and its size at the clock: the GPU groups are at 0 outside a block.
    (system,) = [n for n in planned_nodes(shipped_plan(stack)) if not n.gpu]
    assert system.labels["ultraserver.io/role"] == "system" and system.taints == () and system.size >= 2


def widget_crd(*versions: Mapping[str, Any]) -> dict[str, Any]:
    """A CRD of kind Widget in group example.com with these versions."""
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "spec": {"group": "example.com", "names": {"kind": "Widget"}, "versions": list(versions)},
    }


def test_the_cluster_serves_ga_builtins_of_its_version_and_the_crds_installed() -> None:
    builtins = builtin_apis("1.35")
    assert ("resource.k8s.io", "v1", "DeviceClass") in builtins and ("apps", "v1", "DaemonSet") in builtins
    # Beta APIs are off by default, lists and meta types are no kinds a chart creates.
    assert ("resource.k8s.io", "v1beta1", "DeviceClass") not in builtins
    assert not [k for k in builtins if k[2].endswith("List") or k[2] == "WatchEvent"]
    crd = widget_crd({"name": "v1", "served": True}, {"name": "v0", "served": False})
    assert crd_apis([crd]) == {("example.com", "v1", "Widget")}
    assert manifest_apis([MPI_OPERATOR.url]) == {("kubeflow.org", "v2beta1", "MPIJob")}
    certificate = {"apiVersion": "cert-manager.io/v1", "kind": "Certificate"}
    assert unserved([certificate, {"apiVersion": "v1", "kind": "ConfigMap"}], builtins) == [certificate]
    assert api_versions_flag([("", "v1", "Pod"), ("apps", "v1", "DaemonSet")]) == [
        "apps/v1",
        "apps/v1/DaemonSet",
        "v1",
        "v1/Pod",
    ]


def test_the_builtin_definitions_are_read_once_for_served_apis_and_schemas() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
    before = definitions.cache_info().misses
    assert ("", "v1", "Pod") in builtin_apis("1.34")
    assert schema_error(pod, "1.34", {}) is None
    assert definitions.cache_info().misses - before <= 1


def test_builtins_validate_strictly_and_custom_resources_against_their_crd() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}
    assert schema_error(pod, "1.35", {}) is None
    assert schema_error({**pod, "spec": {"containers": [{"name": "c", "imagee": "x"}]}}, "1.35", {}) is not None
    size = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}
    crd = widget_crd({"name": "v1", "served": True, "schema": {"openAPIV3Schema": size}})
    schemas = crd_schemas([crd])
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"size": 3}}
    assert schema_error(widget, "1.35", schemas) is None
    assert schema_error({**widget, "spec": {"size": "big"}}, "1.35", schemas) == (
        "spec.size",
        "'big' is not of type 'integer'",
    )
    # No schema known (an unserved kind): left to the served-kinds check.
    assert schema_error({"apiVersion": "cert-manager.io/v1", "kind": "Issuer"}, "1.35", schemas) is None


def test_every_set_value_is_probed_with_another_value_of_its_shape() -> None:
    values = {"a": {"b": True, "c": {"d": "x"}}, "e": [], "f": [1], "g": {}, "h": 2, "i": ""}
    assert leaves(values) == [("a", "b"), ("a", "c", "d"), ("e",), ("f",), ("g",), ("h",), ("i",)]
    assert [changed(v) for v in (True, 2, "x", "", [1], [], {})] == [
        False,
        3,
        "x-changed",
        "changed",
        [],
        [{"changed": "changed"}],
        {"changed": "changed"},
    ]
    probed = with_changed(values, ("a", "c", "d"))
    assert probed["a"]["c"]["d"] == "x-changed" and values["a"]["c"]["d"] == "x"


def test_idle_keys_are_those_whose_change_renders_the_same_and_random_fields_are_ignored() -> None:
    values = {"read": 1, "off": {"x": 1, "y": 2}, "alone": {"z": 1}, "refused": "a"}
    passwords = iter(range(1000))  # a field that differs on every render, like a generated password

    def render(given: Mapping[str, Any]) -> str | None:
        if given["refused"] != "a":
            return None  # Helm refused the values: the key is read
        data = f"{{read: '{given['read']}', password: '{next(passwords)}'}}"
        return f"kind: ConfigMap\nmetadata: {{name: c}}\ndata: {data}\n"

    base, again = render(values), render(values)
    assert base is not None and again is not None and base != again

    def objects(text: str) -> list[Mapping[str, Any]]:
        return [o.body for o in parse(text)]

    assert idle_keys(values, render, base, again, objects) == [("off",), ("alone", "z")]


def test_helm_output_is_read_with_each_objects_source_file() -> None:
    text = (
        "---\n# Source: c/crds/w.yaml\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        "metadata: {name: w}\n---\n# Source: c/templates/cm.yaml\napiVersion: v1\nkind: ConfigMap\n"
        "metadata: {name: m}\ndata: {equals: =}\n"
    )
    crd, config_map = parse(text)
    assert (crd.source, crd.from_crds, config_map.source, config_map.from_crds) == (
        "c/crds/w.yaml",
        True,
        "c/templates/cm.yaml",
        False,
    )
    assert config_map.body["data"] == {"equals": "="}


RELEASE = ReleaseInput(
    "r", "rel", "kueue", "oci://registry.k8s.io/kueue/charts/kueue", None, "0.19.2", "ns", {}, True, False, False
)


def test_the_template_command_passes_the_clusters_version_and_apis(tmp_path: Path) -> None:
    command = template_command(
        Path("helm"), RELEASE, tmp_path / "c.tgz", tmp_path / "v.json", "1.35", ["apps/v1", "v1"]
    )
    assert command[:4] == ["helm", "template", "rel", str(tmp_path / "c.tgz")]
    assert ["--namespace", "ns"] == command[4:6] and "--skip-tests" in command and "--include-crds" not in command
    assert command[command.index("--kube-version") + 1] == "1.35" and command[-1] == "--api-versions=apps/v1,v1"


def test_a_chart_missing_from_the_folder_names_the_file_and_how_to_get_it(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        chart_file(RELEASE, tmp_path)
    (problem,) = caught.value.items
    assert problem.key == "--charts" and "kueue-0.19.2.tgz" in str(problem.value)
    assert "helm pull oci://registry.k8s.io/kueue/charts/kueue --version 0.19.2" in problem.fix


def test_release_inputs_are_the_plans_helm_releases(shipped_plan: Callable[[str], Plan]) -> None:
    releases = {r.chart: r for r in release_inputs(shipped_plan("gb200-x72"))}
    dra = releases["dra-driver-nvidia-gpu"]
    assert (dra.name, dra.namespace, dra.version, dra.skip_crds, dra.atomic, dra.skip_await) == (
        "nvidia-dra-driver-gpu",
        "nvidia-dra-driver-gpu",
        "0.4.1",
        True,
        False,
        True,
    )
    assert releases["gpu-operator"].repo == "https://helm.ngc.nvidia.com/nvidia"
    assert releases["kueue"].atomic is True and releases["kueue"].values["managerConfig"]


def test_a_noisy_document_does_not_hide_a_change_in_another() -> None:
    values = {"name": "a", "idle": 1}
    passwords = iter(range(1000))

    def render(given: Mapping[str, Any]) -> str:
        stable = f"kind: ConfigMap\nmetadata: {{name: {given['name']}}}\n"
        return f"{stable}---\nkind: Secret\nmetadata: {{name: s}}\ndata: {{password: '{next(passwords)}'}}\n"

    def objects(text: str) -> list[Mapping[str, Any]]:
        return [o.body for o in parse(text)]

    assert idle_keys(values, render, render(values), render(values), objects) == [("idle",)]


def test_the_api_server_prunes_what_a_structural_schema_does_not_declare() -> None:
    toleration = {"type": "object", "properties": {k: {"type": "string"} for k in ("key", "operator", "effect")}}
    schema = {
        "type": "object",
        "properties": {
            "metadata": {"type": "object"},
            "spec": {
                "type": "object",
                "properties": {
                    "tolerations": {"type": "array", "items": toleration},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
            },
        },
    }
    body = {
        "apiVersion": "x/v1",
        "kind": "X",
        "metadata": {"name": "x", "labels": {"a": "b"}},
        "spec": {
            "tolerations": [{"key": "nvidia.com/gpu", "opertor": "Exists", "effect": "NoSchedule"}],
            "labels": {"any": "thing"},
            "free": {"any": {"thing": 1}},
            "extra": 1,
        },
    }
    stored, paths = pruned(body, schema)
    assert paths == ["spec.tolerations.0.opertor", "spec.extra"]
    assert stored["spec"]["tolerations"] == [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]
    assert stored["metadata"] == body["metadata"] and stored["spec"]["free"] == body["spec"]["free"]
    assert [placement_field(p) for p in paths] == [True, False]
    # What is left tolerates only a taint with an empty value: not the GPU taint.
    assert not tolerates(stored["spec"]["tolerations"], ("nvidia.com/gpu", "true", "NoSchedule"))


SYSTEM = NodeKind("system", {"kubernetes.io/os": "linux", "ultraserver.io/role": "system"}, (), gpu=False, size=2)


def deployment(spec: Mapping[str, Any], name: str = "d") -> dict[str, Any]:
    return {"kind": "Deployment", "metadata": {"name": name, "namespace": "n"}, "spec": {"template": {"spec": spec}}}


def test_a_pod_lands_where_it_is_tolerated_and_selected_and_waits_only_where_nodes_are_there() -> None:
    kinds = [SYSTEM, GPU]
    on_system = deployment({"nodeSelector": {"ultraserver.io/role": "system"}}, "ok")
    nowhere = deployment({"nodeSelector": {"ultraserver.io/role": "sytem"}}, "typo")
    gpu_only = deployment({"nodeSelector": {"nvidia.com/gpu.present": "true"}, "tolerations": [GPU_TOLERATION]}, "g")
    hook = {**gpu_only, "kind": "Job", "metadata": {"name": "h", "annotations": {"helm.sh/hook": "pre-install"}}}
    pods = release_pods([on_system, nowhere, gpu_only, hook], release_waits=False)
    found = {p.key: p for p in placement_problems("r", pods, kinds)}
    assert set(found) == {"r: Deployment n/typo", "r: Deployment n/g", "r: Job h"}
    assert "system: nodeSelector ultraserver.io/role=sytem not on its nodes" in str(found["r: Deployment n/typo"].value)
    # Not waited for: a warning (a controller that runs only during a block); a hook is always waited for.
    assert found["r: Deployment n/g"].level == "warning" and found["r: Job h"].level == "error"
    waited = placement_problems("r", release_pods([gpu_only], release_waits=True), kinds)
    assert [(p.key, p.level) for p in waited] == [("r: Deployment n/g", "error")]
    # A pod that asks for GPUs belongs there.
    gpu_only["spec"]["template"]["spec"]["containers"] = [{"resources": {"limits": {"nvidia.com/gpu": 4}}}]
    assert placement_problems("r", release_pods([gpu_only], release_waits=False), kinds) == []


def test_gpu_operator_operands_take_the_cluster_policys_tolerations() -> None:
    policy = {"kind": "ClusterPolicy", "metadata": {"name": "cp"}, "spec": {"migManager": {"enabled": False}}}
    (default,) = operand_pods([policy])
    assert lands_on(default.spec, [SYSTEM, GPU]) == [GPU] and "migManager" not in default.name
    policy["spec"]["daemonsets"] = {"tolerations": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}
    (replaced,) = operand_pods([policy])
    assert lands_on(replaced.spec, [SYSTEM, GPU]) == []


def test_a_pod_naming_what_nothing_creates_is_reported_and_so_is_a_webhook_it_serves() -> None:
    namespace = {"kind": "Namespace", "metadata": {"name": "n"}}
    pod = {"serviceAccountName": "sa", "priorityClassName": "high", "volumes": [{"secret": {"secretName": "tls"}}]}
    backend = deployment(pod, "web")
    backend["spec"]["template"]["metadata"] = {"labels": {"app": "web"}}
    service = {"kind": "Service", "metadata": {"name": "web", "namespace": "n"}, "spec": {"selector": {"app": "web"}}}
    hook = {"name": "w.example.com", "clientConfig": {"service": {"name": "web", "namespace": "n"}}}
    webhook = {"kind": "ValidatingWebhookConfiguration", "metadata": {"name": "w"}, "webhooks": [hook]}
    found = reference_problems([("r", [namespace, backend, service, webhook])], [])
    assert [p.key for p in found] == ["r: Deployment n/web", "r: ValidatingWebhookConfiguration w"]
    assert "ServiceAccount n/sa, PriorityClass high, Secret n/tls" in str(found[0].value)
    # Created by the plan, optional, or failing open: nothing to report.
    created = [
        {"kind": "ServiceAccount", "metadata": {"name": "sa", "namespace": "n"}},
        {"kind": "PriorityClass", "metadata": {"name": "high"}},
    ]
    pod["volumes"] = [{"secret": {"secretName": "tls", "optional": True}}]
    assert reference_problems([("r", [namespace, backend, service, webhook])], created) == []
    pod["volumes"] = [{"secret": {"secretName": "tls"}}]
    hook["failurePolicy"] = "Ignore"
    (only,) = reference_problems([("r", [namespace, backend, service, webhook])], created)
    assert only.key == "r: Deployment n/web"


def _mpijob_crd() -> dict[str, Any]:
    """A small MPIJob CRD of our own: a worker pod template with tolerations and a node selector, nothing else."""
    toleration = {"type": "object", "properties": {k: {"type": "string"} for k in ("key", "operator", "effect")}}
    pod = {
        "type": "object",
        "properties": {
            "tolerations": {"type": "array", "items": toleration},
            "nodeSelector": {"type": "object", "additionalProperties": {"type": "string"}},
        },
    }
    replica = {"type": "object", "properties": {"template": {"type": "object", "properties": {"spec": pod}}}}
    spec = {"type": "object", "properties": {"mpiReplicaSpecs": {"type": "object", "additionalProperties": replica}}}
    schema = {"type": "object", "properties": {"spec": spec}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "mpijobs.kubeflow.org"},
        "spec": {
            "group": "kubeflow.org",
            "names": {"kind": "MPIJob"},
            "versions": [{"name": "v2beta1", "served": True, "schema": {"openAPIV3Schema": schema}}],
        },
    }


def test_a_pinned_manifests_crd_prunes_the_toolkits_mpijobs_and_its_deployment_is_placed() -> None:
    operator = deployment({"nodeSelector": {"ultraserver.io/role": "mpi"}}, "mpi-operator")
    operator["apiVersion"] = "apps/v1"
    manifest = yaml.safe_dump_all([_mpijob_crd(), operator]).encode()
    worker = {
        "tolerations": [{"key": "nvidia.com/gpu", "opertor": "Exists", "effect": "NoSchedule"}],
        "nodeSelector": {"ultraserver.io/ultraserver": "nvl72"},
    }
    job = PlanResource(
        "urn:job",
        "kubernetes:kubeflow.org/v2beta1:MPIJob",
        "job",
        inputs={
            "apiVersion": "kubeflow.org/v2beta1",
            "metadata": {"name": "check", "namespace": "n"},
            "spec": {"mpiReplicaSpecs": {"Worker": {"template": {"spec": worker}}}},
        },
    )
    # Read where the plan reads it: here the copy in the stack's manifest mirror.
    mirrored = f"/srv/mirror/{MPI_OPERATOR.file_name}"
    plan = Plan("p", "s", [job], manifests=[mirrored])
    asked: list[tuple[str, str]] = []
    pinned, unread = pinned_objects(plan.manifests, [], lambda pin, where: asked.append((pin.name, where)) or manifest)
    assert asked == [(MPI_OPERATOR.name, mirrored)] and unread == []
    schemas = crd_schemas([body for _, bodies in pinned for body in bodies])
    found = {p.key: str(p.value) for p in stack_problems(plan, [], pinned, [SYSTEM, GPU], schemas)}
    assert found["p/s: MPIJob n/check"].startswith("spec.mpiReplicaSpecs.Worker.template.spec.tolerations.0.opertor:")
    # As stored, the toleration (operator Equal, value "") no longer tolerates the GPU taint: the workers land nowhere.
    assert "nvl72: taint nvidia.com/gpu=true:NoSchedule not tolerated" in found["p/s: MPIJob n/check worker"]
    assert (
        "system: nodeSelector ultraserver.io/role=mpi not on its nodes"
        in found[f"{MPI_OPERATOR.name}: Deployment n/mpi-operator"]
    )

    # Without the pin read, nothing of it is judged, and a warning says so.
    def unreadable(pin: Any, where: str) -> bytes:
        raise ConfigError(Problem(pin.name, "gone", "", ""))

    pinned, unread = pinned_objects(plan.manifests, [], unreadable)
    assert pinned == [] and [p.key for p in unread] == [MPI_OPERATOR.name] and unread[0].level == "warning"
