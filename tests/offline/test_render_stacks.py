"""Every shipped stack rendered by a real Helm, with the plan's exact values, and checked (offline/render.py).

Renders are shared within this module (one Templater: each distinct `helm template` runs once), and a variant of a
stack renders only the release it changes.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import copy_project, run_main
from helpers.render import CHARTS, helm_and_charts, pinned_reader
from helpers.stacks import ROOT, STACKS, stack_config
from ultraserver.builders.helm_values import deep_merge
from ultraserver.cli.plan import stack_warnings
from ultraserver.config.load import parse_settings
from ultraserver.config.rules import unread_chart_values
from ultraserver.facts.kubernetes.scheduling import GPU_TOLERATION
from ultraserver.facts.pins import charts
from ultraserver.facts.pins.manifests import MPI_OPERATOR
from ultraserver.offline import Plan, release_order, run_plan
from ultraserver.offline.gpu_placement import NodeKind, on_gpu_nodes, planned_nodes
from ultraserver.offline.helm_template import Templater
from ultraserver.offline.project import LAYER_PROJECT
from ultraserver.offline.render import ReleaseRender, StackRender, render_stack, user_values
from ultraserver.offline.resource import HELM_RELEASE
from ultraserver.offline.served_apis import binary_defaults, builtin_apis
from ultraserver.offline.stack_checks import ReadPin
from ultraserver.problems import ERROR, WARNING, ConfigError, Problem
from ultraserver.rehearse import pinned_files

KUBE_VERSION = "1.35"
"""Every shipped stack's Kubernetes version (checked in ``render``)."""
KUBERNETES = "ultraserver-eks:kubernetes"
TODAY = date(2026, 11, 23)


@dataclass(frozen=True)
class Rendered:
    plan: Plan
    nodes: list[NodeKind]
    stack: StackRender

    @property
    def gpu(self) -> list[NodeKind]:
        return [kind for kind in self.nodes if kind.gpu]

    def release(self, chart: str) -> Any:
        (found,) = [r for r in self.stack.releases if r.release.chart == chart]
        return found


_RENDERS: dict[str, Rendered] = {}


@pytest.fixture(scope="module")
def templater() -> Templater:
    helm, folder = helm_and_charts()
    return Templater(helm, folder, KUBE_VERSION)


Render = Callable[..., Rendered]


@pytest.fixture(scope="module")
def rendered(templater: Templater, shipped_plan: Callable[[str], Plan]) -> Render:
    """``rendered(stack, kubernetes=None, only=None)``: a stack's plan, with ``kubernetes`` settings laid over its
    own, rendered (``only``: that chart's release); the shipped stacks' plans are the session's."""

    def plan_of(project: Path, stack: str, overrides: Any) -> Plan:
        return shipped_plan(stack) if project == ROOT and not overrides else run_plan(project, stack, overrides)

    def get(stack: str, kubernetes: Mapping[str, Any] | None = None, only: str | None = None) -> Rendered:
        key = json.dumps([stack, kubernetes, only])
        if key not in _RENDERS:
            config = _with(kubernetes or {}, stack)
            settings = parse_settings(config, stack=stack)
            assert settings.cluster.kubernetes_version == KUBE_VERSION
            overrides = {KUBERNETES: config[KUBERNETES]} if kubernetes else None
            platform = plan_of(ROOT, stack, overrides)
            # A separate-stack layer is a project of its own; its GPU nodes are the platform's.
            layered = settings.kubernetes.layer == "separate-stack"
            plan = plan_of(ROOT / "kubernetes-layer", stack, overrides) if layered else platform
            if only:
                kept = [r for r in plan.resources if r.type != HELM_RELEASE or r.name.endswith(only)]
                plan = replace(plan, resources=kept)
            nodes = planned_nodes(platform)
            stack_render = render_stack(plan, templater, nodes, user_values(settings), pinned_reader())
            _RENDERS[key] = Rendered(plan, nodes, stack_render)
        return _RENDERS[key]

    return get


def again(base: Plan, resources: list[Any], templater: Templater, read: ReadPin | None = None) -> list[Problem]:
    """What the render of ``base`` with ``resources`` instead of its own finds, on the node groups of ``base``."""
    return render_stack(
        replace(base, resources=resources), templater, planned_nodes(base), {}, read or pinned_reader()
    ).problems


def shown(problems: list[Problem]) -> str:
    return "\n".join(str(p) for p in problems)


