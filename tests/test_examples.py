"""The example programs, run as they are under the offline plan, declare what their READMEs promise."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

import kubernetes_validate
import pytest
import yaml
from helpers.manifests import K8S_VERSION, as_pod, validate_custom, whole_node_gpus
from helpers.modules import load_file
from ultraserver.builders.compute_domain import CLIQUE_LABEL
from ultraserver.facts.kubernetes.scheduling import GPU_TOLERATION, ULTRASERVER_LABEL
from ultraserver.offline import Plan, PlanResource, run_plan
from ultraserver.problems import ConfigError

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TRAINING = EXAMPLES / "compute-domain-job"
CUSTOM = EXAMPLES / "custom-platform"
COMPUTE_DOMAIN = "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain"
JOB = "kubernetes:batch/v1:Job"
RELEASE = "kubernetes:helm.sh/v3:Release"


def stack_file(example: Path) -> dict[str, Any]:
    """The config of an example's dev stack, keys without the project prefix."""
    config = yaml.safe_load((example / "Pulumi.dev.yaml").read_text())["config"]
    return {key.split(":", 1)[1]: value for key, value in config.items()}


def only(plan: Plan, resource_type: str) -> PlanResource:
    """The single resource of a type."""
    (resource,) = plan.of_type(resource_type)
    return resource


def as_object(resource: PlanResource) -> dict[str, Any]:
    """A recorded Kubernetes resource as the object the API server receives."""
    return {k: v for k, v in resource.inputs.items() if k in ("apiVersion", "kind", "metadata", "spec", "data")}


def training_module() -> ModuleType:
    """The example's manifest module, loaded from its file as the example's program imports it."""
    return load_file(TRAINING / "training_job.py", "training_job")


@pytest.fixture(scope="module")
def training() -> Plan:
    """Offline plan of the training example's dev stack."""
    return run_plan(TRAINING, "dev")


@pytest.fixture(scope="module")
def custom() -> Plan:
    """Offline plan of the custom-platform example's dev stack."""
    return run_plan(CUSTOM, "dev")


def test_training_reaches_the_cluster_through_the_stack_reference(training: Plan) -> None:
    provider = only(training, "pulumi:providers:kubernetes")
    wanted = stack_file(TRAINING)["clusterStack"]
    (reference,) = provider.dependencies
    assert reference.endswith(f"$pulumi:pulumi:StackReference::{wanted}")
    token = provider.inputs["kubeconfig"]["users"][0]["user"]["exec"]["args"]
    assert token[token.index("--cluster-name") + 1] == wanted.rsplit("/", 1)[-1]


def test_training_job_waits_for_its_compute_domain(training: Plan) -> None:
    domain, job = only(training, COMPUTE_DOMAIN), only(training, JOB)
    assert domain.urn in job.dependencies
    namespace = only(training, "kubernetes:core/v1:Namespace")
    assert namespace.urn in domain.dependencies
    assert {domain.inputs["metadata"]["namespace"], job.inputs["metadata"]["namespace"]} == {
        namespace.inputs["metadata"]["name"]
    }


