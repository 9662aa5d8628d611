"""KubernetesLayer under the offline engine: the releases it asks for and what each one waits for."""

from __future__ import annotations

import inspect
from datetime import datetime

import pulumi
import pulumi_kubernetes as k8s
import pytest
import yaml
from helpers.plan_lookup import one
from helpers.stacks import TEST_NOW, stack_config
from ultraserver.config.settings import KubernetesSettings, PrometheusStackSettings, Settings, parse_settings
from ultraserver.facts.hardware import devices
from ultraserver.facts.kubernetes import kueue as kueue_facts
from ultraserver.facts.kubernetes.scheduling import ULTRASERVER_LABEL, system_node_labels
from ultraserver.facts.pins import charts, manifests
from ultraserver.offline import Plan, record
from ultraserver.problems import ConfigError
from ultraserver.resources.helm_release import ReleaseSettings
from ultraserver.resources.kubernetes_layer import KubernetesLayer, KubernetesLayerArgs
from ultraserver.resources.pinned_manifest import retaining

RELEASE = "kubernetes:helm.sh/v3:Release"
GROUP = "kubernetes:yaml/v2:ConfigGroup"
SYSTEM = system_node_labels()


def deploy(stack: str | None = None, now: datetime = TEST_NOW, **overrides: object) -> Plan:
    """Run a program with a cluster, a system node group, a GPU node group and the layer."""
    return record(lambda: build(stack, now, **overrides))


def layer_settings(stack: str | None = None, changes: dict[str, object] | None = None) -> Settings:
    """A shipped stack's settings with sections merged in; without a stack, gb200-x72's with no GPU groups (so no
    check, Kueue, drift check or drain: the releases alone)."""
    config = stack_config(stack or "gb200-x72")
    if stack is None:
        config.pop("ultraserver-eks:gpuNodeGroups")
    for key, section in (changes or {}).items():
        config[key] = {**config.get(key, {}), **section} if isinstance(section, dict) else section
    return parse_settings(config, stack=stack or "gb200-x72", today=TEST_NOW.date())


def build(
    stack: str | None = None, now: datetime = TEST_NOW, **overrides: object
) -> tuple[KubernetesLayer, k8s.Provider]:
    """A cluster, a system node group, a GPU node group and the layer of ``stack``'s settings (see layer_settings),
    its kubernetes section replaced by the overrides that are its fields; returns the layer and its provider."""
    provider = k8s.Provider("k8s", kubeconfig="{}")
    cluster = pulumi.CustomResource("aws:eks/cluster:Cluster", "cluster", {})
    system = pulumi.CustomResource("aws:eks/nodeGroup:NodeGroup", "system", {})
    pulumi.CustomResource("aws:eks/nodeGroup:NodeGroup", "gpu", {})
    settings = overrides.pop("settings", None) or layer_settings(stack)
    assert isinstance(settings, Settings)
    section = {k: overrides.pop(k) for k in list(overrides) if k in KubernetesSettings.model_fields}
    if section:
        settings = settings.model_copy(update={"kubernetes": KubernetesSettings(**section)})  # type: ignore[arg-type]
    args = KubernetesLayerArgs(
        settings=settings,
        provider=provider,
        depends_on=[cluster, system],
        now=now,
        **overrides,  # type: ignore[arg-type]
    )
    return KubernetesLayer("gb200", args), provider


def base_urns(recorded: Plan) -> set[str]:
    """URNs of the cluster and the system node group."""
    return {one(recorded, "aws:eks/cluster:Cluster").urn, one(recorded, "aws:eks/nodeGroup:NodeGroup", "system").urn}