@pytest.mark.parametrize("stack", STACKS)
def test_every_shipped_stack_renders_clean(rendered: Render, stack: str) -> None:
    result = rendered(stack)
    assert result.stack.problems == [], shown(result.stack.problems)
    assert result.gpu, "the placement checks need the stack's GPU nodes"
    assert {charts.GPU_OPERATOR, charts.DRA_DRIVER, charts.KUEUE} <= {r.release.chart for r in result.stack.releases}
    for release in result.stack.releases:
        bodies = [o.body for o in release.objects]
        assert bodies, release.release.resource
        # The placement checks judge something: each GPU-node chart puts a DaemonSet on the GPU nodes.
        if release.release.chart in charts.ON_GPU_NODES:
            assert on_gpu_nodes(bodies, result.gpu), release.release.resource


def test_the_manifests_are_written_one_file_per_release(rendered: Render, tmp_path: Path) -> None:
    result = rendered("gb200-x72")
    written = result.stack.write(tmp_path / "out")
    assert sorted(p.name for p in written) == sorted(f"{r.release.resource}.yaml" for r in result.stack.releases)
    dra = (tmp_path / "out" / "gb200-x72-k8s-dra-driver.yaml").read_text()
    # The toolkit applies the DRA driver's CRDs itself (skipCrds): the release's manifest leaves them out.
    assert "kind: DaemonSet" in dra and "kind: CustomResourceDefinition" not in dra
    operator = (tmp_path / "out" / "gb200-x72-k8s-gpu-operator.yaml").read_text()
    assert "# Source: gpu-operator/crds/" in operator


def test_a_prometheus_stack_release_skips_the_wait_as_its_node_exporter_runs_on_every_gpu_node(
    rendered: Render,
) -> None:
    result = rendered("gb200-x72", {"prometheusStack": {"enabled": True}}, only="prometheus-stack")
    prometheus = result.release(charts.KUBE_PROMETHEUS_STACK)
    exporters = on_gpu_nodes([o.body for o in prometheus.objects], result.gpu)
    assert [b["metadata"]["name"] for b in exporters] == ["kube-prometheus-stack-prometheus-node-exporter"]
    assert (prometheus.release.atomic, prometheus.release.skip_await) == (False, True)
    assert result.stack.problems == [], shown(result.stack.problems)


def test_a_release_with_pods_on_gpu_nodes_that_waits_is_reported(rendered: Render, templater: Templater) -> None:
    base = rendered("gb200-x72", only="efa-device-plugin").plan
    waiting = []
    for resource in base.resources:
        inputs = {**resource.inputs, "atomic": True} if resource.type == HELM_RELEASE else resource.inputs
        waiting.append(replace(resource, inputs=inputs))
    found = again(base, waiting, templater)
    (problem,) = found
    assert problem.key == "gb200-x72-k8s-efa-device-plugin" and "atomic True" in str(problem.value)
    assert "DaemonSet aws-efa-k8s-device-plugin runs on every GPU node" in problem.allowed


def test_a_gpu_daemonset_that_does_not_tolerate_the_gpu_taint_is_reported(rendered: Render) -> None:
    result = rendered("gb200-x72", {"efaDevicePlugin": {"values": {"tolerations": []}}}, "efa-device-plugin")
    errors = [p for p in result.stack.problems if p.level == ERROR]
    assert [p.key for p in errors] == ["gb200-x72-k8s-efa-device-plugin: DaemonSet aws-efa-k8s-device-plugin"]
    assert "gb200-x72-nvl72" in str(errors[0].value)


def test_a_user_key_that_rewrites_the_selectors_is_not_reported_though_the_template_analysis_was(
    rendered: Render,
) -> None:
    override = {"draDriver": {"values": {"selectorLabelsOverride": {"app.kubernetes.io/name": "gpu-dra"}}}}
    result = rendered("gb200-x72", override, only="dra-driver")
    assert result.stack.problems == [], shown(result.stack.problems)
    settings = parse_settings(_with(override), stack="gb200-x72")
    # The template analysis does not follow `.context.Values` and calls the key unread; with --render the plan
    # judges it by rendering instead.
    (static,) = unread_chart_values(settings, TODAY)
    assert static.key == "ultraserver-eks:kubernetes.draDriver.values.selectorLabelsOverride"
    assert static in stack_warnings(settings)
    assert static not in stack_warnings(settings, rendered=True)