def test_training_pods_join_the_domain_and_one_nvlink_clique(training: Plan) -> None:
    domain, job = only(training, COMPUTE_DOMAIN), only(training, JOB)
    template = job.inputs["spec"]["template"]
    pod = template["spec"]
    (claim,) = pod["resourceClaims"]
    assert claim["resourceClaimTemplateName"] == domain.inputs["spec"]["channel"]["resourceClaimTemplate"]["name"]
    (container,) = pod["containers"]
    assert container["resources"]["claims"] == [{"name": claim["name"]}]
    (term,) = pod["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["topologyKey"] == CLIQUE_LABEL
    selected = {e["key"]: e["values"][0] for e in term["labelSelector"]["matchExpressions"]}
    assert selected == template["metadata"]["labels"]


def test_training_job_fills_whole_nodes_of_the_chosen_ultraserver(training: Plan) -> None:
    config = stack_file(TRAINING)
    spec = only(training, JOB).inputs["spec"]
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"] == config["workers"]
    pod = spec["template"]["spec"]
    assert pod["nodeSelector"] == {ULTRASERVER_LABEL: config["ultraserver"]}
    assert GPU_TOLERATION in pod["tolerations"]
    (container,) = pod["containers"]
    assert container["resources"]["limits"] == {"nvidia.com/gpu": 4, "vpc.amazonaws.com/efa": 4}
    assert f"--nnodes={config['workers']}" in container["args"]
    # Rank 0's pod name resolves through the headless Service the pods' subdomain names.
    service = only(training, "kubernetes:core/v1:Service")
    assert service.inputs["spec"]["clusterIP"] == "None"
    assert pod["subdomain"] == service.inputs["metadata"]["name"]
    assert service.inputs["spec"]["selector"] == spec["template"]["metadata"]["labels"]
    master = next(a for a in container["args"] if a.startswith("--master_addr="))
    assert master == f"--master_addr={only(training, JOB).inputs['metadata']['name']}-0.{pod['subdomain']}"


def test_training_job_is_submitted_through_kueue_inside_one_clique(training: Plan) -> None:
    job = only(training, JOB)
    queue = only(training, "kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue")
    assert job.inputs["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == queue.inputs["metadata"]["name"]
    assert queue.inputs["metadata"]["namespace"] == job.inputs["metadata"]["namespace"]
    assert queue.inputs["spec"] == {"clusterQueue": "gb200"}
    assert queue.urn in job.dependencies
    validate_custom(as_object(queue))
    annotations = job.inputs["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {"kueue.x-k8s.io/podset-required-topology": CLIQUE_LABEL}
    # The pods keep their own ComputeDomain claim: one ComputeDomain per job.
    assert len(list(training.of_type(COMPUTE_DOMAIN))) == 1


def test_training_job_without_a_queue_goes_straight_to_the_scheduler() -> None:
    plan = run_plan(TRAINING, "dev", {"ultraserver-example-training:queueName": ""})
    job = only(plan, JOB)
    assert "kueue.x-k8s.io/queue-name" not in job.inputs["metadata"]["labels"]
    assert "annotations" not in job.inputs["spec"]["template"]["metadata"]
    assert not list(plan.of_type("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"))
    shared = run_plan(TRAINING, "dev", {"ultraserver-example-training:createLocalQueue": "false"})
    assert not list(shared.of_type("kubernetes:kueue.x-k8s.io/v1beta2:LocalQueue"))
    assert only(shared, JOB).inputs["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "gb200"


def test_training_script_is_the_examples_file(training: Plan) -> None:
    config_map = only(training, "kubernetes:core/v1:ConfigMap")
    assert config_map.inputs["data"]["train.py"] == (TRAINING / "train.py").read_text()
    volumes = {v["name"]: v for v in only(training, JOB).inputs["spec"]["template"]["spec"]["volumes"]}
    assert volumes["script"]["configMap"]["name"] == config_map.inputs["metadata"]["name"]
    assert config_map.urn in only(training, JOB).dependencies


def test_training_objects_are_valid_kubernetes_1_33(training: Plan) -> None:
    for resource_type in (
        JOB,
        "kubernetes:core/v1:Service",
        "kubernetes:core/v1:ConfigMap",
        "kubernetes:core/v1:Namespace",
    ):
        kubernetes_validate.validate(as_object(only(training, resource_type)), K8S_VERSION, strict=True)
    validate_custom(as_object(only(training, COMPUTE_DOMAIN)))


def test_training_job_builder_output_is_valid_kubernetes() -> None:
    module = training_module()
    job = module.TrainingJob(ultraserver="nvl36", workers=9, efa_devices=0)
    manifest = module.job_manifest(job)
    kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
    pod = as_pod(manifest["spec"]["template"], f"{job.name}-0", job.namespace)
    kubernetes_validate.validate(pod, K8S_VERSION, strict=True)
    # No EFA devices asked for: the pod does not request the resource at all.
    assert "vpc.amazonaws.com/efa" not in manifest["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]


def test_training_rejects_a_job_larger_than_an_ultraserver() -> None:
    with pytest.raises(ConfigError) as error:
        run_plan(
            TRAINING, "dev", {"ultraserver-example-training:workers": 19, "ultraserver-example-training:efaDevices": 17}
        )
    assert [p.split(":")[1] for p in [str(p) for p in error.value.items]] == ["workers", "efaDevices"]
    assert "got 19" in str(error.value) and "got 17" in str(error.value)


def test_custom_platform_runs_one_self_managed_ultraserver(custom: Plan) -> None:
    config = stack_file(CUSTOM)
    (group,) = custom.of_type("aws:autoscaling/group:Group")
    assert group.inputs["maxSize"] == 9
    (entry,) = [e for e in custom.of_type("aws:eks/accessEntry:AccessEntry") if e.inputs.get("type") == "EC2_LINUX"]
    assert entry.urn in group.dependencies
    # The only managed node group is the system one; GPU nodes are self-managed.
    (managed,) = custom.of_type("aws:eks/nodeGroup:NodeGroup")
    assert managed.inputs["capacityType"] == "ON_DEMAND"
    template = next(t for t in custom.of_type("aws:ec2/launchTemplate:LaunchTemplate") if t.urn in group.dependencies)
    target = template.inputs["capacityReservationSpecification"]["capacityReservationTarget"]
    assert target["capacityReservationId"] == config["capacityReservationId"]
    efa_cards = [
        i["networkCardIndex"] for i in template.inputs["networkInterfaces"] if i["interfaceType"] == "efa-only"
    ]
    assert efa_cards == list(range(1, 16, 2))  # the all-odd-cards layout of the stack file


def test_custom_platform_gpu_nodes_wait_for_the_cluster_rules(custom: Plan) -> None:
    rules = {
        r.urn
        for r in custom.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
        if "cluster" in r.name
    }
    assert len(rules) == 2
    assert rules <= set(only(custom, "ultraserver:index:GpuNodeGroup").dependencies)


def test_custom_platform_builds_its_own_vpc_with_a_gpu_subnet(custom: Plan) -> None:
    config = stack_file(CUSTOM)
    assert only(custom, "aws:ec2/vpc:Vpc").inputs["cidrBlock"] == config["vpcCidr"]
    zones = {s.inputs["availabilityZone"] for s in custom.of_type("aws:ec2/subnet:Subnet")}
    assert zones == {*config["availabilityZones"], config["gpuZone"]}


def test_custom_platform_installs_gpu_software_without_mpi_or_check(custom: Plan) -> None:
    charts = sorted(r.inputs["chart"].rsplit("/", 1)[-1] for r in custom.of_type(RELEASE))
    assert charts == ["aws-efa-k8s-device-plugin", "dra-driver-nvidia-gpu", "gpu-operator"]
    types = {r.type for r in custom.resources}
    assert not {t for t in types if "MPIJob" in t or "ComputeDomain" in t or "MpiOperator" in t}
    # The only manifests applied are the DRA driver's pinned CRDs.
    applied = [r.name for r in custom.of_type("ultraserver:index:PinnedManifest")]
    assert len(applied) == 2 and all("dra-driver-crd" in name for name in applied)
    assert "ultraserver:index:MpiOperator" not in types and "ultraserver:index:ImexCheck" not in types


def test_custom_platform_rejects_an_unknown_efa_layout() -> None:
    with pytest.raises(ConfigError, match="efaLayout: got 'widest'; allowed: one of one-per-nci-group"):
        run_plan(CUSTOM, "dev", {"ultraserver-example-custom-platform:efaLayout": "widest"})


@pytest.mark.parametrize("example", [TRAINING, CUSTOM], ids=lambda p: p.name)
def test_example_is_a_pulumi_project_of_its_own(example: Path) -> None:
    project = yaml.safe_load((example / "Pulumi.yaml").read_text())
    assert project["runtime"] == "python"
    config = yaml.safe_load((example / "Pulumi.dev.yaml").read_text())["config"]
    assert all(key.split(":")[0] in (project["name"], "aws") for key in config)


@pytest.mark.parametrize("layout", ["one-per-nci-group", "all-odd-cards"])
def test_training_job_in_dra_mode_claims_whole_node_devices_and_is_valid(layout: str) -> None:
    module = training_module()
    job = module.TrainingJob(ultraserver="nvl72", workers=4, devices="dra", efa_layout=layout)
    template = module.device_claim_template(job)
    kubernetes_validate.validate(template, "1.35", strict=True)
    assert whole_node_gpus(template["spec"]["spec"]) == 4
    manifest = module.job_manifest(job)
    spec = manifest["spec"]["template"]["spec"]
    assert [c.get("resourceClaimTemplateName") for c in spec["resourceClaims"]][1] == template["metadata"]["name"]
    assert "limits" not in spec["containers"][0]["resources"]  # no device-plugin resources in DRA mode
    assert spec["containers"][0]["resources"]["requests"]["cpu"]  # the share Kueue's TAS counts
    kubernetes_validate.validate(
        as_pod(manifest["spec"]["template"], f"{job.name}-0", job.namespace), "1.35", strict=True
    )


def test_training_rejects_an_unknown_device_mode() -> None:
    with pytest.raises(ConfigError, match="devices: got 'cdi'"):
        run_plan(TRAINING, "dev", {"ultraserver-example-training:devices": "cdi"})


def test_the_trainer_reads_the_drain_s_notice_where_the_job_mounts_it(training: Plan, tmp_path: Path) -> None:
    """The example job mounts its pod's annotations (downward API) where train.py looks for ``evict-at``, and the
    trainer's parser reads the kubelet's file format (one ``key="value"`` line per annotation)."""
    import ast
    import re as regex
    from datetime import datetime, timezone

    from ultraserver.incluster.drain import EVICT_ANNOTATION

    pod = only(training, JOB).inputs["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    (volume,) = [v for v in pod["volumes"] if "downwardAPI" in v]
    (item,) = volume["downwardAPI"]["items"]
    assert item["fieldRef"]["fieldPath"] == "metadata.annotations"
    (mount,) = [m for m in container["volumeMounts"] if m["name"] == volume["name"]]
    source = (TRAINING / "train.py").read_text()
    tree = ast.parse(source)
    consts = {
        n.targets[0].id: n.value.value
        for n in tree.body
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) and isinstance(n.value, ast.Constant)
    }
    assert consts["NOTICE_FILE"] == f"{mount['mountPath']}/{item['path']}"
    assert consts["EVICT_AT"] == EVICT_ANNOTATION
    # The parser alone (train.py imports torch, which the tests do not install).
    (parser,) = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "eviction_notice"]
    space: dict[str, Any] = {"re": regex, "datetime": datetime, "EVICT_AT": EVICT_ANNOTATION, "NOTICE_FILE": ""}
    exec(compile(ast.Module([parser], []), "train.py", "exec"), space)  # noqa: S102 - the example's own function
    notice = tmp_path / "annotations"
    notice.write_text(f'kubernetes.io/config.seen="x"\n{EVICT_ANNOTATION}="2026-12-15T10:20:00Z"\n')
    assert space["eviction_notice"](str(notice)) == datetime(2026, 12, 15, 10, 20, tzinfo=timezone.utc)
    notice.write_text('kubernetes.io/config.seen="x"\n')
    assert space["eviction_notice"](str(notice)) is None