def test_releases_use_the_pinned_charts() -> None:
    recorded = deploy()
    seen = {
        r.inputs["chart"]: (r.inputs["version"], r.inputs.get("repositoryOpts", {}).get("repo"), r.inputs["namespace"])
        for r in recorded.of_type(RELEASE)
    }
    assert seen == {
        "gpu-operator": ("v26.7.0", "https://helm.ngc.nvidia.com/nvidia", "gpu-operator"),
        # An OCI chart carries its registry in the chart reference, with no repositoryOpts.
        charts.chart_reference(charts.pinned(charts.DRA_DRIVER))[0]: ("0.4.1", None, "nvidia-dra-driver-gpu"),
        "aws-efa-k8s-device-plugin": ("v0.5.30", "https://aws.github.io/eks-charts", "kube-system"),
    }
    for release in recorded.of_type(RELEASE):
        assert release.inputs["timeout"] == 900


def test_dra_driver_keeps_the_names_of_its_pre_0_4_chart() -> None:
    """The renamed chart upgrades a 25.x install in place: same release name and namespace (pulumi-kubernetes replaces a
    Release only on those), and nameOverride so its DaemonSet, Deployment and RBAC keep their names."""
    dra = one(deploy(), RELEASE, "dra-driver")
    assert dra.inputs["name"] == dra.inputs["namespace"] == charts.LEGACY_DRA_DRIVER_NAME
    assert dra.inputs["values"]["nameOverride"] == charts.LEGACY_DRA_DRIVER_NAME
    assert dra.inputs["skipCrds"] is True


def test_releases_use_the_layers_provider() -> None:
    built: list[tuple[KubernetesLayer, k8s.Provider]] = []
    record(lambda: built.append(build()))
    ((layer, provider),) = built
    for chart in (layer.gpu_operator, layer.dra_driver, layer.efa_device_plugin):
        assert chart.release.get_provider(RELEASE) is provider


def test_release_values_are_the_toolkit_values() -> None:
    recorded = deploy()
    gpu = one(recorded, RELEASE, "gpu-operator").inputs["values"]
    assert gpu["driver"] == {"enabled": False} and gpu["toolkit"] == {"enabled": False}
    assert gpu["operator"]["nodeSelector"] == SYSTEM
    dra = one(recorded, RELEASE, "dra-driver").inputs["values"]
    assert dra["resources"]["computeDomains"] == {"enabled": True}
    assert dra["controller"]["tolerations"] == []
    efa = one(recorded, RELEASE, "efa-device-plugin").inputs["values"]
    assert efa["tolerations"][0]["key"] == "nvidia.com/gpu"


def test_component_type_tokens() -> None:
    recorded = deploy("gb200-x72")
    for token in ("KubernetesLayer", "GpuOperator", "DraDriver", "EfaDevicePlugin", "MpiOperator", "ImexCheck"):
        one(recorded, f"ultraserver:index:{token}")


def test_dependency_edges() -> None:
    recorded = deploy("gb200-x72")
    base = base_urns(recorded)
    gpu_operator = one(recorded, RELEASE, "gpu-operator")
    dra = one(recorded, RELEASE, "dra-driver")
    efa = one(recorded, RELEASE, "efa-device-plugin")
    mpi = one(recorded, GROUP, "mpi-operator")
    crds = {
        one(recorded, GROUP, "gb200-dra-driver-crd", exact=True).urn,
        one(recorded, GROUP, "gb200-dra-driver-crd-computedomaincliques", exact=True).urn,
    }
    # The DRA driver's CRDs before both charts that ship them (the GPU Operator's crds/ has older copies).
    assert set(gpu_operator.dependencies) == base | crds
    assert set(dra.dependencies) == base | crds
    assert set(efa.dependencies) == base
    assert set(mpi.dependencies) == base
    gpu_group = one(recorded, "aws:eks/nodeGroup:NodeGroup", "gpu").urn
    everything = [d for r in recorded.resources for d in r.dependencies]
    assert gpu_group not in everything
    job = one(recorded, "kubernetes:kubeflow.org/v2beta1:MPIJob")
    domain = one(recorded, "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain")
    assert {mpi.urn, dra.urn, gpu_operator.urn} <= set(domain.dependencies)
    assert {mpi.urn, dra.urn, gpu_operator.urn, domain.urn} <= set(job.dependencies)