def test_user_keys_whose_templates_are_switched_off_are_reported(rendered: Render) -> None:
    override = {
        "nodeTerminationHandler": {"values": {"daemonsetTolerations": [{"operator": "Exists"}]}},
        "gpuOperator": {"values": {"draDriver": {"version": "v0.4.1"}}},
        "draDriver": {"values": {"webhook": {"replicas": 2}}},
    }
    found = []
    for only in ("node-termination-handler", "gpu-operator", "dra-driver"):
        found += rendered("gb200-x36", override, only=only).stack.problems
    assert {(p.key, p.level) for p in found} == {
        ("ultraserver-eks:kubernetes.nodeTerminationHandler.values.daemonsetTolerations", WARNING),
        ("ultraserver-eks:kubernetes.gpuOperator.values.draDriver.version", WARNING),
        ("ultraserver-eks:kubernetes.draDriver.values.webhook.replicas", WARNING),
    }, shown(found)
    # The template analysis passes all three: some template reads each key, in another configuration.
    assert unread_chart_values(parse_settings(_with(override, "gb200-x36"), stack="gb200-x36"), TODAY) == []


def test_a_toolkit_key_that_changes_nothing_is_named_by_its_release(rendered: Render, templater: Templater) -> None:
    base = rendered("gb200-x72", only="efa-device-plugin").plan
    resources = []
    for resource in base.resources:
        if resource.type == HELM_RELEASE:
            values = {**resource.inputs["values"], "notAValueOfTheChart": {"a": 1, "b": True}}
            resource = replace(resource, inputs={**resource.inputs, "values": values})
        resources.append(resource)
    found = again(base, resources, templater)
    # Both keys below the map change nothing: the map is named once.
    assert [(p.key, p.level) for p in found] == [
        ("gb200-x72-k8s-efa-device-plugin values.notAValueOfTheChart", WARNING)
    ]


