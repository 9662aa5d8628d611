"""The offline plan: its JSON contract, recorded inputs and dependency edges, the cluster it declares."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers.stacks import ROOT, STACKS, stack_config
from ultraserver.facts.pins import charts
from ultraserver.offline import run_plan
from ultraserver.offline.graph import edges, mermaid
from ultraserver.problems import WARNING


@pytest.mark.parametrize("stack", STACKS)
def test_plan_json_contract(shipped_plan, stack: str) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(json.dumps(shipped_plan(stack).to_json()))
    assert set(data) == {"project", "stack", "resources", "policies"}
    assert data["project"] == "ultraserver-eks" and data["stack"] == stack
    urns = {r["urn"] for r in data["resources"]}
    for resource in data["resources"]:
        assert set(resource) == {
            "urn",
            "type",
            "name",
            "parent",
            "inputs",
            "dependencies",
            "protect",
            "retainOnDelete",
            "ignoreChanges",
            "aliases",
        }
        assert resource["parent"] in urns or resource["type"] == "pulumi:pulumi:Stack"
        assert set(resource["dependencies"]) <= urns, resource["name"]


def test_eks_add_ons_carry_the_pinned_version_of_the_cluster_minor(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    from ultraserver.facts.pins import addons

    plan = shipped_plan("gb200-x72")
    declared = {r.inputs["addonName"]: r.inputs.get("addonVersion") for r in plan.of_type("aws:eks/addon:Addon")}
    cluster = plan.of_type("eks:index:Cluster")[0].inputs
    declared[addons.VPC_CNI] = cluster["vpcCniOptions"].get("addonVersion")
    declared[addons.KUBE_PROXY] = cluster["kubeProxyAddonOptions"].get("version")
    for name, version in declared.items():
        assert version == (addons.pinned_version(name, "1.35") or None), name
    assert declared[addons.COREDNS] == "v1.14.3-eksbuild.3"


def test_inputs_are_recorded_as_the_engine_receives_them(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x72")
    node_group = next(r for r in plan.of_type("aws:eks/nodeGroup:NodeGroup") if r.name.endswith("-system"))
    assert node_group.inputs["scalingConfig"] == {"desiredSize": 2, "minSize": 2, "maxSize": 4}
    assert isinstance(node_group.inputs["scalingConfig"]["desiredSize"], int)
    assert node_group.inputs["clusterName"] == "gb200-x72"


def test_cluster_is_eks_135_with_api_access_entries_encryption_and_no_auto_mode(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    cluster = shipped_plan("gb200-x72").of_type("eks:index:Cluster")[0].inputs
    assert cluster["version"] == "1.35"
    assert cluster["authenticationMode"] == "API"
    assert cluster["skipDefaultNodeGroup"] is True
    assert cluster["autoMode"]["enabled"] is False
    assert cluster["encryptionConfigKeyArn"].startswith("arn:")
    assert cluster["createOidcProvider"] is False  # Pod Identity carries the roles; IRSA is the setting cluster.irsa
    # gb200-x72 creates its VPC: its first deploy reaches a public endpoint limited to the deployer's CIDRs.
    assert cluster["endpointPrivateAccess"] is True and cluster["endpointPublicAccess"] is True
    assert cluster["publicAccessCidrs"] == ["203.0.113.0/24"]
    (association,) = shipped_plan("gb200-x72").of_type("aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    assert association.inputs["principalArn"] == "arn:aws:iam::111122223333:role/PlatformAdmin"
    assert association.inputs["accessScope"] == {"type": "cluster"}


def test_public_endpoint_only_with_the_stack_cidrs(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    cluster = shipped_plan("gb200-x36").of_type("eks:index:Cluster")[0].inputs
    assert cluster["endpointPublicAccess"] is True
    assert cluster["publicAccessCidrs"] == ["203.0.113.0/24"]


def test_secrets_key_rotates_and_kubeconfig_is_secret(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x72")
    assert plan.of_type("aws:kms/key:Key")[0].inputs["enableKeyRotation"] is True
    provider = plan.of_type("pulumi:providers:kubernetes")[0]
    assert provider.inputs["kubeconfig"] == "[secret]"


def test_system_nodes_wait_for_cluster_and_role_policies(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x72")
    by_urn = plan.by_urn()
    system = next(r for r in plan.of_type("aws:eks/nodeGroup:NodeGroup") if r.name.endswith("-system"))
    dep_types = {by_urn[d].type for d in system.dependencies}
    assert "eks:index:Cluster" in dep_types
    assert "aws:iam/rolePolicyAttachment:RolePolicyAttachment" in dep_types
    template = next(by_urn[d] for d in system.dependencies if by_urn[d].type == "aws:ec2/launchTemplate:LaunchTemplate")
    assert template.inputs["metadataOptions"]["httpTokens"] == "required"
    assert template.inputs["blockDeviceMappings"][0]["ebs"]["encrypted"] == "true"


@pytest.mark.parametrize("stack", STACKS)
def test_node_roles_leave_the_cni_policy_to_pod_identity(shipped_plan, stack: str) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan(stack)
    by_urn = plan.by_urn()
    cni = "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"
    roles = {r.urn: r for r in plan.of_type("aws:iam/role:Role")}
    attached: dict[str, set[str]] = {}
    for attachment in plan.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment"):
        (role,) = [d for d in attachment.dependencies if d in roles]
        attached.setdefault(role, set()).add(attachment.inputs["policyArn"])
    node_roles = [u for u, r in roles.items() if "ec2.amazonaws.com" in r.inputs["assumeRolePolicy"]]
    assert node_roles
    for urn in node_roles:
        assert attached[urn] == {
            "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
            "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
        }
    # No inline policy on a node role (the termination handler's own pod-identity role has one).
    assert not [p for p in plan.of_type("aws:iam/rolePolicy:RolePolicy") if set(p.dependencies) & set(node_roles)]
    # The VPC CNI gets its permissions through EKS Pod Identity: kube-system/aws-node, a pods.eks.amazonaws.com role.
    (association,) = [
        a
        for a in plan.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")
        if a.inputs["serviceAccount"] == "aws-node"
    ]
    assert (association.inputs["namespace"], association.inputs["serviceAccount"]) == ("kube-system", "aws-node")
    (cni_role,) = [u for u, policies in attached.items() if cni in policies]
    assert "pods.eks.amazonaws.com" in roles[cni_role].inputs["assumeRolePolicy"]
    assert "sts:TagSession" in roles[cni_role].inputs["assumeRolePolicy"]
    # Every node group waits for it (and for the Pod Identity agent): aws-node needs it before a node turns Ready.
    agent = next(a for a in plan.of_type("aws:eks/addon:Addon") if a.inputs["addonName"] == "eks-pod-identity-agent")
    for group in plan.of_type("aws:eks/nodeGroup:NodeGroup") + plan.of_type("aws:autoscaling/group:Group"):
        assert {association.urn, agent.urn} <= set(group.dependencies), group.name
        assert by_urn[association.urn].type.endswith("PodIdentityAssociation")


@pytest.mark.parametrize("stack", STACKS)
def test_gpu_nodes_imds_hop_limit_is_one(shipped_plan, stack: str) -> None:  # type: ignore[no-untyped-def]
    for template in shipped_plan(stack).of_type("aws:ec2/launchTemplate:LaunchTemplate"):
        assert template.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 1, template.name


def test_imds_hop_limit_two_on_request(plan_with) -> None:  # type: ignore[no-untyped-def]
    plan = plan_with(
        "gb200-x72",
        {"gpuNodeGroups": [{**stack_config("gb200-x72")["ultraserver-eks:gpuNodeGroups"][0], "imdsHopLimit": 2}]},
    )
    gpu = next(t for t in plan.of_type("aws:ec2/launchTemplate:LaunchTemplate") if t.name.endswith("-nvl72"))
    assert gpu.inputs["metadataOptions"]["httpPutResponseHopLimit"] == 2


def test_addon_versions_reach_the_cluster(plan_with) -> None:  # type: ignore[no-untyped-def]
    overrides = {"vpcCni": "v1.20.4-eksbuild.1", "podIdentityAgent": "v1.3.8-eksbuild.2"}
    plan = plan_with("gb200-x72", {"addons": overrides, "acceptUntestedVersions": True})
    cluster = plan.of_type("eks:index:Cluster")[0].inputs
    assert cluster["vpcCniOptions"]["addonVersion"] == "v1.20.4-eksbuild.1"
    addons = {a.inputs["addonName"]: a.inputs for a in plan.of_type("aws:eks/addon:Addon")}
    assert addons["eks-pod-identity-agent"]["addonVersion"] == "v1.3.8-eksbuild.2"


def test_graph_shows_cluster_before_node_groups(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x72")
    labels, pairs = edges(plan)
    named = {(labels[a], labels[b]) for a, b in pairs}
    assert ("gb200-x72 (eks:Cluster)", "gb200-x72-system (aws:NodeGroup)") in named
    text = mermaid(plan)
    assert text.startswith("flowchart LR") and "-->" in text


def test_plans_are_repeatable(repo_root) -> None:  # type: ignore[no-untyped-def]
    from ultraserver.offline import run_plan

    first = run_plan(repo_root, "gb200-x72").to_json()
    second = run_plan(repo_root, "gb200-x72").to_json()
    assert first == second


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the installed CLI module as a user would."""
    return subprocess.run(
        [sys.executable, "-m", "ultraserver", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_cli_plan_writes_json_and_graph(tmp_path) -> None:  # type: ignore[no-untyped-def]
    out, graph, dotfile = tmp_path / "plan.json", tmp_path / "plan.mmd", tmp_path / "plan.dot"
    result = run_cli("plan", "--stack", "gb200-x72", "--json", str(out), "--graph", str(graph))
    assert result.returncode == 0, result.stderr
    assert "Resources:" in result.stdout and "eks:index:Cluster gb200-x72" in result.stdout
    assert "Traceback" not in result.stderr
    assert json.loads(out.read_text())["stack"] == "gb200-x72"
    assert graph.read_text().startswith("flowchart LR")
    assert run_cli("plan", "--stack", "gb200-x72", "--graph", str(dotfile)).returncode == 0
    assert dotfile.read_text().startswith("digraph plan {")


def test_cli_rejects_bad_settings_with_exit_2_and_no_traceback(tmp_path) -> None:  # type: ignore[no-untyped-def]
    project = tmp_path / "proj"
    (project / "stacks").mkdir(parents=True)
    (project / "Pulumi.yaml").write_text((ROOT / "Pulumi.yaml").read_text())
    (project / "__main__.py").write_text((ROOT / "__main__.py").read_text())
    stack = (
        (ROOT / "stacks" / "Pulumi.gb200-x72.yaml")
        .read_text()
        .replace('kubernetesVersion: "1.35"', 'kubernetesVersion: "1.29"')
    )
    (project / "stacks" / "Pulumi.bad.yaml").write_text(stack)
    result = run_cli("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.returncode == 2
    assert "ultraserver-eks:cluster.kubernetesVersion  '1.29'\n" in result.stderr
    assert "Traceback" not in result.stderr and "Resources:" not in result.stdout


def test_cli_unknown_stack_lists_the_known_ones() -> None:
    result = run_cli("plan", "--stack", "nope")
    assert result.returncode == 2
    assert "gb200-x72" in result.stderr and "Traceback" not in result.stderr


def test_architecture_graph_is_the_generated_one(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    doc = (ROOT / "docs" / "architecture.md").read_text()
    block = doc.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert block == mermaid(shipped_plan("gb200-x72")), "regenerate: PYTHONPATH=components python scripts/regen_docs.py"


def test_multi_ultraserver_stack_plans_one_group_per_ultraserver_plus_the_grouped_fleet(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    from ultraserver.offline.report import gpu_groups, plan_warnings, summary

    plan = shipped_plan("gb200-multi")
    groups = {g.resource.name: g for g in gpu_groups(plan)}
    assert sorted(groups) == [
        "gb200-multi-fleet",
        "gb200-multi-nvl72-1",
        "gb200-multi-nvl72-2",
        "gb200-multi-nvl72-3",
        "gb200-multi-nvl72-4",
    ]
    assert groups["gb200-multi-fleet"].full_size == 8 * 18
    assert all(groups[f"gb200-multi-nvl72-{i}"].full_size == 18 for i in range(1, 5))
    templates = {r.name: r.inputs for r in plan.of_type("aws:ec2/launchTemplate:LaunchTemplate")}
    targets = {
        n: t["capacityReservationSpecification"]["capacityReservationTarget"]
        for n, t in templates.items()
        if "capacityReservationSpecification" in t
    }
    assert targets["gb200-multi-nvl72-2"] == {"capacityReservationId": "cr-0b00000000000000b"}
    assert set(targets["gb200-multi-fleet"]) == {"capacityReservationResourceGroupArn"}
    # gb200-multi installs its Kubernetes layer from the kubernetes-layer/ project (kubernetes.layer: separate-stack).
    layer = run_plan(ROOT / "kubernetes-layer", "gb200-multi")
    jobs = sorted(r.inputs["metadata"]["name"] for r in layer.resources if r.inputs.get("kind") == "MPIJob")
    nvlink = [f"nvbandwidth-fleet-{i}" for i in range(1, 9)] + [f"nvbandwidth-nvl72-{i}" for i in range(1, 5)]
    assert [j for j in jobs if j.startswith("nvbandwidth-")] == sorted(nvlink)
    assert [j for j in jobs if not j.startswith("nvbandwidth-")] == ["nccl-efa"]  # EFA across UltraServers
    text = summary(plan)
    assert "216 GPU in 5 GPU node groups" in text and "GPUs: 864" in text
    assert plan_warnings(plan) == []


def test_plan_warns_past_the_managed_node_group_quota(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    from ultraserver.offline.report import plan_warnings

    (found,) = plan_warnings(shipped_plan("gb200-multi"), quota=4)
    # Four managed GPU groups (one per UltraServer) plus the system group; the self-managed fleet counts for none.
    assert found.level == WARNING
    assert str(found).startswith(
        "EKS cluster: got 5 managed node groups; allowed: at most 4, the default EKS quota 'Managed node groups per "
        "cluster'"
    )
    assert "--quota-code L-6D54EA21" in found.fix


@pytest.mark.parametrize("stack", [s for s in STACKS if s != "gb200-multi"])  # gb200-multi: separate-stack layer
def test_helm_releases_never_wait_for_gpu_node_groups(shipped_plan, stack: str) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan(stack)
    by_urn = plan.by_urn()
    gpu_side = {r.urn for r in plan.resources if "GpuNodeGroup" in r.urn}

    def waits_for(urn: str, seen: set[str]) -> set[str]:
        for dep in by_urn[urn].dependencies:
            if dep not in seen:
                seen.add(dep)
                waits_for(dep, seen)
        return seen

    for release in plan.of_type("kubernetes:helm.sh/v3:Release"):
        assert not waits_for(release.urn, set()) & gpu_side, release.name
    releases = {r.inputs["chart"].rsplit("/", 1)[-1]: r for r in plan.of_type("kubernetes:helm.sh/v3:Release")}
    dra, operator = releases[charts.DRA_DRIVER], releases[charts.GPU_OPERATOR]
    # The GPU Operator waits for all the DRA driver waits for (its CRDs: the operator's crds/ ships older copies), and
    # neither release waits for the other.
    assert set(dra.dependencies) <= set(operator.dependencies)
    assert dra.urn not in operator.dependencies and operator.urn not in dra.dependencies


def test_gpu_nodes_wait_for_the_control_plane_security_group_rules(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x72")
    rules = {
        r.urn
        for r in plan.of_type("aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
        if r.name.endswith(("-efa-from-cluster", "-cluster-from-efa"))
    }
    assert len(rules) == 2
    for kind in ("aws:eks/nodeGroup:NodeGroup", "aws:ec2/launchTemplate:LaunchTemplate"):
        gpu = next(r for r in plan.of_type(kind) if r.name == "gb200-x72-nvl72")
        assert rules <= set(gpu.dependencies), kind


@pytest.mark.parametrize("version", ["1.33", "1.34", "1.35", "1.36"])
@pytest.mark.parametrize("stack", ["gb200-x72", "gb200-x36"])
def test_each_supported_version_plans_cleanly_on_a_pinned_ami(plan_with, stack: str, version: str) -> None:  # type: ignore[no-untyped-def]
    from ultraserver.facts.pins.ami import RELEASE_VERSIONS
    from ultraserver.policy import MANDATORY, evaluate

    config = stack_config(stack)
    groups = [{k: v for k, v in g.items() if k != "releaseVersion"} for g in config["ultraserver-eks:gpuNodeGroups"]]
    cluster = {**config["ultraserver-eks:cluster"], "kubernetesVersion": version}
    plan = plan_with(stack, {"cluster": cluster, "gpuNodeGroups": groups})
    assert [v for v in evaluate(plan.resources) if v.level == MANDATORY] == []
    release = RELEASE_VERSIONS[version]
    managed = [g for g in plan.of_type("aws:eks/nodeGroup:NodeGroup") if not g.name.endswith("-system")]
    for group in managed:
        assert (group.inputs["amiType"], group.inputs["releaseVersion"]) == ("AL2023_ARM_64_NVIDIA", release)
    # Nothing follows "recommended": the only SSM reads are the pinned release's own parameter.
    assert all("recommended" not in call for call in plan.placeholders)
    if not managed:
        assert any(f"nvidia-{version}-v{release[-8:]}/image_id" in call for call in plan.placeholders)


def test_node_monitoring_agent_addon_waits_for_the_system_nodes(shipped_plan, plan_with) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x72")
    (agent,) = [r for r in plan.of_type("aws:eks/addon:Addon") if r.inputs["addonName"] == "eks-node-monitoring-agent"]
    (system,) = [r for r in plan.of_type("aws:eks/nodeGroup:NodeGroup") if r.name.endswith("-system")]
    assert system.urn in agent.dependencies
    off = plan_with("gb200-x72", {"health": {"nodeMonitoringAgent": False}})
    assert sorted(r.inputs["addonName"] for r in off.of_type("aws:eks/addon:Addon")) == [
        "coredns",
        "eks-pod-identity-agent",
    ]


def test_drift_cron_job_is_planned_and_can_be_turned_off(shipped_plan, plan_with) -> None:  # type: ignore[no-untyped-def]
    def drift(plan):  # type: ignore[no-untyped-def]
        return [c for c in plan.of_type("kubernetes:batch/v1:CronJob") if "drift" in c.name]

    (cron,) = drift(shipped_plan("gb200-x72"))
    assert cron.inputs["spec"]["schedule"] == "*/30 * * * *"
    hourly = plan_with("gb200-x72", {"health": {"driftCheck": {"schedule": "0 * * * *"}}})
    assert drift(hourly)[0].inputs["spec"]["schedule"] == "0 * * * *"
    off = plan_with("gb200-x72", {"health": {"driftCheck": {"enabled": False}}})
    assert drift(off) == []


def test_prometheus_stack_is_planned_only_when_enabled(shipped_plan, plan_with) -> None:  # type: ignore[no-untyped-def]
    def charts(plan):  # type: ignore[no-untyped-def]
        return {r.inputs["chart"] for r in plan.of_type("kubernetes:helm.sh/v3:Release")}

    assert "kube-prometheus-stack" not in charts(shipped_plan("gb200-x72"))
    on = plan_with("gb200-x72", {"kubernetes": {"prometheusStack": {"enabled": True}}})
    assert "kube-prometheus-stack" in charts(on)
    (operator,) = [r for r in on.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == "gpu-operator"]
    assert operator.inputs["values"]["dcgmExporter"]["serviceMonitor"] == {"enabled": True}
