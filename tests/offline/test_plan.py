"""The offline plan: its JSON contract, recorded inputs and dependency edges, the cluster it declares."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers.stacks import ROOT, STACKS
from ultraserver.offline.graph import edges, mermaid


@pytest.mark.parametrize("stack", STACKS)
def test_plan_json_contract(shipped_plan, stack: str) -> None:  # type: ignore[no-untyped-def]
    data = json.loads(json.dumps(shipped_plan(stack).to_json()))
    assert set(data) == {"project", "stack", "resources", "policies"}
    assert data["project"] == "ultraserver-eks" and data["stack"] == stack
    urns = {r["urn"] for r in data["resources"]}
    for resource in data["resources"]:
        assert set(resource) == {"urn", "type", "name", "parent", "inputs", "dependencies"}
        assert resource["parent"] in urns or resource["type"] == "pulumi:pulumi:Stack"
        assert set(resource["dependencies"]) <= urns, resource["name"]


def test_inputs_are_recorded_as_the_engine_receives_them(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x72")
    node_group = next(r for r in plan.of_type("aws:eks/nodeGroup:NodeGroup") if r.name.endswith("-system"))
    assert node_group.inputs["scalingConfig"] == {"desiredSize": 2, "minSize": 2, "maxSize": 4}
    assert isinstance(node_group.inputs["scalingConfig"]["desiredSize"], int)
    assert node_group.inputs["clusterName"] == "gb200-x72"


def test_cluster_is_eks_133_with_api_access_entries_encryption_and_no_auto_mode(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    cluster = shipped_plan("gb200-x72").of_type("eks:index:Cluster")[0].inputs
    assert cluster["version"] == "1.33"
    assert cluster["authenticationMode"] == "API"
    assert cluster["skipDefaultNodeGroup"] is True
    assert cluster["autoMode"]["enabled"] is False
    assert cluster["encryptionConfigKeyArn"].startswith("arn:")
    assert cluster["createOidcProvider"] is True
    assert cluster["endpointPrivateAccess"] is True and cluster["endpointPublicAccess"] is False
    assert "publicAccessCidrs" not in cluster
    entry = cluster["accessEntries"]["admin-0"]
    assert entry["principalArn"] == "arn:aws:iam::111122223333:role/PlatformAdmin"
    assert entry["accessPolicies"]["cluster-admin"]["accessScope"] == {"type": "cluster"}


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


def test_node_role_has_only_managed_worker_policies(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-x72")
    arns = {r.inputs["policyArn"] for r in plan.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")}
    assert arns <= {
        "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
        "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
        "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy",
    }
    assert not plan.of_type("aws:iam/rolePolicy:RolePolicy")


def test_addon_versions_reach_the_cluster(plan_with) -> None:  # type: ignore[no-untyped-def]
    plan = plan_with("gb200-x72", {"addons": {"vpcCni": "v1.20.4-eksbuild.1", "podIdentityAgent": "v1.3.8-eksbuild.2"}})
    cluster = plan.of_type("eks:index:Cluster")[0].inputs
    assert cluster["vpcCniOptions"]["addonVersion"] == "v1.20.4-eksbuild.1"
    addon = plan.of_type("aws:eks/addon:Addon")[0].inputs
    assert addon["addonName"] == "eks-pod-identity-agent" and addon["addonVersion"] == "v1.3.8-eksbuild.2"


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
        .replace('kubernetesVersion: "1.33"', 'kubernetesVersion: "1.29"')
    )
    (project / "stacks" / "Pulumi.bad.yaml").write_text(stack)
    result = run_cli("plan", "--stack", "bad", "--project-dir", str(project))
    assert result.returncode == 2
    assert "cluster.kubernetesVersion: got '1.29'" in result.stderr
    assert "Traceback" not in result.stderr and "Resources:" not in result.stdout


def test_cli_unknown_stack_lists_the_known_ones() -> None:
    result = run_cli("plan", "--stack", "nope")
    assert result.returncode == 2
    assert "gb200-x72" in result.stderr and "Traceback" not in result.stderr


def test_readme_architecture_graph_is_the_generated_one(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    readme = (ROOT / "README.md").read_text()
    block = readme.split("```mermaid\n", 1)[1].split("```", 1)[0]
    assert block == mermaid(shipped_plan("gb200-x72")), (
        "regenerate: ultraserver plan --stack gb200-x72 --graph plan.mmd"
    )


def test_multi_ultraserver_stack_plans_one_group_per_ultraserver_plus_the_grouped_fleet(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    from ultraserver.offline.report import gpu_groups, summary

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
    text = summary(plan)
    assert "216 GPU in 5 GPU node groups" in text and "GPUs: 864" in text and "WARNING" not in text


def test_summary_warns_past_the_managed_node_group_quota(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    from ultraserver.offline.report import summary

    text = summary(shipped_plan("gb200-multi"), quota=4)
    assert "WARNING: 5 managed node groups exceed the EKS quota of 4" in text


def test_helm_releases_never_wait_for_gpu_node_groups(shipped_plan) -> None:  # type: ignore[no-untyped-def]
    plan = shipped_plan("gb200-multi")
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
    dra = next(r for r in plan.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == "nvidia-dra-driver-gpu")
    operator = next(r for r in plan.of_type("kubernetes:helm.sh/v3:Release") if r.inputs["chart"] == "gpu-operator")
    assert operator.urn in dra.dependencies


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