def test_mpi_operator_is_the_pinned_release_manifest() -> None:
    recorded = deploy()
    operator = one(recorded, "ultraserver:index:MpiOperator")
    assert one(recorded, "ultraserver:index:PinnedManifest", "mpi-operator").parent == operator.urn
    # Offline the manifest is not downloaded: the group is a placeholder with no objects.
    assert one(recorded, GROUP, "mpi-operator").inputs["objs"] == []
    assert recorded.of_type("kubernetes:yaml/v2:ConfigFile") == []


def test_releases_with_daemonsets_on_gpu_nodes_never_wait_for_them(shipped_plan, plan_with) -> None:  # type: ignore[no-untyped-def]
    """Helm waits whenever a release is atomic, whatever skipAwait says (facts/pins/charts.py): the GPU-node releases
    are
    neither waiting nor atomic, so one unhealthy GPU node cannot roll them back on every node."""
    seen: set[str] = set()
    # The plugins-mode stack has the EFA device plugin, the DRA-mode stack DRANET instead; the Prometheus stack (its
    # node exporter on every GPU node) is off unless enabled.
    plans = [shipped_plan("gb200-x72"), shipped_plan("gb200-x72-dra")]
    plans.append(plan_with("gb200-x72", {"kubernetes": {"prometheusStack": {"enabled": True}}}))
    for plan in plans:
        releases = {r.inputs["chart"].rsplit("/", 1)[-1]: r.inputs for r in plan.of_type(RELEASE)}
        for chart in set(charts.ON_GPU_NODES) & set(releases):
            inputs = releases[chart]
            assert inputs["skipAwait"] is True and inputs["atomic"] is False, chart
            assert not charts.waits(inputs["atomic"], inputs["skipAwait"])
            seen.add(chart)
        others = [i for c, i in releases.items() if c not in charts.ON_GPU_NODES]
        assert others and all(i["atomic"] is True and "skipAwait" not in i for i in others)
    assert seen == set(charts.ON_GPU_NODES)


def test_helm_waits_for_an_atomic_release_even_with_skip_await() -> None:
    assert charts.waits(atomic=True, skip_await=True)
    assert not charts.waits(atomic=False, skip_await=True)
    assert charts.waits(atomic=False, skip_await=False)


def test_gpu_operator_upgrade_crd_hook_gets_openapi_validation_off() -> None:
    releases = {r.inputs["chart"]: r.inputs for r in deploy().of_type(RELEASE)}
    gpu = releases["gpu-operator"]
    assert gpu["disableOpenapiValidation"] is True
    # The chart's upgradeCRD hook stays on (its default): hooks are not disabled.
    assert "disableCrdHooks" not in gpu and "upgradeCRD" not in gpu["values"].get("operator", {})
    assert all("disableOpenapiValidation" not in i for c, i in releases.items() if c != "gpu-operator")


def test_dra_driver_crds_are_applied_by_the_toolkit_before_the_release() -> None:
    recorded = deploy()
    dra = one(recorded, RELEASE, "dra-driver")
    driver = one(recorded, "ultraserver:index:DraDriver").urn
    assert dra.inputs["skipCrds"] is True
    applied = {r.name for r in recorded.of_type("ultraserver:index:PinnedManifest") if r.parent == driver}
    # One group per CRD of the pinned chart's crds/ (the ComputeDomain one under its pre-0.4 name, so existing stacks
    # update it in place), and the release waits for all of them.
    assert len(charts.pinned(charts.DRA_DRIVER).crds) == len(manifests.DRA_DRIVER_CRDS) == 2
    assert applied == {"gb200-dra-driver-crd", "gb200-dra-driver-crd-computedomaincliques"}
    groups = {r.urn for r in recorded.of_type(GROUP) if r.name in applied}
    assert len(groups) == 2 and groups <= set(dra.dependencies)