@pytest.mark.usefixtures("templater")  # Helm and the charts, or skip
def test_a_dra_webhook_turned_on_fails_the_plan_naming_the_kinds_nothing_serves(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    stack_file = project / "stacks" / "Pulumi.gb200-x72.yaml"
    text = stack_file.read_text()
    stack_file.write_text(
        text
        + "  ultraserver-eks:kubernetes:\n    draDriver:\n      values:\n        webhook:\n          enabled: true\n"
    )
    out = tmp_path / "out"
    run = run_main(
        "plan", "--stack", "gb200-x72", "--project-dir", str(project), "--render", str(out), "--charts", str(CHARTS)
    )
    assert run.code == 1, run.stdout[-2000:] + run.stderr
    assert "renders Certificate (cert-manager.io/v1), Issuer (cert-manager.io/v1), which nothing in the planned" in (
        " ".join(run.stdout.split())
    )
    assert "rendered check(s) failed" in run.stderr
    assert (out / "gb200-x72-k8s-dra-driver.yaml").is_file()


def _with(kubernetes: Mapping[str, Any], stack: str = "gb200-x72") -> dict[str, Any]:
    config = stack_config(stack)
    config[KUBERNETES] = deep_merge(config.get(KUBERNETES) or {}, kubernetes)
    return config


@pytest.mark.usefixtures("templater")  # Helm and the charts, or skip
def test_a_charts_folder_without_the_pinned_chart_exits_2_naming_it(tmp_path: Path) -> None:
    run = run_main("plan", "--stack", "gb200-x72", "--render", str(tmp_path / "out"), "--charts", str(tmp_path))
    assert run.code == 2
    assert "--charts" in run.stderr and ".tgz" in run.stderr


def test_charts_without_render_is_a_usage_error(tmp_path: Path) -> None:
    run = run_main("plan", "--stack", "gb200-x72", "--charts", str(tmp_path))
    assert run.code == 2 and "add --render DIR" in run.stderr


def test_values_helm_refuses_are_an_error_with_helms_message(rendered: Render, templater: Templater) -> None:
    base = rendered("gb200-x72", only="dra-driver").plan
    resources = []
    for resource in base.resources:
        if resource.type == HELM_RELEASE:  # the chart refuses the default namespace (templates/validation.yaml)
            resource = replace(resource, inputs={**resource.inputs, "namespace": "default"})
        resources.append(resource)
    (problem,) = again(base, resources, templater)
    assert problem.key == "gb200-x72-k8s-dra-driver" and problem.level == ERROR
    assert "`helm template` failed" in problem.value and "default' namespace" in problem.value


def test_a_render_folder_that_cannot_be_written_exits_2(rendered: Render, tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    with pytest.raises(ConfigError) as caught:
        rendered("gb200-x72").stack.write(blocked / "out")
    assert caught.value.items[0].key == "--render"


def test_a_render_that_cannot_write_every_manifest_leaves_none(rendered: Render, tmp_path: Path) -> None:
    stack = rendered("gb200-x72").stack
    out = tmp_path / "out"
    # The last release's manifest name is taken by a folder: the others could be written, but none is.
    last = out / f"{stack.releases[-1].release.resource}.yaml"
    last.mkdir(parents=True)
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError) as caught:
        stack.write(out)
    assert caught.value.items[0].key == "--render" and last.name in caught.value.items[0].fix
    assert sorted(p.name for p in out.iterdir()) == sorted([last.name, "notes.txt"])
    # Into a folder of its own the render writes them all, over an earlier render's files.
    last.rmdir()
    (out / f"{stack.releases[0].release.resource}.yaml").write_text("an earlier render")
    written = stack.write(out)
    assert sorted(p.name for p in out.iterdir()) == sorted([*(p.name for p in written), "notes.txt"])
    assert all(p.read_text() == r.manifest() for p, r in zip(written, stack.releases, strict=True))


def test_a_render_stopped_part_way_leaves_no_folder_it_created(rendered: Render, tmp_path: Path) -> None:
    stack = rendered("gb200-x72").stack

    class Stopped(ReleaseRender):
        def manifest(self) -> str:
            raise KeyboardInterrupt  # Ctrl-C while the last manifest is written

    last = stack.releases[-1]
    stopped = StackRender([*stack.releases[:-1], Stopped(last.release, last.objects)])
    with pytest.raises(KeyboardInterrupt):
        stopped.write(tmp_path / "out")
    assert list(tmp_path.iterdir()) == []
    # A folder that was there keeps what it held, and gets no manifest.
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    with pytest.raises(KeyboardInterrupt):
        stopped.write(tmp_path / "out")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["notes.txt"]


def _errors(problems: list[Problem]) -> dict[str, str]:
    return {p.key: str(p.value) for p in problems if p.level == ERROR}


def test_an_operator_no_planned_node_group_selects_fails_the_plan(rendered: Render) -> None:
    # A typo in the role: the operator stays Pending, and as the release skips the wait `pulumi up` succeeds.
    override = {"gpuOperator": {"values": {"operator": {"nodeSelector": {"ultraserver.io/role": "system-nodes"}}}}}
    errors = _errors(rendered("gb200-x72", override, only="gpu-operator").stack.problems)
    operator = errors["gb200-x72-k8s-gpu-operator: Deployment gpu-operator/gpu-operator"]
    assert "lands on no planned node group" in operator
    assert "gb200-x72-system: nodeSelector ultraserver.io/role=system-nodes not on its nodes" in operator
    assert "gb200-x72-nvl72: taint nvidia.com/gpu=true:NoSchedule not tolerated" in operator
    # Its hook Jobs take the same selector: Helm waits for hooks whatever skipAwait says.
    assert "gb200-x72-k8s-gpu-operator: Job gpu-operator/gpu-operator-upgrade-crd" in errors


@pytest.mark.parametrize(
    "selector", [{"ultraserver.io/role": "sytem"}, {"ultraserver.io/ultraserver": "nvl72"}], ids=["typo", "gpu"]
)
def test_kueue_off_the_system_nodes_fails_the_plan(rendered: Render, selector: dict[str, str]) -> None:
    # Helm merges the map into the toolkit's selector (role: system): pointing at GPU nodes selects no node at all.
    result = rendered("gb200-x72", {"kueue": {"values": {"controllerManager": {"nodeSelector": selector}}}}, "kueue")
    errors = _errors(result.stack.problems)
    assert (
        "lands on no planned node group"
        in errors["gb200-x72-k8s-kueue: Deployment kueue-system/kueue-controller-manager"]
    )


def test_an_atomic_release_whose_pods_land_only_on_gpu_nodes_fails_the_plan(
    rendered: Render, templater: Templater
) -> None:
    base = rendered("gb200-x72", only="kueue").plan
    resources = []
    for resource in base.resources:
        if resource.type == HELM_RELEASE:
            # The selector replaced (not merged into the toolkit's), as a chart default or a toolkit change would.
            values = json.loads(json.dumps(resource.inputs["values"]))
            values["controllerManager"] |= {"nodeSelector": {"ultraserver.io/ultraserver": "nvl72"}}
            values["controllerManager"] |= {"tolerations": [GPU_TOLERATION]}
            resource = replace(resource, inputs={**resource.inputs, "values": values})
            assert resource.inputs["atomic"]
        resources.append(resource)
    found = again(base, resources, templater)
    errors = _errors(found)
    manager = errors["gb200-x72-k8s-kueue: Deployment kueue-system/kueue-controller-manager"]
    assert manager == "lands only on the GPU nodes of gb200-x72-nvl72, and its creator waits for it", shown(found)


def test_a_misspelled_operand_toleration_is_pruned_and_keeps_every_operand_off_the_gpu_nodes(
    rendered: Render,
) -> None:
    toleration = {"key": "nvidia.com/gpu", "opertor": "Exists", "effect": "NoSchedule"}
    override = {"gpuOperator": {"values": {"daemonsets": {"tolerations": [toleration]}}}}
    result = rendered("gb200-x72", override, only="gpu-operator")
    errors = [p for p in result.stack.problems if p.level == ERROR]
    policy = "gb200-x72-k8s-gpu-operator: ClusterPolicy cluster-policy"
    (pruned,) = [p for p in errors if p.key == policy]
    assert str(pruned.value).startswith("spec.daemonsets.tolerations.0.opertor: a field its CRD's schema does not")
    (operands,) = [p for p in errors if "GPU Operator operands" in p.key]
    assert "gb200-x72-nvl72: taint nvidia.com/gpu=true:NoSchedule not tolerated" in str(operands.value)
    assert "devicePlugin" in operands.key and "gfd" in operands.key


def test_the_toolkits_own_pods_are_placed_too(rendered: Render, templater: Templater) -> None:
    base = rendered("gb200-x72", only="efa-device-plugin").plan
    resources, names = [], []
    for resource in base.resources:
        if resource.type == "kubernetes:batch/v1:CronJob":
            inputs = json.loads(json.dumps(resource.inputs))
            inputs["spec"]["jobTemplate"]["spec"]["template"]["spec"]["nodeSelector"] = {"ultraserver.io/role": "x"}
            resource = replace(resource, inputs=inputs)
            names.append(resource.inputs["metadata"]["name"])
        resources.append(resource)
    assert names
    found = again(base, resources, templater)
    keys = {p.key for p in found if p.level == ERROR}
    assert keys == {f"ultraserver-eks/gb200-x72: CronJob {namespace_of(base, n)}/{n}" for n in names}, shown(found)


def test_the_pods_of_the_toolkits_mpijobs_are_placed(rendered: Render, templater: Templater) -> None:
    base = rendered("gb200-x72", only="efa-device-plugin").plan
    resources, names = [], []
    for resource in base.resources:
        if resource.type == "kubernetes:kubeflow.org/v2beta1:MPIJob":
            inputs = json.loads(json.dumps(resource.inputs))
            inputs["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["nodeSelector"] = {"ultraserver.io/x": "y"}
            resource = replace(resource, inputs=inputs)
            names.append(f"{inputs['metadata']['namespace']}/{inputs['metadata']['name']}")
        resources.append(resource)
    assert names
    found = again(base, resources, templater)
    keys = {p.key for p in found if p.level == ERROR}
    assert keys == {f"ultraserver-eks/gb200-x72: MPIJob {n} worker" for n in names}, shown(found)


def test_the_toolkits_own_custom_resources_are_judged_for_pruned_fields(rendered: Render, templater: Templater) -> None:
    base = rendered("gb200-x72").plan
    resources = []
    for resource in base.resources:
        inputs = json.loads(json.dumps(resource.inputs))
        if resource.type.endswith(":ResourceFlavor") and "topologyName" in (inputs.get("spec") or {}):
            inputs["spec"]["tolerations"][0]["opertor"] = inputs["spec"]["tolerations"][0].pop("operator")
            flavor = inputs["metadata"]["name"]
        elif resource.type == "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain":
            inputs["spec"]["numNode"] = 2
            domain = f"{inputs['metadata']['namespace']}/{inputs['metadata']['name']}"
        resources.append(replace(resource, inputs=inputs))
    found = again(base, resources, templater)
    pruned = {p.key: p for p in found if "which the API server prunes" in str(p.value)}
    toleration = pruned[f"ultraserver-eks/gb200-x72: ResourceFlavor {flavor}"]
    assert str(toleration.value).startswith("spec.tolerations.0.opertor:") and toleration.level == ERROR
    typo = pruned[f"ultraserver-eks/gb200-x72: ComputeDomain {domain}"]
    assert str(typo.value).startswith("spec.numNode:") and typo.level == WARNING


MPIJOB = "kubernetes:kubeflow.org/v2beta1:MPIJob"
MPI_DEPLOYMENT = f"{MPI_OPERATOR.name}: Deployment mpi-operator/mpi-operator"


def _typo_in_mpijobs(base: Plan) -> tuple[list[Any], list[str]]:
    """The plan's resources with a misspelled toleration operator and env source in each MPIJob's workers, and the
    MPIJobs' names."""
    resources, names = [], []
    for resource in base.resources:
        if resource.type == MPIJOB:
            inputs = json.loads(json.dumps(resource.inputs))
            worker = inputs["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]
            worker["tolerations"][0]["opertor"] = worker["tolerations"][0].pop("operator")
            env = worker["containers"][0]["env"][0]
            env["valuFrom"] = env.pop("valueFrom")
            resource = replace(resource, inputs=inputs)
            names.append(f"{inputs['metadata']['namespace']}/{inputs['metadata']['name']}")
        resources.append(resource)
    return resources, names


def test_fields_the_pinned_mpijob_crd_prunes_from_the_toolkits_mpijobs_fail_the_render(
    rendered: Render, templater: Templater
) -> None:
    base = rendered("gb200-x72", only="efa-device-plugin").plan
    resources, names = _typo_in_mpijobs(base)
    assert names
    found = again(base, resources, templater)
    errors: dict[str, list[str]] = {}
    for problem in found:
        if problem.level == ERROR:
            errors.setdefault(problem.key, []).append(str(problem.value))
    worker = "spec.mpiReplicaSpecs.Worker.template.spec"
    for name in names:
        pruned = [v.split(":")[0] for v in errors[f"ultraserver-eks/gb200-x72: MPIJob {name}"]]
        assert sorted(pruned) == [f"{worker}.containers.0.env.0.valuFrom", f"{worker}.tolerations.0.opertor"]
        # As stored, the toleration (key and effect: operator Equal, value "") no longer tolerates the GPU taint.
        (placed,) = errors[f"ultraserver-eks/gb200-x72: MPIJob {name} worker"]
        assert "lands on no planned node group" in placed and "nvidia.com/gpu=true:NoSchedule not tolerated" in placed


def test_the_mpi_operators_own_deployment_is_placed_from_its_pinned_manifest(
    rendered: Render, templater: Templater
) -> None:
    base = rendered("gb200-x72", only="efa-device-plugin").plan
    asked: list[str] = []

    def read(pin: Any, where: str) -> bytes:
        asked.append(pin.name)
        return pinned_reader()(pin, where)

    assert again(base, base.resources, templater, read) == []
    assert asked == [MPI_OPERATOR.name]
    # The system group tainted: the operator's Deployment (no tolerations upstream) lands nowhere.
    nodes = [
        k if k.gpu else replace(k, taints=(*k.taints, ("dedicated", "ops", "NoSchedule"))) for k in planned_nodes(base)
    ]
    found = render_stack(base, templater, nodes, {}, pinned_reader()).problems
    operator = _errors(found)[MPI_DEPLOYMENT]
    assert "lands on no planned node group" in operator
    assert "gb200-x72-system: taint dedicated=ops:NoSchedule not tolerated" in operator


_PINNED_DEPLOYMENTS = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: mpi-operator, namespace: mpi-operator}
spec:
  template:
    spec:
      nodeSelector: {ultraserver.io/role: mpi}
      containers: [{name: c, image: i}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: on-gpu, namespace: mpi-operator}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu.present: "true"}
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers: [{name: c, image: i}]
"""


def test_a_pinned_manifests_pods_are_judged_as_its_file_places_them(rendered: Render, templater: Templater) -> None:
    base = rendered("gb200-x72", only="efa-device-plugin").plan
    errors = _errors(again(base, base.resources, templater, lambda pin, where: _PINNED_DEPLOYMENTS.encode()))
    assert "gb200-x72-system: nodeSelector ultraserver.io/role=mpi not on its nodes" in errors[MPI_DEPLOYMENT]
    # pulumi-kubernetes waits for a Deployment it applies: one that only GPU nodes take waits for a block.
    gpu_only = errors[f"{MPI_OPERATOR.name}: Deployment mpi-operator/on-gpu"]
    assert gpu_only == "lands only on the GPU nodes of gb200-x72-nvl72, and its creator waits for it"


def test_a_pinned_manifest_that_cannot_be_read_is_a_warning_naming_what_was_not_judged(
    rendered: Render, templater: Templater
) -> None:
    base = rendered("gb200-x72", only="efa-device-plugin").plan
    resources, _ = _typo_in_mpijobs(base)

    def unreachable(pin: Any, where: str) -> bytes:
        raise ConfigError(Problem(pin.name, "no cache, no network", "the pinned file", "reach it"))

    found = again(base, resources, templater, unreachable)
    (unread,) = [p for p in found if p.key == MPI_OPERATOR.name]
    assert unread.level == WARNING and "no cache, no network" in str(unread.value)
    assert "NOT judged" in str(unread.value) and "python -m ultraserver.rehearse.pinned_files" in unread.fix
    # Unjudged, not passed: the misspelled fields go unreported only because the warning says so.
    assert not [p for p in found if "which the API server prunes" in str(p.value)]


@pytest.mark.usefixtures("templater")  # Helm and the charts, or skip
def test_plan_render_without_the_pinned_manifest_warns_and_names_the_command_that_fetches_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Not XDG_CACHE_HOME: the Helm binary is cached there too.
    monkeypatch.setattr(pinned_files, "cache_dir", lambda: tmp_path / "empty-cache")

    def offline(*_: Any) -> bytes:
        raise OSError("no network")

    monkeypatch.setattr(pinned_files, "download", offline)
    monkeypatch.setattr(pinned_files, "_from_go_module", offline)
    out = tmp_path / "out"
    run = run_main("plan", "--stack", "gb200-x72", "--render", str(out), "--charts", str(CHARTS))
    assert run.code == 0, run.stdout[-3000:] + run.stderr
    text = " ".join(run.stdout.split())
    assert f"{MPI_OPERATOR.name} not read (" in text and "are NOT judged" in text
    assert "python -m ultraserver.rehearse.pinned_files" in text


def namespace_of(plan: Plan, name: str) -> str:
    (found,) = [
        r.inputs["metadata"].get("namespace")
        for r in plan.resources
        if r.type == "kubernetes:batch/v1:CronJob" and r.inputs["metadata"]["name"] == name
    ]
    return str(found)


@pytest.mark.usefixtures("templater")  # Helm and the charts, or skip
def test_overrides_that_land_pods_nowhere_fail_plan_render_naming_each(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    stack_file = project / "stacks" / "Pulumi.gb200-x72.yaml"
    stack_file.write_text(
        stack_file.read_text()
        + """  ultraserver-eks:kubernetes:
    gpuOperator:
      values:
        operator:
          nodeSelector: {ultraserver.io/role: system-nodes}
        daemonsets:
          tolerations: [{key: nvidia.com/gpu, opertor: Exists, effect: NoSchedule}]
    kueue:
      values:
        controllerManager:
          nodeSelector: {ultraserver.io/ultraserver: nvl72}
    draDriver:
      values:
        webhook:
          enabled: true
          tls: {mode: secret, secret: {name: dra-webhook-tls, caBundle: Zm9v}}
"""
    )
    out = tmp_path / "out"
    run = run_main(
        "plan", "--stack", "gb200-x72", "--project-dir", str(project), "--render", str(out), "--charts", str(CHARTS)
    )
    assert run.code == 1, run.stdout[-2000:] + run.stderr
    text = " ".join(run.stdout.split())
    assert "Deployment gpu-operator/gpu-operator lands on no planned node group" in text
    assert "spec.daemonsets.tolerations.0.opertor: a field its CRD's schema does not declare" in text
    assert "Deployment kueue-system/kueue-controller-manager lands on no planned node group" in text
    # The webhook in secret mode names a Secret nobody creates: its pod never starts, and it fails closed.
    assert "names Secret nvidia-dra-driver-gpu/dra-webhook-tls, which nothing in the plan or its charts creates" in text
    assert "webhook gpu.nvidia.com (failurePolicy Fail) is served by Deployment nvidia-dra-driver-gpu/" in text


@pytest.mark.usefixtures("templater")  # Helm and the charts, or skip
@pytest.mark.parametrize("where", ["platform", LAYER_PROJECT])
def test_a_separate_stack_stack_is_judged_as_a_whole_from_either_project(tmp_path: Path, where: str) -> None:
    project = copy_project(tmp_path / "project")
    shutil.copytree(ROOT / LAYER_PROJECT, project / LAYER_PROJECT, ignore=shutil.ignore_patterns("__pycache__"))
    stack_file = project / "stacks" / "Pulumi.gb200-multi.yaml"
    text = stack_file.read_text()
    assert "    layer: separate-stack\n" in text
    override = "    efaDevicePlugin: {values: {tolerations: []}}\n"
    stack_file.write_text(text.replace("    layer: separate-stack\n", "    layer: separate-stack\n" + override))
    folder = project if where == "platform" else project / LAYER_PROJECT
    out = tmp_path / "out"
    run = run_main(
        "plan", "--stack", "gb200-multi", "--project-dir", str(folder), "--render", str(out), "--charts", str(CHARTS)
    )
    assert run.code == 1, run.stdout[-2000:] + run.stderr
    text = " ".join(run.stdout.split())
    # The layer's EFA plugin, judged against the platform's GPU groups (the managed ones and the fleet).
    assert "gb200-multi-k8s-efa-device-plugin: DaemonSet aws-efa-k8s-device-plugin no pod on the GPU nodes of" in text
    assert "gb200-multi-fleet" in text and "the whole stack" in text
    assert (out / "gb200-multi-k8s-gpu-operator.yaml").is_file()


@pytest.mark.usefixtures("templater")  # Helm and the charts, or skip
def test_a_supported_minor_whose_dra_api_is_beta_renders_with_a_warning_not_an_error(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    stack_file = project / "stacks" / "Pulumi.gb200-x72.yaml"
    text = stack_file.read_text()
    assert 'kubernetesVersion: "1.35"' in text
    stack_file.write_text(text.replace('kubernetesVersion: "1.35"', 'kubernetesVersion: "1.33"'))
    out = tmp_path / "out"
    run = run_main(
        "plan", "--stack", "gb200-x72", "--project-dir", str(project), "--render", str(out), "--charts", str(CHARTS)
    )
    # EKS 1.33 serves DRA at resource.k8s.io/v1beta1 and v1beta2, which the DRA chart picks on a real cluster.
    assert run.code == 0, run.stdout[-3000:] + run.stderr
    text = " ".join(run.stdout.split())
    assert "renders DeviceClass (resource.k8s.io/v1): the Helm binary's own API list has that version" in text
    assert "which nothing in the planned cluster serves" not in text


def test_the_beta_dra_api_is_served_on_1_33_only() -> None:
    assert ("resource.k8s.io", "v1beta2", "DeviceClass") in builtin_apis("1.33")
    assert ("resource.k8s.io", "v1beta2", "DeviceClass") not in builtin_apis("1.35")
    # A kind the cluster serves at another version, rendered at one only the Helm binary's own list has.
    body = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "x"}}
    assert binary_defaults([body], builtin_apis("1.33")) == [body]
    other = {"apiVersion": "example.com/v1", "kind": "Widget"}
    assert binary_defaults([other], builtin_apis("1.33")) == []


def test_kueue_with_its_service_monitor_waits_for_the_release_that_brings_the_crd(
    rendered: Render, templater: Templater
) -> None:
    override = {"prometheusStack": {"enabled": True}, "kueue": {"values": {"enablePrometheus": True}}}
    result = rendered("gb200-x72", override)
    kueue = result.release(charts.KUEUE)
    assert "ServiceMonitor" in {o.body["kind"] for o in kueue.objects}
    assert [p for p in result.stack.problems if "does not wait for it" in str(p.value)] == []
    # Without the dependency the two releases install in parallel: the plan says so.
    prometheus = next(r.urn for r in result.plan.of_type(HELM_RELEASE) if r.name.endswith("prometheus-stack"))
    resources = []
    for resource in result.plan.resources:
        deps = [d for d in resource.dependencies if d != prometheus and "prometheus" not in d]
        resources.append(replace(resource, dependencies=deps))
    found = release_order.order_problems(
        replace(result.plan, resources=resources),
        [(r.release.resource, [o.body for o in r.objects]) for r in result.stack.releases],
    )
    keys = [(p.key, str(p.value)) for p in found]
    assert (
        "gb200-x72-k8s-kueue",
        "renders ServiceMonitor (monitoring.coreos.com/v1), whose CRD gb200-x72-k8s-prometheus-stack installs, and "
        "does not wait for it",
    ) in keys