def test_every_release_shipping_a_toolkit_applied_crd_waits_for_it() -> None:
    """No chart installs its own copy of a CRD the toolkit applies: Helm creates a crds/ entry only when it is absent
    (helm v3.20.2 pkg/action/install.go:174-176), so each such release skips crds/ or comes after the toolkit's."""
    recorded = deploy(prometheus_stack=PrometheusStackSettings(enabled=True))
    crd_groups = {r.urn for r in recorded.of_type(GROUP) if r.name.startswith("gb200-dra-driver-crd")}
    checked = []
    for release in recorded.of_type(RELEASE):
        chart = release.inputs["chart"].rsplit("/", 1)[-1]
        if set(charts.pinned(chart).crds) & set(manifests.DRA_DRIVER_CRDS) and not release.inputs.get("skipCrds"):
            assert crd_groups <= set(release.dependencies), chart
            checked.append(chart)
    assert checked == ["gpu-operator"]


@pytest.mark.parametrize("version", [None, "0.4.0", "0.5.0"])
def test_the_dra_driver_crds_are_declared_and_retained_at_every_chart_version(version: str | None) -> None:
    # A CRD that leaves the program is deleted by `pulumi up`, and every ComputeDomain with it.
    settings = layer_settings(changes={"ultraserver-eks:acceptUntestedVersions": True})
    recorded = deploy(settings=settings, dra_driver=ReleaseSettings(version=version))
    dra = one(recorded, RELEASE, "dra-driver")
    assert dra.inputs["skipCrds"] is True
    names = {"gb200-dra-driver-crd", "gb200-dra-driver-crd-computedomaincliques"}
    pinned = [r for r in recorded.of_type("ultraserver:index:PinnedManifest") if r.name in names]
    groups = [r for r in recorded.of_type(GROUP) if r.name in names]
    assert len(pinned) == len(groups) == 2
    assert all(r.to_json()["retainOnDelete"] is True for r in pinned + groups)
    assert {r.urn for r in groups} <= set(dra.dependencies)
    assert {r.urn for r in groups} <= set(one(recorded, RELEASE, "gpu-operator").dependencies)


def test_the_crd_objects_a_config_group_declares_are_retained_and_nothing_else() -> None:
    transform = retaining(("CustomResourceDefinition",))
    opts = pulumi.ResourceOptions(depends_on=[])

    def run(type_: str, custom: bool = True) -> pulumi.ResourceTransformResult | None:
        return transform(pulumi.ResourceTransformArgs(custom, type_, "x", {"a": 1}, opts))

    crd = run("kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition")
    assert crd is not None and crd.opts.retain_on_delete is True and crd.props == {"a": 1}
    assert run("kubernetes:core/v1:ConfigMap") is None
    assert run("kubernetes:yaml/v2:CustomResourceDefinition", custom=False) is None


def test_no_imex_check_unless_asked() -> None:
    recorded = deploy()
    assert recorded.of_type("ultraserver:index:ImexCheck") == []
    assert recorded.of_type("kubernetes:kubeflow.org/v2beta1:MPIJob") == []


def test_imex_check_per_ultraserver_with_launchers_on_system_nodes() -> None:
    settings = layer_settings("gb200-x36", {"ultraserver-eks:imexCheck": {"nodes": 3}})
    ultraservers = [name for g in settings.gpu_node_groups for name in g.node_group_names]
    recorded = deploy(settings=settings)
    jobs = {
        r.inputs["metadata"]["name"]: r.inputs["spec"]
        for r in recorded.of_type("kubernetes:kubeflow.org/v2beta1:MPIJob")
    }
    assert set(jobs) == {f"nvbandwidth-{u}" for u in ultraservers}
    for name, spec in jobs.items():
        worker = spec["mpiReplicaSpecs"]["Worker"]
        assert worker["replicas"] == 3
        assert worker["template"]["spec"]["nodeSelector"] == {ULTRASERVER_LABEL: name.removeprefix("nvbandwidth-")}
        assert spec["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]["nodeSelector"] == SYSTEM
    domains = recorded.of_type("kubernetes:resource.nvidia.com/v1beta1:ComputeDomain")
    assert sorted(d.inputs["metadata"]["name"] for d in domains) == sorted(f"{j}-compute-domain" for j in jobs)
    namespaces = {n.inputs["metadata"]["name"] for n in recorded.of_type("kubernetes:core/v1:Namespace")}
    assert "imex-check" in namespaces


def test_user_overrides_reach_the_release() -> None:
    recorded = deploy(
        dra_driver=ReleaseSettings(values={"featureGates": {"IMEXDaemonsWithDNSNames": True}}, timeout_seconds=1200)
    )
    dra = one(recorded, RELEASE, "dra-driver")
    assert dra.inputs["values"]["featureGates"] == {"IMEXDaemonsWithDNSNames": True}
    assert dra.inputs["values"]["resources"]["computeDomains"] == {"enabled": True}
    assert dra.inputs["timeout"] == 1200


def test_unknown_override_key_stops_the_program() -> None:
    with pytest.raises(
        ConfigError, match="kubernetes.gpuOperator.values.devicePlugn: got 'devicePlugn'; allowed: a value key of the"
    ):
        deploy(gpu_operator=ReleaseSettings(values={"devicePlugn": {"enabled": False}}))


def test_imex_check_needs_the_mpi_operator() -> None:
    with pytest.raises(ConfigError, match="imex_check: got an MPIJob check with mpi_operator=False"):
        deploy("gb200-x72", mpi_operator=False)


def test_mpi_operator_can_be_skipped() -> None:
    assert deploy(mpi_operator=False).of_type("ultraserver:index:MpiOperator") == []


def test_prometheus_stack_is_optional_and_installed_before_the_gpu_operator_service_monitor() -> None:
    without = deploy()
    assert "kube-prometheus-stack" not in {r.inputs["chart"] for r in without.of_type(RELEASE)}
    values = one(without, RELEASE, "gpu-operator").inputs["values"]
    assert values["dcgmExporter"] == {"enabled": True, "serviceMonitor": {"enabled": False}}

    recorded = deploy(prometheus_stack=PrometheusStackSettings(enabled=True))
    stack = one(recorded, RELEASE, "prometheus-stack")
    assert (stack.inputs["chart"], stack.inputs["version"], stack.inputs["namespace"]) == (
        charts.KUBE_PROMETHEUS_STACK,
        charts.pinned(charts.KUBE_PROMETHEUS_STACK).version,
        "monitoring",
    )
    assert stack.inputs["repositoryOpts"]["repo"] == "https://prometheus-community.github.io/helm-charts"
    gpu_operator = one(recorded, RELEASE, "gpu-operator")
    assert gpu_operator.inputs["values"]["dcgmExporter"]["serviceMonitor"] == {"enabled": True}
    assert {stack.urn, *base_urns(recorded)} <= set(gpu_operator.dependencies)
    assert set(stack.dependencies) == base_urns(recorded)


def test_efa_check_waits_for_the_mpi_operator_and_the_efa_plugin_and_runs_its_launcher_on_system_nodes() -> None:
    recorded = deploy("gb200-multi")
    job = one(recorded, "kubernetes:kubeflow.org/v2beta1:MPIJob", "nccl-efa")
    mpi = one(recorded, GROUP, "mpi-operator")
    efa = one(recorded, RELEASE, "efa-device-plugin")
    assert {mpi.urn, efa.urn} <= set(job.dependencies)
    launcher = job.inputs["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"]
    assert launcher["nodeSelector"] == SYSTEM


def test_mpijob_checks_need_the_mpi_operator() -> None:
    with pytest.raises(
        ConfigError,
        match="KubernetesLayerArgs.settings.efa_check: got an MPIJob check with mpi_operator=False; allowed: the check",
    ):
        deploy("gb200-multi", mpi_operator=False)


def test_an_nccl_check_without_the_mpi_operator_is_refused_not_dropped() -> None:
    settings = layer_settings("gb200-x72", {"ultraserver-eks:ncclCheck": {"enabled": True}})
    with pytest.raises(ConfigError, match="settings.nccl_check: got an MPIJob check with mpi_operator=False"):
        deploy(settings=settings, mpi_operator=False)


@pytest.mark.parametrize("mode", [devices.PLUGINS, devices.DRA])
def test_the_checks_claim_devices_in_the_layers_device_mode(mode: str) -> None:
    """The mode is derived once from the settings: DRA claim templates and DRANET in DRA mode only, and the chart values
    follow the same mode (no program can hand the checks another one)."""
    recorded = deploy(settings=layer_settings("gb200-x72", {"ultraserver-eks:kubernetes": {"devices": mode}}))
    templates = recorded.of_type("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")
    assert bool(templates) == (mode == devices.DRA)
    charts_ = {r.inputs["chart"].rsplit("/", 1)[-1] for r in recorded.of_type(RELEASE)}
    assert ("aws-dranet" in charts_) == (mode == devices.DRA) != ("aws-efa-k8s-device-plugin" in charts_)
    values = one(recorded, RELEASE, "gpu-operator").inputs["values"]
    assert values["devicePlugin"]["enabled"] == (mode == devices.PLUGINS)


def claimed_classes(plan: Plan) -> set[str]:
    """Every DeviceClass a pod of the plan's jobs claims: the ResourceClaimTemplates the layer declares, and the channel
    of each ComputeDomain (the DRA driver makes its claim template: facts.hardware.devices.channel_claim_spec)."""
    specs = [t.inputs["spec"]["spec"] for t in plan.of_type("kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")]
    if plan.of_type("kubernetes:resource.nvidia.com/v1beta1:ComputeDomain"):
        specs.append(devices.channel_claim_spec())
    return {r["exactly"]["deviceClassName"] for spec in specs for r in spec["devices"]["requests"]}


@pytest.mark.parametrize("stack", ["gb200-x72", "gb200-multi"])
@pytest.mark.parametrize(("mode", "version"), [("plugins", "1.33"), ("plugins", "1.35"), ("dra", "1.35")])
def test_the_cluster_queue_maps_and_holds_every_device_class_the_layer_claims(
    stack: str, mode: str, version: str
) -> None:
    """What a queued job claims is what Kueue counts: each DeviceClass the layer's jobs claim is mapped in Kueue's
    configuration and has quota in the ClusterQueue's flavor (Kueue refuses an unmapped class, "DeviceClass %s is not
    mapped in DRA configuration", kueue pkg/dra/claims.go), on every minor where Kueue counts claims."""
    changes = {
        "ultraserver-eks:kubernetes": {"devices": mode},
        "ultraserver-eks:cluster": {"kubernetesVersion": version},
    }
    plan = deploy(settings=layer_settings(stack, changes))
    claimed = claimed_classes(plan)
    assert devices.CHANNEL_DEVICE_CLASS in claimed and (devices.GPU_DEVICE_CLASS in claimed) == (mode == "dra")
    values = one(plan, RELEASE, "kueue").inputs["values"]
    config = yaml.safe_load(values["managerConfig"]["controllerManagerConfigYaml"])
    mappings = {c: m["name"] for m in config["resources"].get("deviceClassMappings", []) for c in m["deviceClassNames"]}
    queue = one(plan, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue").inputs["spec"]["resourceGroups"][0]
    quota = {r["name"]: r["nominalQuota"] for r in queue["flavors"][0]["resources"]}
    if not kueue_facts.counts_dra_claims(version):
        assert mappings == {} and "featureGates" in config  # Kueue ignores claims there: nothing to map
        return
    assert claimed <= set(mappings), f"unmapped: {claimed - set(mappings)}"
    assert all(quota[mappings[c]] > 0 and mappings[c] in queue["coveredResources"] for c in claimed)


def test_a_program_hands_the_layer_settings_and_wiring_only() -> None:
    """Nothing a program passes can disagree with the settings: no check, queue or device mode of its own."""
    assert list(inspect.signature(KubernetesLayerArgs).parameters) == [
        "settings",
        "provider",
        "depends_on",
        "termination_queue_url",
        "warning_queue_url",
        "alert_topic_arn",  # the platform's topic the drain pages (an output, not a setting)
        "mpi_operator",
        "now",
    ]
